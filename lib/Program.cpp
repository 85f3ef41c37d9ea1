//===- Program.cpp - rudnn IR functions JIT-compiled and called -----------===//
//
// A function's arguments and results are bound to its operator op's
// contract: the plan names each buffer after the contract tensor it holds,
// so a call checks its views against the contract, binds them by those
// names and lets the plan read its parameters from them.
//
//===----------------------------------------------------------------------===//

#include "rudnn/program.h"

#include "lib/ContextImpl.h"
#include "lib/PlanImport.h"
#include "runtime/bundles/BundleFile.h"
#include "runtime/checks/FunctionChecks.h"
#include "runtime/checks/ViewChecks.h"
#include "runtime/plans/PlanBinding.h"
#include "runtime/support/InputFile.h"

#include "codegen/InitRudnn.h"
#include "codegen/Transforms/FunctionTensors.h"
#include "codegen/Transforms/Passes.h"
#include "dialects/IR/ElementTypes.h"
#include "dialects/IR/RudnnOps.h"
#include "dialects/IR/SourceLimits.h"
#include "runtime/cache/Hash.h"

#include "rudnn/errors.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

#include <cstdio>
#include <fstream>
#include <mutex>
#include <sstream>

using namespace rudnn;

struct Module::Impl {
  Context *context = nullptr;
  mlir::MLIRContext mlir{mlir::MLIRContext::Threading::DISABLED};
  mlir::OwningOpRef<mlir::ModuleOp> module;
  std::string fingerprint; // of the text: part of every plan's key
  std::mutex mutex;        // the MLIR context is used by one thread at a time
};

struct Function::Impl {
  std::shared_ptr<Module::Impl> module;
  std::string name;
  /// Its arguments, results and operators' contracts, which calls are
  /// checked against.
  runtime::FunctionChecks checks;
  /// The operator ops in program order, their values numbered as the API
  /// says (arguments first, then each op's results).
  std::vector<OperatorCall> operators;
  std::vector<int> resultValues;
  std::string noOperator;
  /// The plan-cache key of the function: its module's text, name, target.
  std::string planKey;

  /// The function's plan, compiled on first use.
  std::shared_ptr<runtime::PlanExecutor> executor() const;

  /// The view bound to each buffer of `plan`: the plan names its buffers
  /// after the function's arguments and results (looked up once per plan).
  std::vector<const TensorView *>
  bufferViews(const runtime::Plan &plan,
              const std::vector<TensorView> &argumentViews,
              const std::vector<TensorView> &resultViews) const {
    std::call_once(bufferOnce,
                   [&] { bufferSource = checks.bufferSources(plan); });
    return runtime::FunctionChecks::bufferViews(bufferSource, argumentViews,
                                                resultViews);
  }
  mutable std::once_flag bufferOnce;
  /// Per plan buffer: an argument index, or the argument count plus a
  /// result index, or -1.
  mutable std::vector<int> bufferSource;
};

namespace {

std::string diagnosticText(mlir::Diagnostic &diagnostic) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << diagnostic.getLocation() << ": " << diagnostic.str();
  return os.str();
}

DType dtypeOf(mlir::Type type) {
  if (std::optional<DType> dtype = mlir::rudnn::dtypeOf(type))
    return *dtype;
  std::string text;
  llvm::raw_string_ostream os(text);
  os << type;
  throw Unsupported("element type " + text + " is not supported");
}

TensorInfo infoOf(mlir::Type type, mlir::StringAttr name,
                  mlir::IntegerAttr align, const std::string &fallback) {
  auto ranked = mlir::dyn_cast<mlir::RankedTensorType>(type);
  if (!ranked)
    throw Unsupported("'" + fallback + "' is not a ranked tensor");
  TensorInfo info;
  info.name = name ? name.str() : fallback;
  info.align = align ? align.getInt() : 0;
  info.dtype = dtypeOf(ranked.getElementType());
  for (int64_t dim : ranked.getShape())
    info.shape.push_back(mlir::ShapedType::isDynamic(dim) ? -1 : dim);
  return info;
}

