//===- Program.cpp - An operator program run through the JIT --------------===//

#include "tools/rudnn-run/Program.h"
#include "tools/npy/Npy.h"

#include "codegen/InitRudnn.h"
#include "dialects/IR/RudnnOps.h"
#include "lib/reference/OperatorReferences.h"
#include "runtime/plans/Dump.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <numeric>
#include <random>
#include <set>
#include <unistd.h>

using namespace rudnn;
using namespace rudnn::run;
namespace fs = std::filesystem;

namespace {

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
  return npy::convert(wide, npy::elementTypeOf(tensor.dtype));
}

/// Rounds `tensor`'s values to its type: what the device will hold.
void roundAsHeld(HostTensor &tensor) {
  tensor.values = npy::toDoubles(encode(tensor));
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

} // namespace

Program::Program(Context &context, const std::string &path,
                 const std::string &entry)
    : module(Module::load(context, path)), function(module.function(entry)) {
  for (size_t i = 0; i < function.arguments().size(); ++i) {
    const TensorInfo &info = function.arguments()[i];
    Argument argument;
    argument.name = info.name;
    argument.dtype = info.dtype;
    argument.shape = info.shape;
    argument.layout = info.layout;
    argument.role = info.role;
    // Drawn as the first operator reading it expects.
    for (size_t c = 0; c < function.operators().size(); ++c) {
      const OperatorCall &call = function.operators()[c];
      const OperatorContract *contract = call.contract;
      auto k = std::find(call.operands.begin(), call.operands.end(),
                         static_cast<int>(i));
      if (contract && k != call.operands.end()) {
        const TensorContract &operand =
            contract->operands[k - call.operands.begin()];
        argument.sample = sampleRuleOf(operand);
        argument.opaque = operand.opaque;
        argument.resultOf = operand.resultOf;
        argument.call = static_cast<int>(c);
        break;
      }
    }
    arguments_.push_back(argument);
  }
}

Program::~Program() = default;

void Program::completeDims(std::map<char, int64_t> &dims) const {
  for (const OperatorCall &call : function.operators()) {
    if (!call.contract)
      continue;
    for (const DimContract &dim : call.contract->dims) {
      if (dim.defaultsTo && !dims.count(dim.letter) &&
          dims.count(dim.defaultsTo))
        dims[dim.letter] = dims[dim.defaultsTo];
      if (!dim.timesOf)
        continue;
      auto derived = dims.find(dim.letter);
      auto base = dims.find(dim.timesOf);
      if (derived == dims.end() && base != dims.end())
        dims[dim.letter] = base->second * dim.times + dim.plus;
      else if (base == dims.end() && derived != dims.end() &&
               derived->second >= dim.plus &&
               (derived->second - dim.plus) % dim.times == 0)
        dims[dim.timesOf] = (derived->second - dim.plus) / dim.times;
    }
  }
}

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
  std::vector<DeviceValue> arguments;
  std::vector<TensorView> argumentViews, resultViews;
  for (const HostTensor &input : inputs) {
    DeviceValue value = allocate(context, input.dtype, input.shape);
    npy::Array bytes = encode(input);
    if (!bytes.bytes.empty()) // empty tensors are the operator's to reject
      context.copyToDevice(value.view.data, bytes.bytes.data(),
                           bytes.bytes.size());
    argumentViews.push_back(value.view);
    arguments.push_back(std::move(value));
  }
  std::vector<DeviceValue> results;
  const std::vector<std::vector<int64_t>> shapes =
      function.resultShapes(argumentViews);
  for (size_t i = 0; i < shapes.size(); ++i) {
    const TensorInfo &info = function.results()[i];
    // A result updating an argument in place is that argument's memory.
    auto updated =
        std::find_if(function.arguments().begin(), function.arguments().end(),
                     [&](const TensorInfo &a) {
                       return !info.updates.empty() && a.name == info.updates;
                     });
    if (updated != function.arguments().end()) {
      resultViews.push_back(
          argumentViews[updated - function.arguments().begin()]);
      continue;
    }
    results.push_back(allocate(context, info.dtype, shapes[i]));
    resultViews.push_back(results.back().view);
  }
  for (int repeat = 0; repeat < repeats; ++repeat) {
    auto start = std::chrono::steady_clock::now();
    function.call(argumentViews, resultViews);
    context.synchronize();
    if (milliseconds)
      milliseconds->push_back(std::chrono::duration<double, std::milli>(
                                  std::chrono::steady_clock::now() - start)
                                  .count());
  }
  std::vector<HostTensor> values;
  for (size_t i = 0; i < resultViews.size(); ++i) {
    const TensorView &view = resultViews[i];
    npy::Array bytes;
    bytes.type = npy::elementTypeOf(view.dtype);
    bytes.shape = view.shape;
    bytes.bytes.resize(numel(view.shape) * dtypeSize(view.dtype));
    context.copyToHost(bytes.bytes.data(), view.data, bytes.bytes.size());
    context.synchronize();
    values.push_back({function.results()[i].name, view.dtype, view.shape,
                      npy::toDoubles(bytes)});
  }
  return values;
}

