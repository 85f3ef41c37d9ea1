//===- Program.cpp - An operator program run through the JIT --------------===//

#include "tools/rudnn-run/Program.h"
#include "tools/rudnn-run/npy/Npy.h"

#include "codegen/InitRudnn.h"
#include "codegen/Transforms/Passes.h"
#include "dialects/IR/RudnnOps.h"
#include "dialects/IR/SourceLimits.h"
#include "lib/reference/KdaReference.h"
#include "runtime/Dump.h"

#include "rudnn/kda.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/DenseMap.h"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <random>
#include <set>
#include <unistd.h>

using namespace rudnn;
using namespace rudnn::run;
namespace fs = std::filesystem;

namespace {

DType dtypeOf(mlir::Type type) {
  if (type.isF32())
    return DType::F32;
  if (type.isF16())
    return DType::F16;
  if (type.isBF16())
    return DType::BF16;
  if (type.isInteger(32))
    return DType::I32;
  if (type.isInteger(1))
    return DType::Bool;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  throw Unsupported("element type " + text + " is not supported");
}

npy::ElementType npyType(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return npy::ElementType::F32;
  case DType::F16:
    return npy::ElementType::F16;
  case DType::BF16:
    return npy::ElementType::BF16;
  case DType::I32:
    return npy::ElementType::I32;
  case DType::Bool:
    return npy::ElementType::Bool;
  }
  return npy::ElementType::F32;
}

int64_t numel(const std::vector<int64_t> &shape) {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

/// The element count of a tensor rudnn-run is to hold on the host, after
/// checking it neither overflows nor exceeds the machine's memory (each
/// value is held as a double, at most a few times over).
int64_t checkedCount(const std::string &name,
                     const std::vector<int64_t> &shape) {
  std::string text;
  for (int64_t dim : shape)
    text += (text.empty() ? "" : ", ") + std::to_string(dim);
  int64_t count = 1;
  for (int64_t dim : shape)
    if (dim < 0 || __builtin_mul_overflow(count, dim, &count))
      throw InvalidArgument("'" + name + "' of shape [" + text +
                            "] has too many elements");
  const double physical = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) *
                          static_cast<double>(::sysconf(_SC_PAGESIZE));
  const double needed = 4.0 * sizeof(double) * static_cast<double>(count);
  if (physical > 0 && needed > physical)
    throw InvalidArgument("'" + name + "' of shape [" + text + "] needs " +
                          std::to_string(static_cast<int64_t>(needed / 1e9)) +
                          " GB of host memory; this machine has " +
                          std::to_string(static_cast<int64_t>(physical / 1e9)) +
                          " GB");
  return count;
}

/// Names become file names under --inputs, --outputs and --save-inputs.
void requireFileName(const std::string &name) {
  if (!runtime::isPlainFileName(name))
    throw InvalidArgument(
        "'" + name +
        "' cannot name a file: names used as file names are letters, "
        "digits, '_', '.' and '-', not starting with '.'");
}

/// `values` rounded to `dtype`, as bytes. Integer tensors go through int64,
/// since converting floating values to integers is refused.
npy::Array encode(const HostTensor &tensor) {
  npy::Array wide;
  wide.shape = tensor.shape;
  if (tensor.dtype == DType::I32) {
    wide.type = npy::ElementType::I64;
    std::vector<int64_t> integers(tensor.values.begin(), tensor.values.end());
    wide.bytes.resize(integers.size() * sizeof(int64_t));
    std::memcpy(wide.bytes.data(), integers.data(), wide.bytes.size());
  } else {
    wide.type = npy::ElementType::F64;
    wide.bytes.resize(tensor.values.size() * sizeof(double));
    std::memcpy(wide.bytes.data(), tensor.values.data(), wide.bytes.size());
  }
  return npy::convert(wide, npyType(tensor.dtype));
}

/// An operand of an operator op: its contract name and dim letters.
struct OperandRole {
  mlir::Value value;
  std::string role, layout;
};