std::map<std::string, double> numericAttributes(mlir::Operation *op) {
  std::map<std::string, double> attributes;
  for (mlir::NamedAttribute attribute : op->getAttrs()) {
    if (auto integer = mlir::dyn_cast<mlir::IntegerAttr>(attribute.getValue()))
      attributes[attribute.getName().str()] =
          static_cast<double>(integer.getInt());
    else if (auto real = mlir::dyn_cast<mlir::FloatAttr>(attribute.getValue()))
      attributes[attribute.getName().str()] = real.getValueAsDouble();
    else if (mlir::isa<mlir::UnitAttr>(attribute.getValue()))
      attributes[attribute.getName().str()] = 1; // a flag that is set
  }
  return attributes;
}

std::shared_ptr<Function::Impl> describe(std::shared_ptr<Module::Impl> module,
                                         mlir::func::FuncOp func) {
  auto impl = std::make_shared<Function::Impl>();
  impl->module = module;
  impl->name = func.getSymName().str();
  const std::string where = "function @" + impl->name;
  impl->planKey = "program:" + module->fingerprint + ":" + impl->name + ":" +
                  module->context->impl().targetArch();
  using mlir::rudnn::RudnnDialect;
  for (auto [index, argument] : llvm::enumerate(func.getArguments()))
    impl->checks.arguments.push_back(infoOf(
        argument.getType(),
        func.getArgAttrOfType<mlir::StringAttr>(index,
                                                RudnnDialect::kNameAttrName),
        func.getArgAttrOfType<mlir::IntegerAttr>(index,
                                                 RudnnDialect::kAlignAttrName),
        "arg" + std::to_string(index)));

  // Values numbered: arguments, then each operator's results in order.
  llvm::DenseMap<mlir::Value, int> numbers;
  for (mlir::BlockArgument argument : func.getArguments())
    numbers[argument] = static_cast<int>(argument.getArgNumber());
  int next = static_cast<int>(func.getNumArguments());
  for (mlir::Operation &op : func.getBody().front()) {
    if (mlir::isa<mlir::func::ReturnOp, mlir::tensor::CastOp>(op))
      continue;
    auto call = mlir::dyn_cast<mlir::rudnn::OperatorOpInterface>(op);
    if (!call)
      throw Unsupported(where + ": '" + op.getName().getStringRef().str() +
                        "' is not an operator op");
    const OperatorContract &contract = call.getOperatorContract();
    OperatorCall described{op.getName().getStringRef().str(),
                           numericAttributes(&op),
                           {},
                           {},
                           &contract};
    runtime::OperatorCheck checked{contract, {}, {}};
    // Dims counting pieces of another by an attribute (KDA's chunks of T)
    // are known once the op is specialized.
    for (DimContract &dim : checked.contract.dims) {
      if (!dim.piecesOf)
        continue;
      auto per = described.attributes.find(std::string(dim.perAttribute));
      if (per != described.attributes.end())
        dim.per = static_cast<int64_t>(per->second);
    }
    for (unsigned k = 0; k < contract.operands.size(); ++k) {
      mlir::Value value = call.getContractOperand(k);
      value = value ? mlir::rudnn::throughCasts(value) : value;
      auto found = value ? numbers.find(value) : numbers.end();
      if (value && found == numbers.end())
        throw Unsupported(where + ": '" +
                          std::string(contract.operands[k].name) +
                          "' is neither an argument nor an operator's result");
      const int number = value ? found->second : -1;
      described.operands.push_back(number);
      auto argument = mlir::dyn_cast_or_null<mlir::BlockArgument>(value);
      checked.operandArgument.push_back(argument ? number : -1);
      if (value && !argument)
        checked.contract.operands[k].optional = true;
      if (argument && impl->checks.arguments[number].role.empty()) {
        impl->checks.arguments[number].role = contract.operands[k].name;
        impl->checks.arguments[number].layout = contract.operands[k].layout;
      }
    }
    for (unsigned k = 0; k < contract.results.size(); ++k) {
      mlir::Value value = call.getContractResult(k);
      described.results.push_back(value ? next : -1);
      if (value)
        numbers[value] = next++;
    }
    checked.resultOf.assign(contract.results.size(), -1);
    impl->operators.push_back(std::move(described));
    impl->checks.operators.push_back(std::move(checked));
  }
  if (impl->operators.empty())
    throw Unsupported(where + " has no operator op");
  for (const TensorInfo &info : impl->checks.arguments)
    if (info.role.empty())
      throw Unsupported(where + ": argument '" + info.name +
                        "' is no operand of its operator ops");

  auto ret = mlir::cast<mlir::func::ReturnOp>(func.getBody().back().back());
  for (auto [index, operand] : llvm::enumerate(ret.getOperands())) {
    TensorInfo info = infoOf(operand.getType(),
                             func.getResultAttrOfType<mlir::StringAttr>(
                                 index, RudnnDialect::kNameAttrName),
                             func.getResultAttrOfType<mlir::IntegerAttr>(
                                 index, RudnnDialect::kAlignAttrName),
                             "result" + std::to_string(index));
    auto found = numbers.find(mlir::rudnn::throughCasts(operand));
    if (found == numbers.end() ||
        found->second < static_cast<int>(func.getNumArguments()))
      throw Unsupported(where + ": result '" + info.name +
                        "' is no result of its operator ops");
    impl->resultValues.push_back(found->second);
    bool updatesInPlace = false;
    for (size_t o = 0; o < impl->operators.size(); ++o)
      for (size_t k = 0; k < impl->operators[o].results.size(); ++k)
        if (impl->operators[o].results[k] == found->second &&
            impl->checks.operators[o].resultOf[k] < 0) {
          const TensorContract &result =
              impl->checks.operators[o].contract.results[k];
          impl->checks.operators[o].resultOf[k] = static_cast<int>(index);
          info.role = result.name;
          info.layout = result.layout;
          updatesInPlace = !result.updates.empty();
        }
    if (auto over = func.getResultAttrOfType<mlir::StringAttr>(
            index, RudnnDialect::kAliasesAttrName)) {
      impl->checks.inPlace.emplace_back(info.name, over.str());
      // An argument updated in place (a cache appended to, a pool of
      // states advanced): its operator's contract requires the argument's
      // view for both. A result named as the argument it aliases is one too.
      if (updatesInPlace || over.getValue() == info.name)
        info.updates = over.str();
    }
    impl->checks.results.push_back(info);
  }
  return impl;
}

} // namespace