void Program::deriveResults(std::vector<HostTensor> &inputs) const {
  // Each call's other operator computed once, for all the inputs it gives.
  std::map<int, reference::NamedValues> computed;
  for (size_t i = 0; i < arguments_.size() && i < inputs.size(); ++i) {
    const Argument &argument = arguments_[i];
    if (argument.resultOf.empty())
      continue;
    const OperatorCall &call = function.operators()[argument.call];
    const OperatorContract *contract = call.contract;
    reference::OperatorReference compute =
        reference::referenceFor(argument.resultOf);
    if (!contract || !compute)
      continue; // drawn as any other input
    auto [results, fresh] = computed.try_emplace(argument.call);
    if (fresh) {
      // The call's operands that are the function's arguments and not
      // themselves results: the other operator's operands.
      reference::NamedValues operands;
      for (size_t k = 0; k < call.operands.size(); ++k) {
        const int value = call.operands[k];
        if (value >= 0 && value < static_cast<int>(inputs.size()) &&
            contract->operands[k].resultOf.empty())
          operands[std::string(contract->operands[k].name)] = {
              inputs[value].shape, inputs[value].values};
      }
      results->second = compute(operands, call.attributes);
    }
    auto it = results->second.find(argument.role);
    if (it == results->second.end() ||
        it->second.data.size() != inputs[i].values.size())
      continue;
    inputs[i].values = it->second.data;
    roundAsHeld(inputs[i]);
  }
}

namespace {
/// Throws InvalidArgument naming the entries an operator's reference
/// refuses (an append past a cache): a checked run computes no result for
/// them to compare.
void requireNoRefusals(const OperatorContract &contract,
                       const reference::NamedValues &computed) {
  for (const TensorContract &result : contract.results) {
    auto it = computed.find(std::string(result.name));
    if (!result.reportsRefusals || it == computed.end())
      continue;
    std::string entries;
    for (size_t b = 0; b < it->second.data.size(); ++b)
      if (it->second.data[b] != 0)
        entries += (entries.empty() ? "" : ", ") + std::to_string(b);
    if (!entries.empty())
      throw InvalidArgument(
          std::string(contract.op) + " refuses entries " + entries +
          " of these inputs (its '" + std::string(result.name) +
          "' says so, per entry: " + std::string(result.doc) + ")");
  }
}
} // namespace

void Program::requireCheckable() const {
  for (const Argument &argument : arguments_)
    if (argument.opaque)
      throw Unsupported("'" + argument.name +
                        "' is what an operator saves in its kernels' own "
                        "layout: no float64 reference reads it, so the "
                        "function cannot be checked (compute it in the same "
                        "function to check it)");
}

bool Program::roundsToTf32() const {
  for (const OperatorCall &call : function.operators()) {
    auto allowed = call.attributes.find("allow_tf32");
    if (allowed != call.attributes.end() && allowed->second != 0)
      return true;
  }
  return false;
}