/// The named operands of an operator op, from its contract (absent optional
/// operands are null values); none for other ops.
std::vector<OperandRole> operandRoles(mlir::Operation *op) {
  auto operatorOp = mlir::dyn_cast<mlir::rudnn::OperatorOpInterface>(op);
  if (!operatorOp)
    return {};
  std::vector<OperandRole> roles;
  for (auto [index, tensor] :
       llvm::enumerate(operatorOp.getContract().operands))
    roles.push_back({operatorOp.getContractOperand(index),
                     std::string(tensor.name), std::string(tensor.layout)});
  return roles;
}

/// A value of the program on the device.
struct DeviceValue {
  std::shared_ptr<DeviceBuffer> buffer;
  TensorView view;
};

DeviceValue allocate(Context &context, DType dtype,
                     std::vector<int64_t> shape) {
  DeviceValue value;
  size_t bytes = std::max<size_t>(1, numel(shape) * dtypeSize(dtype));
  value.buffer = std::make_shared<DeviceBuffer>(context, bytes);
  value.view = TensorView::contiguous(value.buffer->data(), dtype, shape);
  return value;
}

std::string describeDiagnostic(mlir::Diagnostic &diagnostic) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << diagnostic.getLocation() << ": " << diagnostic.str();
  return os.str();
}

/// Runs one rudnn.kda_backward through rudnn::kdaBackward, binding its
/// results in `values`.
void runBackward(Context &context, mlir::rudnn::KdaBackwardOp op,
                 llvm::DenseMap<mlir::Value, DeviceValue> &values) {
  KdaBackwardInputs in{{values[op.getQ()].view, values[op.getK()].view,
                        values[op.getV()].view, values[op.getG()].view,
                        values[op.getBeta()].view, std::nullopt},
                       values[op.getDOutput()].view,
                       std::nullopt,
                       std::nullopt};
  if (op.getInitialState())
    in.forward.initialState = values[op.getInitialState()].view;
  if (op.getBoundaries())
    in.boundaries = values[op.getBoundaries()].view;
  if (op.getDFinalState())
    in.dFinalState = values[op.getDFinalState()].view;
  auto like = [&](mlir::Value result, const TensorView &shapeOf) {
    return allocate(context,
                    dtypeOf(mlir::cast<mlir::RankedTensorType>(result.getType())
                                .getElementType()),
                    shapeOf.shape);
  };
  DeviceValue dq = like(op.getDq(), in.forward.q),
              dk = like(op.getDk(), in.forward.k),
              dv = like(op.getDv(), in.forward.v),
              dg = like(op.getDg(), in.forward.g),
              dbeta = like(op.getDbeta(), in.forward.beta), dInitial;
  KdaBackwardOutputs out{dq.view, dk.view, dv.view, dg.view, dbeta.view, {}};
  if (op.getDInitialState()) {
    dInitial = like(op.getDInitialState(), *in.forward.initialState);
    out.dInitialState = dInitial.view;
  }
  KdaOptions options;
  options.scale = static_cast<float>(op.getScaleAttr().getValueAsDouble());
  options.chunk = static_cast<int>(*op.getChunk());
  kdaBackward(context, in, out, options);
  values[op.getDq()] = dq;
  values[op.getDk()] = dk;
  values[op.getDv()] = dv;
  values[op.getDg()] = dg;
  values[op.getDbeta()] = dbeta;
  if (op.getDInitialState())
    values[op.getDInitialState()] = dInitial;
}

/// The float64 gradients of one rudnn.kda_backward, bound in `values`.
void referenceBackward(mlir::rudnn::KdaBackwardOp op,
                       llvm::DenseMap<mlir::Value, HostTensor> &values) {
  const HostTensor &q = values[op.getQ()], &v = values[op.getV()];
  reference::KdaShape shape{q.shape[0], q.shape[1], q.shape[2], q.shape[3],
                            v.shape[3]};
  reference::KdaInputs in{q.values,
                          values[op.getK()].values,
                          v.values,
                          values[op.getG()].values,
                          values[op.getBeta()].values,
                          {}};
  if (op.getInitialState())
    in.initialState = values[op.getInitialState()].values;
  std::vector<double> dFinal;
  if (op.getDFinalState())
    dFinal = values[op.getDFinalState()].values;
  reference::KdaGradients grad =
      reference::kdaBackward(shape, in, op.getScaleAttr().getValueAsDouble(),
                             values[op.getDOutput()].values, dFinal);
  auto bind = [&](mlir::Value result, const HostTensor &shapeOf,
                  std::vector<double> &gradient) {
    values[result] = {"", DType::F32, shapeOf.shape, std::move(gradient)};
  };
  bind(op.getDq(), q, grad.dq);
  bind(op.getDk(), q, grad.dk);
  bind(op.getDv(), v, grad.dv);
  bind(op.getDg(), q, grad.dg);
  bind(op.getDbeta(), values[op.getBeta()], grad.dbeta);
  if (op.getDInitialState())
    bind(op.getDInitialState(), values[op.getInitialState()],
         grad.dInitialState);
}

} // namespace