Module Module::parse(Context &context, const std::string &text) {
  auto impl = std::make_shared<Impl>();
  impl->context = &context;
  mlir::DialectRegistry registry;
  mlir::rudnn::registerRudnnDialects(registry);
  impl->mlir.appendDialectRegistry(registry);
  impl->mlir.loadAllAvailableDialects();
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&impl->mlir, [&](mlir::Diagnostic &d) {
    diagnostics += diagnosticText(d) + "\n";
    return mlir::success();
  });
  auto sourceMgr = std::make_shared<llvm::SourceMgr>();
  sourceMgr->AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "module"), llvm::SMLoc());
  impl->module = mlir::rudnn::parseRudnnSource(sourceMgr, &impl->mlir);
  if (!impl->module)
    throw InvalidArgument("not valid rudnn IR:\n" + diagnostics);
  // Specialized once here, so attributes chosen for the target are seen.
  mlir::PassManager pm(&impl->mlir);
  mlir::rudnn::RudnnSpecializeOptions options;
  options.arch = context.impl().targetArch();
  // The device's own SMs and shared memory: a persistent or cooperative
  // grid sized for another part would not fit.
  if (int64_t sms = context.impl().targetSmCount())
    options.smCount = sms;
  if (int64_t smem = context.impl().targetSmemPerBlock())
    options.smemPerBlock = smem;
  pm.addPass(mlir::rudnn::createRudnnSpecialize(options));
  if (mlir::failed(pm.run(*impl->module)))
    throw InvalidArgument("cannot specialize the module:\n" + diagnostics);
  // The names the plans give their buffers, bound by the calls.
  for (auto func : impl->module->getOps<mlir::func::FuncOp>())
    mlir::rudnn::nameFunctionTensors(func);
  impl->fingerprint = runtime::hash128(text).hex();
  return Module(impl);
}

Module Module::load(Context &context, const std::string &path) {
  return parse(context, runtime::readInputFile(path, "module"));
}