std::vector<HostTensor>
Program::reference(const std::vector<HostTensor> &inputs) const {
  requireCheckable();
  // The function's values, computed operator by operator.
  std::map<int, reference::Values> values;
  for (size_t i = 0; i < inputs.size(); ++i)
    values[static_cast<int>(i)] = {inputs[i].shape, inputs[i].values};
  for (const OperatorCall &call : function.operators()) {
    reference::OperatorReference compute = reference::referenceFor(call.op);
    const OperatorContract *contract = call.contract;
    if (!compute || !contract)
      throw Unsupported("no float64 reference for '" + call.op + "'");
    reference::NamedValues operands;
    for (size_t k = 0; k < call.operands.size(); ++k)
      if (call.operands[k] >= 0)
        operands[std::string(contract->operands[k].name)] =
            values.at(call.operands[k]);
    reference::NamedValues computed = compute(operands, call.attributes);
    requireNoRefusals(*contract, computed);
    for (size_t k = 0; k < call.results.size(); ++k) {
      if (call.results[k] < 0)
        continue;
      if (contract->results[k].opaque) { // nothing to compare it with
        values[call.results[k]] = {};
        continue;
      }
      auto it = computed.find(std::string(contract->results[k].name));
      if (it == computed.end())
        throw Unsupported("the reference of '" + call.op + "' gives no '" +
                          std::string(contract->results[k].name) + "'");
      values[call.results[k]] = it->second;
    }
  }
  std::vector<HostTensor> results;
  for (size_t i = 0; i < function.results().size(); ++i) {
    const reference::Values &value = values.at(function.resultValues()[i]);
    results.push_back(
        {function.results()[i].name, DType::F32, value.shape, value.data});
  }
  return results;
}

std::vector<HostTensor>
Program::sensitivity(const std::vector<HostTensor> &inputs) const {
  // A first-order difference in float64: every floating input value moved by a
  // relative step of random sign.
  constexpr double kStep = 1.0 / (1 << 20);
  std::mt19937 random(7);
  std::vector<HostTensor> moved = inputs;
  for (HostTensor &tensor : moved) {
    // Lengths and masks are exact: moving them is no rounding error.
    if (tensor.dtype == DType::I32 || tensor.dtype == DType::Bool)
      continue;
    for (double &x : tensor.values)
      x *= 1 + (random() & 1 ? kStep : -kStep);
  }
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
  // The size of a dim letter: a static dim laid out with it, or --dims.
  auto sizeOf = [&](char letter) -> int64_t {
    for (const Argument &other : arguments)
      for (size_t i = 0; i < other.layout.size() && i < other.shape.size(); ++i)
        if (other.layout[i] == letter && other.shape[i] >= 0)
          return other.shape[i];
    auto it = dims.find(letter);
    if (it == dims.end())
      throw InvalidArgument(std::string("dim ") + letter +
                            " is dynamic: give its size with --dims");
    return it->second;
  };
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
    // The contract's rule, as data: no operator is known here.
    using Draw = SampleRule::Draw;
    const SampleRule &rule = argument.sample;
    int64_t bound = rule.upTo.empty() ? 0 : 1;
    for (char letter : rule.upTo)
      bound *= sizeOf(letter);
    if (rule.less)
      bound = std::max<int64_t>(bound - sizeOf(rule.less), 0);
    for (double &x : tensor.values) {
      if (argument.opaque)
        x = 0;
      else if (rule.draw == Draw::Integers)
        x = std::floor((bound + 1) * unit(random));
      else if (rule.draw == Draw::Bernoulli)
        x = unit(random) < rule.low;
      else if (rule.draw == Draw::Uniform)
        x = rule.low + (rule.high - rule.low) * unit(random);
      else if (argument.dtype == DType::I32)
        x = std::floor(16 * unit(random));
      else if (argument.dtype == DType::Bool)
        x = unit(random) < 0.5;
      else
        x = rule.scale * normal(random);
    }
    if (rule.sorted && !tensor.values.empty()) {
      // Sorted draws from 0 to the bound: some entries empty, some whole.
      std::sort(tensor.values.begin(), tensor.values.end());
      tensor.values.front() = 0;
      tensor.values.back() = static_cast<double>(bound);
    }
    if (rule.draw == Draw::Permutation) {
      // Distinct values in shuffled order; −1 past the last.
      std::vector<double> values(static_cast<size_t>(bound));
      std::iota(values.begin(), values.end(), 0.0);
      std::shuffle(values.begin(), values.end(), random);
      for (size_t n = 0; n < tensor.values.size(); ++n)
        tensor.values[n] = n < values.size() ? values[n] : -1;
    }
    if (rule.unitRows) {
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
    roundAsHeld(tensor);
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
    npy::Array converted =
        npy::convert(array, npy::elementTypeOf(argument.dtype));
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
  std::vector<std::pair<std::string, npy::Array>> arrays;
  for (const HostTensor &tensor : tensors) {
    HostTensor asWritten = tensor;
    if (tensor.dtype == DType::F16 || tensor.dtype == DType::BF16)
      asWritten.dtype = DType::F32; // NumPy has no bfloat16: widen floats
    arrays.emplace_back(tensor.name, encode(asWritten));
  }
  npy::writeAll(directory, arrays);
}