Program::Program(const std::string &path, const std::string &entry,
                 const std::string &arch) {
  mlir::DialectRegistry registry;
  mlir::rudnn::registerRudnnDialects(registry);
  mlirContext.appendDialectRegistry(registry);
  mlirContext.loadAllAvailableDialects();
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(
      &mlirContext, [&](mlir::Diagnostic &diagnostic) {
        diagnostics += describeDiagnostic(diagnostic) + "\n";
        return mlir::success();
      });
  if (!fs::is_regular_file(path))
    throw InvalidArgument("cannot read '" + path + "'");
  auto file = llvm::MemoryBuffer::getFile(path);
  if (!file)
    throw InvalidArgument("cannot read '" + path +
                          "': " + file.getError().message());
  auto sourceMgr = std::make_shared<llvm::SourceMgr>();
  sourceMgr->AddNewSourceBuffer(std::move(*file), llvm::SMLoc());
  module = mlir::rudnn::parseRudnnSource(sourceMgr, &mlirContext);
  if (!module)
    throw InvalidArgument("'" + path + "' is not valid rudnn IR:\n" +
                          diagnostics);
  mlir::PassManager pm(&mlirContext);
  mlir::rudnn::RudnnSpecializeOptions options;
  options.arch = arch;
  pm.addPass(mlir::rudnn::createRudnnSpecialize(options));
  if (mlir::failed(pm.run(*module)))
    throw InvalidArgument("cannot specialize '" + path + "':\n" + diagnostics);

  auto func = module->lookupSymbol<mlir::func::FuncOp>(entry);
  if (!func || func.isExternal())
    throw InvalidArgument("'" + path + "' has no function @" + entry);
  function = func;

  for (auto [index, argument] : llvm::enumerate(func.getArguments())) {
    auto type = mlir::dyn_cast<mlir::RankedTensorType>(argument.getType());
    if (!type)
      throw Unsupported("argument #" + std::to_string(index) +
                        " is not a ranked tensor");
    Argument arg;
    auto name = func.getArgAttrOfType<mlir::StringAttr>(
        index, mlir::rudnn::RudnnDialect::kNameAttrName);
    arg.name = name ? name.str() : "arg" + std::to_string(index);
    arg.dtype = dtypeOf(type.getElementType());
    for (int64_t dim : type.getShape())
      arg.shape.push_back(mlir::ShapedType::isDynamic(dim) ? -1 : dim);
    for (mlir::Operation *user : argument.getUsers())
      for (const OperandRole &operand : operandRoles(user))
        if (operand.value == argument) {
          arg.role = operand.role;
          arg.layout = operand.layout;
        }
    arguments_.push_back(arg);
  }
  for (unsigned index = 0; index < func.getNumResults(); ++index) {
    auto name = func.getResultAttrOfType<mlir::StringAttr>(
        index, mlir::rudnn::RudnnDialect::kNameAttrName);
    resultNames_.push_back(name ? name.str()
                                : "result" + std::to_string(index));
  }
}

Program::~Program() = default;

std::vector<const OperatorContract *> rudnn::run::operatorContracts() {
  mlir::DialectRegistry registry;
  mlir::rudnn::registerRudnnDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  std::vector<const OperatorContract *> contracts;
  for (mlir::RegisteredOperationName name : context.getRegisteredOperations())
    if (auto *model = name.getInterface<mlir::rudnn::OperatorOpInterface>())
      contracts.push_back(&model->getContract());
  return contracts;
}