std::vector<std::string> Module::functions() const {
  std::vector<std::string> names;
  for (auto func : impl->module->getOps<mlir::func::FuncOp>())
    names.push_back(func.getSymName().str());
  return names;
}

Function Module::function(const std::string &name) const {
  std::lock_guard<std::mutex> lock(impl->mutex);
  auto func = impl->module->lookupSymbol<mlir::func::FuncOp>(name);
  if (!func || func.isExternal())
    throw InvalidArgument("the module has no function @" + name);
  return Function(describe(impl, func));
}

const std::string &Function::name() const { return impl->name; }
const std::vector<TensorInfo> &Function::arguments() const {
  return impl->checks.arguments;
}
const std::vector<TensorInfo> &Function::results() const {
  return impl->checks.results;
}
const std::vector<OperatorCall> &Function::operators() const {
  return impl->operators;
}
const std::vector<int> &Function::resultValues() const {
  return impl->resultValues;
}

std::shared_ptr<runtime::PlanExecutor> Function::Impl::executor() const {
  Context &context = *module->context;
  return context.impl().plan(planKey, [&] {
    std::lock_guard<std::mutex> lock(module->mutex);
    mlir::OpBuilder builder(&module->mlir);
    mlir::OwningOpRef<mlir::ModuleOp> copy =
        mlir::ModuleOp::create(builder.getUnknownLoc());
    copy->push_back(module->module->lookupSymbol(name)->clone());
    return lowerToPlan(context.impl(), *copy, context.impl().targetArch(), name,
                       name);
  });
}

void Function::saveBundle(const std::string &path,
                          const std::vector<std::string> &targets) const {
  if (targets.empty())
    throw InvalidArgument("saveBundle: no target");
  Context &context = *impl->module->context;
  runtime::BundleFile bundle;
  bundle.function = impl->name;
  bundle.checks = impl->checks;
  for (const std::string &target : targets) {
    const bool emulation = target == "emulation";
    if (emulation && context.backend() != BackendKind::Emulation)
      throw Unsupported("saveBundle: the emulation target needs a context "
                        "on the emulation backend");
    if (!emulation && target.rfind("sm_", 0) != 0)
      throw InvalidArgument("saveBundle: target '" + target +
                            "' is neither sm_XY nor emulation");
    KernelCompile compile = [&](const runtime::KernelSource &kernel) {
      return emulation ? *context.impl().compile(kernel)
                       : *context.impl().compileForArch(kernel, target);
    };
    std::lock_guard<std::mutex> lock(impl->module->mutex);
    mlir::OpBuilder builder(&impl->module->mlir);
    mlir::OwningOpRef<mlir::ModuleOp> copy =
        mlir::ModuleOp::create(builder.getUnknownLoc());
    copy->push_back(impl->module->module->lookupSymbol(impl->name)->clone());
    bundle.plans.emplace(
        target, lowerToPlan(context.impl(), *copy,
                            emulation ? context.impl().targetArch() : target,
                            impl->name, impl->name, compile));
  }
  const std::string text = bundle.write();
  // Through a temporary name: a failed write leaves no partial bundle.
  const std::string temporary = path + ".partial";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) {
      std::remove(temporary.c_str());
      throw InvalidArgument("saveBundle: cannot write '" + path + "'");
    }
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    std::remove(temporary.c_str());
    throw InvalidArgument("saveBundle: cannot write '" + path + "'");
  }
}

std::vector<std::vector<int64_t>>
Function::resultShapes(const std::vector<TensorView> &arguments) const {
  return impl->checks.resultShapes(impl->executor()->plan(), arguments);
}

void Function::call(const std::vector<TensorView> &arguments,
                    const std::vector<TensorView> &results,
                    Stream stream) const {
  Context &context = *impl->module->context;
  // The emulation backend's memory is the host's: values are checked too.
  impl->checks.checkCall(arguments, results,
                         context.impl().backendKind() ==
                             BackendKind::Emulation);
  std::shared_ptr<runtime::PlanExecutor> executor = impl->executor();
  const runtime::Plan &plan = executor->plan();
  PlanCall call = bindViews(plan, impl->bufferViews(plan, arguments, results));
  impl->checks.checkParamLetters(plan, call.params, arguments, results);
  context.impl().run(*executor, call.bindings, call.params, stream);
}