std::vector<HostTensor> Program::run(Context &context,
                                     const std::vector<HostTensor> &inputs,
                                     int repeats,
                                     std::vector<double> *milliseconds) const {
  auto func = mlir::cast<mlir::func::FuncOp>(function);
  llvm::DenseMap<mlir::Value, DeviceValue> values;
  for (auto [argument, input] : llvm::zip(func.getArguments(), inputs)) {
    DeviceValue value = allocate(context, input.dtype, input.shape);
    npy::Array bytes = encode(input);
    if (!bytes.bytes.empty()) // empty tensors are the operator's to reject
      context.copyToDevice(value.view.data, bytes.bytes.data(),
                           bytes.bytes.size());
    values[argument] = value;
  }

  std::vector<HostTensor> results;
  for (int repeat = 0; repeat < repeats; ++repeat) {
    auto start = std::chrono::steady_clock::now();
    for (mlir::Operation &op : func.getBody().front()) {
      if (auto kda = mlir::dyn_cast<mlir::rudnn::KdaOp>(op)) {
        KdaForwardInputs in{values[kda.getQ()].view,    values[kda.getK()].view,
                            values[kda.getV()].view,    values[kda.getG()].view,
                            values[kda.getBeta()].view, std::nullopt};
        if (kda.getInitialState())
          in.initialState = values[kda.getInitialState()].view;
        const std::vector<int64_t> &q = in.q.shape;
        const int64_t B = q[0], T = q[1], H = q[2], K = q[3];
        const int64_t V = in.v.shape[3], C = *kda.getChunk();
        DeviceValue output = allocate(
            context, dtypeOf(kda.getOutput().getType().getElementType()),
            {B, T, H, V});
        DeviceValue finalState = allocate(context, DType::F32, {B, H, K, V});
        KdaForwardOutputs out{output.view, finalState.view, std::nullopt};
        DeviceValue boundaries;
        if (kda.getBoundaries()) {
          boundaries =
              allocate(context, DType::F32, {(T + C - 1) / C, B, H, K, V});
          out.boundaries = boundaries.view;
        }
        KdaOptions options;
        options.scale =
            static_cast<float>(kda.getScaleAttr().getValueAsDouble());
        options.chunk = static_cast<int>(C);
        kdaForward(context, in, out, options);
        values[kda.getOutput()] = output;
        values[kda.getFinalState()] = finalState;
        if (kda.getBoundaries())
          values[kda.getBoundaries()] = boundaries;
        continue;
      }
      if (auto backward = mlir::dyn_cast<mlir::rudnn::KdaBackwardOp>(op)) {
        runBackward(context, backward, values);
        continue;
      }
      if (auto ret = mlir::dyn_cast<mlir::func::ReturnOp>(op)) {
        context.synchronize();
        if (repeat + 1 < repeats)
          break;
        for (auto [index, operand] : llvm::enumerate(ret.getOperands())) {
          const DeviceValue &value = values[operand];
          npy::Array bytes;
          bytes.type = npyType(value.view.dtype);
          bytes.shape = value.view.shape;
          bytes.bytes.resize(numel(value.view.shape) *
                             dtypeSize(value.view.dtype));
          context.copyToHost(bytes.bytes.data(), value.view.data,
                             bytes.bytes.size());
          context.synchronize();
          results.push_back({resultNames_[index], value.view.dtype,
                             value.view.shape, npy::toDoubles(bytes)});
        }
        break;
      }
      throw Unsupported("rudnn-run cannot run '" +
                        op.getName().getStringRef().str() + "' yet");
    }
    if (milliseconds)
      milliseconds->push_back(std::chrono::duration<double, std::milli>(
                                  std::chrono::steady_clock::now() - start)
                                  .count());
  }
  return results;
}

std::vector<HostTensor>
Program::reference(const std::vector<HostTensor> &inputs) const {
  auto func = mlir::cast<mlir::func::FuncOp>(function);
  llvm::DenseMap<mlir::Value, HostTensor> values;
  for (auto [argument, input] : llvm::zip(func.getArguments(), inputs))
    values[argument] = input;
  for (mlir::Operation &op : func.getBody().front()) {
    if (auto kda = mlir::dyn_cast<mlir::rudnn::KdaOp>(op)) {
      const HostTensor &q = values[kda.getQ()], &v = values[kda.getV()];
      reference::KdaShape shape{q.shape[0], q.shape[1], q.shape[2], q.shape[3],
                                v.shape[3]};
      reference::KdaInputs in{q.values,
                              values[kda.getK()].values,
                              v.values,
                              values[kda.getG()].values,
                              values[kda.getBeta()].values,
                              {}};
      if (kda.getInitialState())
        in.initialState = values[kda.getInitialState()].values;
      const int64_t C = *kda.getChunk();
      reference::KdaOutputs out = reference::kdaForward(
          shape, in, kda.getScaleAttr().getValueAsDouble(), C);
      const int64_t B = shape.batch, T = shape.length, H = shape.heads;
      const int64_t K = shape.featureK, V = shape.featureV;
      values[kda.getOutput()] = {"", DType::F32, {B, T, H, V}, out.output};
      values[kda.getFinalState()] = {
          "", DType::F32, {B, H, K, V}, out.finalState};
      if (kda.getBoundaries())
        values[kda.getBoundaries()] = {
            "", DType::F32, {(T + C - 1) / C, B, H, K, V}, out.boundaries};
      continue;
    }
    if (auto backward = mlir::dyn_cast<mlir::rudnn::KdaBackwardOp>(op)) {
      referenceBackward(backward, values);
      continue;
    }
    if (auto ret = mlir::dyn_cast<mlir::func::ReturnOp>(op)) {
      std::vector<HostTensor> results;
      for (auto [index, operand] : llvm::enumerate(ret.getOperands())) {
        HostTensor result = values[operand];
        result.name = resultNames_[index];
        results.push_back(result);
      }
      return results;
    }
    throw Unsupported("no reference for '" + op.getName().getStringRef().str() +
                      "'");
  }
  return {};
}

std::vector<HostTensor>
Program::sensitivity(const std::vector<HostTensor> &inputs) const {
  // A first-order difference in float64: every input value moved by a
  // relative step of random sign.
  constexpr double kStep = 1.0 / (1 << 20);
  std::mt19937 random(7);
  std::vector<HostTensor> moved = inputs;
  for (HostTensor &tensor : moved)
    for (double &x : tensor.values)
      x *= 1 + (random() & 1 ? kStep : -kStep);
  std::vector<HostTensor> base = reference(inputs), shifted = reference(moved);
  for (size_t i = 0; i < base.size(); ++i)
    for (size_t j = 0; j < base[i].values.size(); ++j)
      shifted[i].values[j] = (shifted[i].values[j] - base[i].values[j]) / kStep;
  return shifted;
}

std::vector<HostTensor>
rudnn::run::randomInputs(const std::vector<Argument> &arguments,
                         const std::map<char, int64_t> &dims, unsigned seed) {
  std::mt19937 random(seed);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<HostTensor> inputs;
  for (const Argument &argument : arguments) {
    HostTensor tensor{argument.name, argument.dtype, argument.shape, {}};
    for (size_t i = 0; i < tensor.shape.size(); ++i) {
      if (tensor.shape[i] >= 0)
        continue;
      char letter = i < argument.layout.size() ? argument.layout[i] : '?';
      auto it = dims.find(letter);
      if (it == dims.end())
        throw InvalidArgument("'" + argument.name + "' dim " +
                              std::to_string(i) + " (" + letter +
                              ") is dynamic: give its size with --dims");
      tensor.shape[i] = it->second;
    }
    const int64_t count = checkedCount(argument.name, tensor.shape);
    tensor.values.resize(count);
    const std::string &role = argument.role;
    for (double &x : tensor.values) {
      if (role == "g")
        x = -unit(random); // log-decay: g ≤ 0
      else if (role == "beta")
        x = 0.05 + 0.9 * unit(random);
      else if (role == "initial_state" || role == "d_final_state")
        x = 0.5 * normal(random);
      else if (argument.dtype == DType::I32)
        x = std::floor(16 * unit(random));
      else if (argument.dtype == DType::Bool)
        x = unit(random) < 0.5;
      else
        x = normal(random);
    }
    if (role == "k") { // L2-normalised keys, as real callers provide them
      const int64_t width = tensor.shape.back();
      for (int64_t row = 0; row < count / width; ++row) {
        double norm = 0;
        for (int64_t d = 0; d < width; ++d)
          norm +=
              tensor.values[row * width + d] * tensor.values[row * width + d];
        for (int64_t d = 0; d < width; ++d)
          tensor.values[row * width + d] /= std::sqrt(norm);
      }
    }
    // What the device will hold.
    tensor.values = npy::toDoubles(encode(tensor));
    inputs.push_back(std::move(tensor));
  }
  return inputs;
}

std::vector<HostTensor>
rudnn::run::readInputs(const std::vector<Argument> &arguments,
                       const std::string &directory) {
  std::vector<HostTensor> inputs;
  for (const Argument &argument : arguments) {
    requireFileName(argument.name + ".npy");
    std::string path =
        (fs::path(directory) / (argument.name + ".npy")).string();
    npy::Array array = npy::read(path);
    if (array.shape.size() != argument.shape.size())
      throw InvalidArgument(path + ": rank " +
                            std::to_string(array.shape.size()) + ", but '" +
                            argument.name + "' has rank " +
                            std::to_string(argument.shape.size()));
    for (size_t i = 0; i < array.shape.size(); ++i)
      if (argument.shape[i] >= 0 && array.shape[i] != argument.shape[i])
        throw InvalidArgument(path + ": dim " + std::to_string(i) + " is " +
                              std::to_string(array.shape[i]) + ", but '" +
                              argument.name + "' needs " +
                              std::to_string(argument.shape[i]));
    npy::Array converted = npy::convert(array, npyType(argument.dtype));
    inputs.push_back({argument.name, argument.dtype, array.shape,
                      npy::toDoubles(converted)});
  }
  return inputs;
}

void rudnn::run::writeTensors(const std::vector<HostTensor> &tensors,
                              const std::string &directory) {
  std::set<std::string> names;
  for (const HostTensor &tensor : tensors) {
    requireFileName(tensor.name + ".npy");
    if (!names.insert(tensor.name).second)
      throw InvalidArgument("two tensors are named '" + tensor.name +
                            "': each needs its own file");
  }
  for (const HostTensor &tensor : tensors)
    if (fs::path path = fs::path(directory) / (tensor.name + ".npy");
        fs::exists(fs::symlink_status(path)) &&
        !fs::is_regular_file(fs::symlink_status(path)))
      throw InvalidArgument("cannot write '" + path.string() +
                            "': something other than a file is there");
  std::error_code error;
  fs::create_directories(directory, error);
  if (error || !fs::is_directory(directory))
    throw InvalidArgument("cannot create the folder '" + directory +
                          "': " + (error ? error.message() : "not a folder"));
  // Every file under a temporary name first: results land together or not
  // at all.
  std::vector<std::pair<std::string, std::string>> pending; // temporary, final
  auto discard = [&] {
    for (const auto &[temporary, path] : pending)
      std::remove(temporary.c_str());
  };
  try {
    for (const HostTensor &tensor : tensors) {
      HostTensor asWritten = tensor;
      if (tensor.dtype == DType::F16 || tensor.dtype == DType::BF16)
        asWritten.dtype = DType::F32; // NumPy has no bfloat16: widen floats
      const std::string path =
          (fs::path(directory) / (tensor.name + ".npy")).string();
      pending.emplace_back(npy::writeTemporary(path, encode(asWritten)), path);
    }
  } catch (...) {
    discard();
    throw;
  }
  for (size_t i = 0; i < pending.size(); ++i)
    if (std::rename(pending[i].first.c_str(), pending[i].second.c_str()) != 0) {
      const int code = errno;
      pending.erase(pending.begin(), pending.begin() + i);
      discard();
      throw InvalidArgument("cannot write '" + pending.front().second +
                            "': " + std::strerror(code));
    }
}
