//===- Plan.cpp - Primitives to kernels, buffers and launches -------------===//
//
// A generic driver over the primitive interface: it outlines each run of
// connected primitives of one kernel group into a rudnn.kernel region, asks
// the region's last primitive to emit it, gives each value that crosses
// kernels a buffer (the caller's tensor, or packed workspace) and binds the
// kernel's parameters to buffers, run-time parameters and constants.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emit/EmitModule.h"
#include "codegen/Emit/KernelEmitInterface.h"
#include "codegen/Transforms/FunctionTensors.h"
#include "codegen/Transforms/Passes.h"
#include "dialects/IR/RudnnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"

#include "llvm/ADT/MapVector.h"

#include <numeric>

namespace mlir::rudnn {
#define GEN_PASS_DEF_RUDNNPLAN
#include "codegen/Transforms/Passes.h.inc"
} // namespace mlir::rudnn

using namespace mlir;
using namespace mlir::rudnn;
using ::rudnn::codegen::KernelBinding;
using ::rudnn::codegen::KernelBuilder;

namespace {

/// Primitives outlined into one kernel, with the range of a dim_switch's
/// dim its launch is guarded by.
struct KernelGroup {
  SmallVector<Operation *> ops;
  DimSwitchOp switchOp;
  unsigned alternative = 0;
  SetVector<Value> inputs, outputs;
};

/// Values that share memory, as a union-find forest.
class MemoryClasses {
public:
  void insert(Value value) { parent.try_emplace(value, value); }
  Value leader(Value value) {
    auto it = parent.find(value);
    if (it == parent.end())
      return {};
    if (it->second == value)
      return value;
    Value root = leader(it->second);
    parent[value] = root;
    return root;
  }
  /// Joins the classes; `first`'s leader leads the union.
  void join(Value first, Value second) {
    insert(first);
    insert(second);
    Value a = leader(first), b = leader(second);
    if (a != b)
      parent[b] = a;
  }
  /// The members of `value`'s class.
  SmallVector<Value> members(Value value) {
    SmallVector<Value> found;
    Value lead = leader(value);
    for (auto &entry : parent)
      if (leader(entry.first) == lead)
        found.push_back(entry.first);
    return found;
  }

private:
  DenseMap<Value, Value> parent;
};

/// What a value's memory is: the caller's argument or result, or workspace.
struct Memory {
  std::string name;
  StringRef access; // "in", "inout", "out", "workspace"
  std::string aliases;
  SizeRef bytes{0, {}};
  Value value;         // a member, for its type
  bool zeroed = false; // workspace filled with zeros before each call
};

class FunctionPlanner {
public:
  explicit FunctionPlanner(func::FuncOp func)
      : func(func), builder(func.getContext()) {}

  LogicalResult plan();

private:
  LogicalResult collect();
  void group();
  LogicalResult assignMemory();
  LogicalResult emit(KernelGroup &kernel);

  /// The plan parameter holding `dim`; fails if no bound tensor gives it.
  FailureOr<std::string> param(const DimRef &dim);
  FailureOr<SizeAttr> size(const SizeRef &size);
  /// The plan parameter for the stride of dim `index` of `value`.
  FailureOr<Attribute> stride(Value value, unsigned index);
  /// The #rudnn.tensor_map of a TensorMap binding over `value`.
  FailureOr<Attribute>
  tensorMap(Value value, const ::rudnn::codegen::KernelBinding &binding);
  /// Memory class leader of `value`, or null.
  Value leader(Value value) { return classes.leader(value); }
  Memory *memoryOf(Value value);
  std::string layoutOf(const Memory &memory);

  func::FuncOp func;
  OpBuilder builder;
  SmallVector<Operation *> primitives;
  DenseMap<Operation *, std::pair<DimSwitchOp, unsigned>> caseOf;
  std::vector<KernelGroup> kernels;
  MemoryClasses classes;
  llvm::MapVector<Value, Memory> memories; // by class leader
  DenseMap<Value, unsigned> returnedAs;
  // Plan parameters in order, each with its source.
  SmallVector<std::string> paramNames;
  SmallVector<Attribute> paramSources;
  llvm::StringMap<unsigned> paramIndex;
  // The plan's kernels and launches, built after the buffers.
  struct Launch {
    std::string kernel;
    SmallVector<Attribute> args;
    SmallVector<Attribute> grid;
    std::optional<std::string> guard;
    int64_t guardMin = 0, guardMax = 0;
    std::optional<std::string> repeat;
  };
  std::vector<Launch> launches;
  SmallVector<Operation *> kernelOps;
  // Memory a kernel keeps to itself, zeroed at each call where it asks:
  // its name, bytes and the launch it belongs to.
  struct Scratch {
    std::string name;
    SizeAttr bytes;
    size_t launch;
    bool zeroed;
  };
  SmallVector<Scratch> scratches;
  /// `name`, or `name_N`, unique among the plan's buffers.
  std::string uniqueBufferName(const std::string &name);

  /// For a workspace `memory` that only the kernels of one dim_switch case
  /// read or write, a launch of that case (its guard); else null.
  const Launch *onlyLaunchCaseOf(const Memory &memory);
  llvm::StringMap<std::string> kernelSources;
};

LogicalResult FunctionPlanner::collect() {
  Block &body = func.getBody().front();
  auto addPrimitive = [&](Operation &op, DimSwitchOp switchOp,
                          unsigned alternative) -> LogicalResult {
    if (isa<OperatorOpInterface>(op))
      return op.emitOpError() << "must be decomposed first: run "
                                 "rudnn-decompose before rudnn-plan";
    if (!isa<PrimitiveOpInterface>(op))
      return op.emitOpError() << "is no primitive rudnn-plan can outline";
    primitives.push_back(&op);
    if (switchOp)
      caseOf[&op] = {switchOp, alternative};
    return success();
  };
  for (Operation &op : body) {
    // Casts and views compute nothing: their values share memory.
    if (isa<func::ReturnOp, tensor::CastOp, ViewLikeOpInterface>(op))
      continue;
    if (auto switchOp = dyn_cast<DimSwitchOp>(op)) {
      for (auto [index, region] : llvm::enumerate(switchOp.getAlternatives()))
        for (Operation &inner : region.front().without_terminator())
          if (failed(addPrimitive(inner, switchOp, index)))
            return failure();
      continue;
    }
    if (failed(addPrimitive(op, {}, 0)))
      return failure();
  }
  return success();
}

/// Consecutive primitives of one group join a kernel when they read a value
/// it computes: a chain of one building block, never two unrelated calls.
void FunctionPlanner::group() {
  for (Operation *op : primitives) {
    auto primitive = cast<PrimitiveOpInterface>(op);
    auto where = caseOf.lookup(op);
    bool joins = false;
    if (!kernels.empty()) {
      KernelGroup &last = kernels.back();
      auto lastPrimitive = cast<PrimitiveOpInterface>(last.ops.back());
      joins = lastPrimitive.getKernelGroup() == primitive.getKernelGroup() &&
              last.switchOp == where.first &&
              last.alternative == where.second &&
              llvm::any_of(op->getOperands(), [&](Value operand) {
                return llvm::is_contained(last.ops, operand.getDefiningOp());
              });
    }
    if (!joins)
      kernels.push_back({{}, where.first, where.second, {}, {}});
    kernels.back().ops.push_back(op);
  }
  for (KernelGroup &kernel : kernels) {
    llvm::SmallPtrSet<Operation *, 8> inside(kernel.ops.begin(),
                                             kernel.ops.end());
    for (Operation *op : kernel.ops) {
      for (Value operand : op->getOperands())
        if (!inside.contains(operand.getDefiningOp()))
          kernel.inputs.insert(operand);
      for (OpOperand &use : op->getUses()) {
        Operation *user = use.getOwner();
        if (inside.contains(user))
          continue;
        // What a dim_switch case yields counts when the switch's result is
        // used.
        if (auto yield = dyn_cast<YieldOp>(user);
            yield &&
            yield->getParentOp()->getResult(use.getOperandNumber()).use_empty())
          continue;
        kernel.outputs.insert(use.get());
      }
      // A result nobody reads that its kernel writes anyway (an output not
      // returned) still needs memory: workspace.
      auto primitive = dyn_cast<PrimitiveOpInterface>(op);
      for (OpResult result : op->getResults()) {
        if (!primitive || kernel.outputs.contains(result) ||
            llvm::any_of(result.getUsers(), [&](Operation *user) {
              return inside.contains(user);
            }))
          continue;
        ResultStorage storage =
            primitive.getResultStorage(result.getResultNumber());
        if (storage.kind == ResultStorage::Kind::Own && !storage.mayBeNull)
          kernel.outputs.insert(result);
      }
    }
  }
}

Memory *FunctionPlanner::memoryOf(Value value) {
  Value lead = leader(value);
  auto it = lead ? memories.find(lead) : memories.end();
  return it == memories.end() ? nullptr : &it->second;
}

/// One memory per class of values that share it: casts, views, a
/// dim_switch's results and what its cases yield, tiles kept with another
/// value.
LogicalResult FunctionPlanner::assignMemory() {
  auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
  for (Value arg : func.getArguments())
    classes.insert(arg);
  for (Operation &op : func.getBody().front()) {
    if (auto cast = dyn_cast<tensor::CastOp>(op))
      classes.join(cast.getSource(), cast.getResult());
    if (auto view = dyn_cast<ViewLikeOpInterface>(op))
      for (Value result : view->getResults())
        classes.join(view.getViewSource(), result);
    if (auto switchOp = dyn_cast<DimSwitchOp>(op))
      for (Region &region : switchOp.getAlternatives())
        for (auto [yielded, result] :
             llvm::zip(region.front().getTerminator()->getOperands(),
                       switchOp.getResults()))
          classes.join(yielded, result);
  }
  DenseMap<Value, std::vector<SizeRef>> sizes;
  DenseMap<Value, std::string> storageNames;
  DenseSet<Value> zeroedResults;
  for (Operation *op : primitives)
    for (OpResult result : op->getResults()) {
      ResultStorage storage = cast<PrimitiveOpInterface>(op).getResultStorage(
          result.getResultNumber());
      classes.insert(result);
      if (storage.kind == ResultStorage::Kind::With)
        classes.join(result, storage.with);
      if (storage.kind != ResultStorage::Kind::KernelLocal &&
          storage.bytes.constant > 0)
        sizes[result].push_back(storage.bytes);
      if (!storage.name.empty())
        storageNames[result] = storage.name;
      if (storage.zeroed)
        zeroedResults.insert(result);
    }
  for (auto [index, value] : llvm::enumerate(ret.getOperands()))
    returnedAs[leader(value) ? leader(value) : value] = index;

  auto nameOf = [&](StringRef fallback, StringAttr name) {
    return name ? name.str() : fallback.str();
  };
  // Arguments and results first, in their order, then the workspace in the
  // order the kernels first write it.
  for (BlockArgument arg : func.getArguments()) {
    Value lead = leader(arg);
    // A primitive result sharing an argument's memory updates it in place
    // (a cache appended to): the buffer is read and written.
    const bool updated = llvm::any_of(classes.members(lead), [](Value member) {
      return isa_and_nonnull<PrimitiveOpInterface>(member.getDefiningOp());
    });
    if (returnedAs.count(lead) && !updated)
      return func.emitError() << "returns argument #" << arg.getArgNumber()
                              << " itself; rudnn-plan plans computations";
    if (updated && !arg.hasOneUse())
      return func.emitError()
             << "argument #" << arg.getArgNumber()
             << " is updated in place: nothing but its update may read it";
    memories[lead] = {
        nameOf("arg" + std::to_string(arg.getArgNumber()),
               func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                 RudnnDialect::kNameAttrName)),
        updated ? "inout" : "in",
        "",
        {},
        arg};
  }
  for (auto [index, value] : llvm::enumerate(ret.getOperands())) {
    Value lead = leader(value);
    if (!lead || memories.count(lead))
      continue;
    Memory memory{nameOf("result" + std::to_string(index),
                         func.getResultAttrOfType<StringAttr>(
                             index, RudnnDialect::kNameAttrName)),
                  "out",
                  "",
                  {},
                  value};
    if (auto aliases = func.getResultAttrOfType<StringAttr>(
            index, RudnnDialect::kAliasesAttrName))
      memory.aliases = aliases.str();
    memories[lead] = memory;
  }
  for (KernelGroup &kernel : kernels)
    for (Value output : kernel.outputs) {
      Value lead = leader(output);
      if (memories.count(lead))
        continue;
      // Workspace: the largest size any member asks for.
      SizeRef bytes{0, {}};
      for (Value member : classes.members(lead))
        for (const SizeRef &candidate : sizes.lookup(member)) {
          if (bytes.constant == 0) {
            bytes = candidate;
            continue;
          }
          if (candidate.dims.size() != bytes.dims.size())
            return output.getDefiningOp()->emitOpError()
                   << "asks for workspace sized unlike the values sharing "
                      "its memory";
          bytes.constant = std::max(bytes.constant, candidate.constant);
        }
      if (bytes.constant == 0)
        return output.getDefiningOp()->emitOpError()
               << "result #" << cast<OpResult>(output).getResultNumber()
               << " leaves its kernel but has no memory outside it";
      std::string name = "workspace";
      for (Value member : classes.members(lead))
        if (storageNames.count(member)) {
          name = storageNames.lookup(member);
          break;
        }
      const bool zeroed =
          llvm::any_of(classes.members(lead), [&](Value member) {
            return zeroedResults.count(member);
          });
      memories[lead] = {name, "workspace", "", bytes, output, zeroed};
    }
  // Workspace names are unique within the plan.
  llvm::StringMap<unsigned> seen;
  for (auto &entry : memories) {
    Memory &memory = entry.second;
    unsigned count = seen[memory.name]++;
    if (count)
      memory.name += "_" + std::to_string(count);
  }
  return success();
}

/// The layout letters of the argument or result `memory` holds, if given.
std::string FunctionPlanner::layoutOf(const Memory &memory) {
  StringAttr layout;
  if (auto arg = dyn_cast<BlockArgument>(memory.value))
    layout = func.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                               RudnnDialect::kLayoutAttrName);
  else if (auto it = returnedAs.find(leader(memory.value));
           it != returnedAs.end())
    layout = func.getResultAttrOfType<StringAttr>(
        it->second, RudnnDialect::kLayoutAttrName);
  return layout ? layout.str() : "";
}

FailureOr<std::string> FunctionPlanner::param(const DimRef &dim) {
  if (!dim.splitOf.empty()) {
    if (paramIndex.count(dim.name))
      return dim.name;
    // The dims it splits first: a split reads parameters before it.
    SizeRef over{dim.splitConstant, {}};
    for (const DimRef &of : dim.splitOf)
      over.dims.push_back(of);
    FailureOr<SizeAttr> blocks = size(over);
    SizeRef most{dim.splitMax, {}};
    for (const DimRef &of : dim.splitMaxOf)
      most.dims.push_back(of);
    FailureOr<SizeAttr> max = size(most);
    if (failed(blocks) || failed(max))
      return failure();
    paramIndex[dim.name] = paramNames.size();
    paramNames.push_back(dim.name);
    paramSources.push_back(SplitSourceAttr::get(func.getContext(), *blocks,
                                                dim.splitTarget, *max));
    return dim.name;
  }
  if (!dim.terms.empty()) {
    if (paramIndex.count(dim.name))
      return dim.name;
    SmallVector<Attribute> terms;
    for (const DimRef &term : dim.terms) {
      FailureOr<SizeAttr> size = this->size(SizeRef{1, {term}});
      if (failed(size))
        return failure();
      terms.push_back(*size);
    }
    paramIndex[dim.name] = paramNames.size();
    paramNames.push_back(dim.name);
    paramSources.push_back(
        SumSourceAttr::get(func.getContext(), builder.getArrayAttr(terms)));
    return dim.name;
  }
  // The tensor and dim the size is read from.
  Value value = dim.value;
  unsigned index = dim.index;
  if (dim.letter) {
    value = {};
    for (BlockArgument arg : func.getArguments())
      if (auto layout = func.getArgAttrOfType<StringAttr>(
              arg.getArgNumber(), RudnnDialect::kLayoutAttrName)) {
        size_t at = layout.getValue().find(dim.letter);
        if (at != StringRef::npos) {
          value = arg;
          index = static_cast<unsigned>(at);
          break;
        }
      }
    if (!value)
      return func.emitError()
             << "no argument is laid out with dim '" << dim.letter
             << "', which a kernel needs (rudnn.layout)";
  }
  // Through the primitives that computed it, to a tensor a caller binds
  // (a divided dim on the way keeps its divisor).
  DimRef divided = dim;
  while (!memoryOf(value) || memoryOf(value)->access == "workspace") {
    // A dim_switch result: any case's value computes it.
    if (!isa_and_nonnull<PrimitiveOpInterface>(value.getDefiningOp()))
      for (Value member : classes.members(value))
        if (isa_and_nonnull<PrimitiveOpInterface>(member.getDefiningOp()))
          value = member;
    auto primitive =
        dyn_cast_or_null<PrimitiveOpInterface>(value.getDefiningOp());
    std::optional<DimRef> origin =
        primitive ? primitive.getResultDim(
                        cast<OpResult>(value).getResultNumber(), index)
                  : std::nullopt;
    // A dim of its own (a split's parts, chosen by the runtime).
    if (origin && !origin->value && divided.divisor == 1 &&
        (!origin->splitOf.empty() || !origin->terms.empty() || origin->letter))
      return param(*origin);
    if (!origin || !origin->value)
      return func.emitError() << "cannot tell dim " << index
                              << " of a value held in the workspace";
    value = origin->value;
    index = origin->index;
    if (origin->divisor != 1 && divided.divisor == 1) {
      divided.divisor = origin->divisor;
      divided.name = origin->name;
    }
  }
  Memory *memory = memoryOf(value);
  std::string name;
  if (divided.divisor != 1)
    name = divided.name.empty() ? memory->name + "_d" + std::to_string(index) +
                                      "_div" + std::to_string(divided.divisor)
                                : divided.name;
  else if (dim.letter)
    name = std::string(1, dim.letter);
  else {
    const std::string layout = layoutOf(*memory);
    name = index < layout.size() ? std::string(1, layout[index])
                                 : memory->name + "_d" + std::to_string(index);
  }
  if (!paramIndex.count(name)) {
    paramIndex[name] = paramNames.size();
    paramNames.push_back(name);
    paramSources.push_back(DimSourceAttr::get(func.getContext(), memory->name,
                                              index, divided.divisor));
  }
  return name;
}

FailureOr<SizeAttr> FunctionPlanner::size(const SizeRef &size) {
  SmallVector<Attribute> names;
  for (const DimRef &dim : size.dims) {
    FailureOr<std::string> name = param(dim);
    if (failed(name))
      return failure();
    names.push_back(builder.getStringAttr(*name));
  }
  return SizeAttr::get(func.getContext(), size.constant,
                       builder.getArrayAttr(names), 1);
}

FailureOr<Attribute> FunctionPlanner::stride(Value value, unsigned index) {
  Memory *memory = memoryOf(value);
  auto type = cast<ShapedType>(value.getType());
  std::string name = memory->name + "_stride" + std::to_string(index);
  if (!paramIndex.count(name)) {
    Attribute source;
    if (memory->access != "workspace") {
      source = StrideSourceAttr::get(func.getContext(), memory->name, index);
    } else {
      // Dense in the workspace: the product of the dims after `index`.
      SizeRef dense{1, {}};
      for (int64_t d = index + 1; d < type.getRank(); ++d) {
        if (!type.isDynamicDim(d))
          dense.constant *= type.getDimSize(d);
        else
          dense.dims.push_back(DimRef::of(value, static_cast<unsigned>(d)));
      }
      FailureOr<SizeAttr> product = size(dense);
      if (failed(product))
        return failure();
      source = *product;
    }
    paramIndex[name] = paramNames.size();
    paramNames.push_back(name);
    paramSources.push_back(source);
  }
  return Attribute(ParamAttr::get(func.getContext(), name, 64));
}

FailureOr<Attribute> FunctionPlanner::tensorMap(Value value,
                                                const KernelBinding &binding) {
  Memory *memory = value ? memoryOf(value) : nullptr;
  if (!memory)
    return func.emitError() << "a tensor map '" << binding.name
                            << "' over a value with no memory";
  auto type = cast<ShapedType>(value.getType());
  SmallVector<Attribute> dims, strides;
  if (!binding.mapExtents.empty()) { // a geometry of its own, constant
    for (int64_t extent : binding.mapExtents)
      dims.push_back(builder.getI64IntegerAttr(extent));
    for (int64_t stride : binding.mapStrides)
      strides.push_back(builder.getI64IntegerAttr(stride));
    return Attribute(TensorMapAttr::get(
        func.getContext(), memory->name, binding.mapElementBytes,
        builder.getArrayAttr(dims), builder.getArrayAttr(strides),
        builder.getDenseI64ArrayAttr(binding.box), 128));
  }
  for (auto [position, dim] : llvm::enumerate(binding.mapDims)) {
    if (!type.isDynamicDim(dim)) {
      dims.push_back(builder.getI64IntegerAttr(type.getDimSize(dim)));
    } else {
      FailureOr<std::string> name = param(DimRef::of(value, dim));
      if (failed(name))
        return failure();
      dims.push_back(ParamAttr::get(func.getContext(), *name, 64));
    }
    if (position == 0)
      continue; // the innermost dim is contiguous
    FailureOr<Attribute> step = stride(value, dim);
    if (failed(step))
      return failure();
    strides.push_back(*step);
  }
  return Attribute(TensorMapAttr::get(
      func.getContext(), memory->name,
      static_cast<int64_t>(type.getElementTypeBitWidth() / 8),
      builder.getArrayAttr(dims), builder.getArrayAttr(strides),
      builder.getDenseI64ArrayAttr(binding.box), 128));
}

LogicalResult FunctionPlanner::emit(KernelGroup &kernel) {
  MLIRContext *context = func.getContext();
  // The region: the primitives over block arguments for their inputs.
  OpBuilder::InsertionGuard guard(builder);
  auto kernelOp = builder.create<KernelOp>(
      func.getLoc(), "kernel", 128, 0, /*cooperative=*/false,
      /*memory_bytes=*/SizeAttr(), /*streamed_bytes=*/SizeAttr(),
      /*flops=*/SizeAttr(),
      /*flops_per_exponential=*/IntegerAttr(), /*exponentials=*/SizeAttr(),
      /*polynomial_exponentials=*/SizeAttr(),
      /*flops_per_shared_byte=*/IntegerAttr(),
      /*flops_per_reduced_byte=*/IntegerAttr(),
      /*flops_per_l2_byte=*/IntegerAttr(),
      /*serial_steps=*/SizeAttr(), /*step_bytes=*/SizeAttr(),
      /*step_flops=*/SizeAttr(), /*step_fixed_bytes=*/SizeAttr(),
      /*step_barriers=*/IntegerAttr(), /*step_mma_chain=*/IntegerAttr(),
      /*tf32=*/false);
  kernelOps.push_back(kernelOp);
  Block *body = new Block();
  kernelOp.getBody().push_back(body);
  IRMapping mapping;
  DenseMap<Value, Value> outer; // region value -> function value
  for (Value input : kernel.inputs) {
    Value arg = body->addArgument(input.getType(), input.getLoc());
    mapping.map(input, arg);
    outer[arg] = input;
  }
  builder.setInsertionPointToStart(body);
  for (Operation *op : kernel.ops)
    builder.clone(*op, mapping);
  SmallVector<Value> yielded;
  for (Value output : kernel.outputs) {
    yielded.push_back(mapping.lookup(output));
    outer[mapping.lookup(output)] = output;
  }
  builder.create<YieldOp>(func.getLoc(), yielded);

  KernelBuilder emitter;
  auto root = cast<::rudnn::codegen::KernelEmitOpInterface>(
      body->getTerminator()->getPrevNode());
  if (failed(root.emitKernel(emitter)))
    return failure();
  // One symbol per distinct kernel: a second identical one is launched as
  // the first; a different one under the same entry is renamed.
  std::string entry = emitter.entry();
  std::string source = emitter.source();
  for (int suffix = 1;; ++suffix) {
    auto known = kernelSources.find(entry);
    if (known == kernelSources.end() || known->second == source)
      break;
    entry = emitter.entry() + "_" + std::to_string(suffix);
  }
  if (entry != emitter.entry()) {
    emitter.setEntry(entry);
    source = emitter.source();
  }
  const bool repeated = kernelSources.count(entry);
  if (repeated) {
    kernelOps.pop_back();
    kernelOp.erase();
  } else {
    kernelSources[entry] = source;
    kernelOp.setSymName(entry);
    kernelOp.setThreads(emitter.launch().threads);
    kernelOp.setSharedBytes(emitter.launch().sharedBytes);
    kernelOp.setCooperative(emitter.launch().cooperative);
  }

  // Sizes the emitter read off its region's values, read off the
  // function's instead.
  auto outside = [&](SizeRef extent) {
    for (DimRef &dim : extent.dims)
      if (dim.value)
        dim.value = outer.lookup(dim.value);
    return extent;
  };
  Launch launch;
  launch.kernel = entry;
  for (const SizeRef &extent : emitter.launch().grid) {
    FailureOr<SizeAttr> attr = size(outside(extent));
    if (failed(attr))
      return failure();
    launch.grid.push_back(*attr);
  }
  // The emitter's cost model, where it has one (after the grid, whose dims
  // name the plan's parameters first).
  const auto &model = emitter.launch();
  if (!repeated && model.memoryBytes.constant && model.flops.constant) {
    FailureOr<SizeAttr> bytes = size(outside(model.memoryBytes)),
                        flops = size(outside(model.flops));
    if (failed(bytes) || failed(flops))
      return failure();
    kernelOp.setMemoryBytesAttr(*bytes);
    kernelOp.setFlopsAttr(*flops);
    if (model.streamedBytes.constant) {
      FailureOr<SizeAttr> streamed = size(outside(model.streamedBytes));
      if (failed(streamed))
        return failure();
      kernelOp.setStreamedBytesAttr(*streamed);
    }
    if (model.flopsPerExponential > 0)
      kernelOp.setFlopsPerExponentialAttr(
          builder.getI64IntegerAttr(model.flopsPerExponential));
    if (model.exponentials.constant) {
      FailureOr<SizeAttr> exponentials = size(outside(model.exponentials));
      if (failed(exponentials))
        return failure();
      kernelOp.setExponentialsAttr(*exponentials);
    }
    if (model.polynomialExponentials.constant) {
      FailureOr<SizeAttr> polynomial =
          size(outside(model.polynomialExponentials));
      if (failed(polynomial))
        return failure();
      kernelOp.setPolynomialExponentialsAttr(*polynomial);
    }
    if (model.flopsPerSharedByte > 0)
      kernelOp.setFlopsPerSharedByteAttr(
          builder.getI64IntegerAttr(model.flopsPerSharedByte));
    if (model.flopsPerReducedByte > 0)
      kernelOp.setFlopsPerReducedByteAttr(
          builder.getI64IntegerAttr(model.flopsPerReducedByte));
    if (model.flopsPerL2Byte > 0)
      kernelOp.setFlopsPerL2ByteAttr(
          builder.getI64IntegerAttr(model.flopsPerL2Byte));
  }
  if (!repeated && model.tf32)
    kernelOp.setTf32(true);
  if (!repeated && model.serialSteps.constant) {
    FailureOr<SizeAttr> steps = size(outside(model.serialSteps)),
                        bytes = size(outside(model.stepBytes)),
                        flops = size(outside(model.stepFlops));
    if (failed(steps) || failed(bytes) || failed(flops))
      return failure();
    kernelOp.setSerialStepsAttr(*steps);
    kernelOp.setStepBytesAttr(*bytes);
    kernelOp.setStepFlopsAttr(*flops);
    if (model.stepFixedBytes.constant) {
      FailureOr<SizeAttr> fixed = size(outside(model.stepFixedBytes));
      if (failed(fixed))
        return failure();
      kernelOp.setStepFixedBytesAttr(*fixed);
    }
    if (model.stepBarriers > 0 || model.stepMmaChain > 0) {
      kernelOp.setStepBarriersAttr(
          builder.getI64IntegerAttr(model.stepBarriers));
      kernelOp.setStepMmaChainAttr(
          builder.getI64IntegerAttr(model.stepMmaChain));
    }
  }
  Attribute zero = builder.getI64IntegerAttr(0);
  for (const KernelBinding &binding : emitter.bindings()) {
    Value value = binding.dim.value ? outer.lookup(binding.dim.value) : Value();
    switch (binding.kind) {
    case KernelBinding::Kind::Pointer: {
      Memory *memory = value ? memoryOf(value) : nullptr;
      launch.args.push_back(
          memory ? FlatSymbolRefAttr::get(context, memory->name) : zero);
      break;
    }
    case KernelBinding::Kind::Stride: {
      if (!value || !memoryOf(value)) {
        launch.args.push_back(zero);
        break;
      }
      FailureOr<Attribute> param = stride(value, binding.dim.index);
      if (failed(param))
        return failure();
      launch.args.push_back(*param);
      break;
    }
    case KernelBinding::Kind::Dim: {
      DimRef dim = binding.dim;
      if (dim.value)
        dim.value = value;
      FailureOr<std::string> name = param(dim);
      if (failed(name))
        return failure();
      launch.args.push_back(ParamAttr::get(context, *name, 32));
      break;
    }
    case KernelBinding::Kind::Scalar:
      launch.args.push_back(builder.getF32FloatAttr(binding.scalar));
      break;
    case KernelBinding::Kind::TensorMap: {
      FailureOr<Attribute> map = tensorMap(value, binding);
      if (failed(map))
        return failure();
      launch.args.push_back(*map);
      break;
    }
    case KernelBinding::Kind::Scratch: {
      SizeRef bytes = binding.bytes;
      for (DimRef &dim : bytes.dims)
        if (dim.value)
          dim.value = outer.lookup(dim.value);
      FailureOr<SizeAttr> size = this->size(bytes);
      if (failed(size))
        return failure();
      std::string name = uniqueBufferName(binding.name);
      scratches.push_back({name, *size, launches.size(), binding.zeroed});
      launch.args.push_back(FlatSymbolRefAttr::get(context, name));
      break;
    }
    }
  }
  if (const std::optional<DimRef> &repeat = emitter.launch().repeat) {
    DimRef dim = *repeat;
    if (dim.value)
      dim.value = outer.lookup(dim.value);
    FailureOr<std::string> name = param(dim);
    if (failed(name))
      return failure();
    launch.repeat = *name;
  }
  if (kernel.switchOp) {
    FailureOr<std::string> name =
        param(DimRef::of(kernel.switchOp.getValue(),
                         static_cast<unsigned>(kernel.switchOp.getIndex())));
    if (failed(name))
      return failure();
    ArrayRef<int64_t> cases = kernel.switchOp.getCases();
    launch.guard = *name;
    launch.guardMin = cases[kernel.alternative];
    launch.guardMax = kernel.alternative + 1 < cases.size()
                          ? cases[kernel.alternative + 1] - 1
                          : INT64_MAX;
  }
  launches.push_back(std::move(launch));
  return success();
}

std::string FunctionPlanner::uniqueBufferName(const std::string &name) {
  auto taken = [&](const std::string &candidate) {
    return llvm::any_of(
               memories,
               [&](auto &entry) { return entry.second.name == candidate; }) ||
           llvm::any_of(scratches, [&](const Scratch &scratch) {
             return scratch.name == candidate;
           });
  };
  std::string unique = name;
  for (int suffix = 1; taken(unique); ++suffix)
    unique = name + "_" + std::to_string(suffix);
  return unique;
}

const FunctionPlanner::Launch *
FunctionPlanner::onlyLaunchCaseOf(const Memory &memory) {
  if (memory.access != "workspace")
    return nullptr;
  const Launch *found = nullptr;
  std::optional<std::pair<DimSwitchOp, unsigned>> only;
  for (auto [kernel, launch] : llvm::zip(kernels, launches)) {
    auto touches = [&](const SetVector<Value> &values) {
      return llvm::any_of(
          values, [&](Value value) { return memoryOf(value) == &memory; });
    };
    if (!touches(kernel.inputs) && !touches(kernel.outputs))
      continue;
    if (!kernel.switchOp ||
        (only && *only != std::pair{kernel.switchOp, kernel.alternative}))
      return nullptr;
    only = {kernel.switchOp, kernel.alternative};
    found = &launch;
  }
  return found;
}

LogicalResult FunctionPlanner::plan() {
  if (failed(collect()))
    return failure();
  if (primitives.empty())
    return success(); // nothing to plan
  group();
  if (failed(assignMemory()))
    return failure();

  // Kernels are built in a scratch block, then moved into the plan.
  Block scratch;
  builder.setInsertionPointToStart(&scratch);
  for (KernelGroup &kernel : kernels)
    if (failed(emit(kernel)))
      return failure();

  // Sizes of buffers may add parameters: they come before the plan.
  SmallVector<std::pair<std::string, FailureOr<SizeAttr>>> bufferBytes;
  for (auto &entry : memories)
    if (entry.second.access == "workspace")
      if (failed(bufferBytes
                     .emplace_back(entry.second.name, size(entry.second.bytes))
                     .second))
        return failure();

  OpBuilder planBuilder(func);
  Location loc = func.getLoc();
  // Dims, then strides, then what is derived from dims.
  SmallVector<unsigned> order(paramNames.size());
  std::iota(order.begin(), order.end(), 0);
  auto rank = [&](unsigned index) {
    return isa<DimSourceAttr>(paramSources[index])      ? 0
           : isa<StrideSourceAttr>(paramSources[index]) ? 1
                                                        : 2;
  };
  std::stable_sort(order.begin(), order.end(),
                   [&](unsigned a, unsigned b) { return rank(a) < rank(b); });
  SmallVector<Attribute> names, sources;
  for (unsigned index : order) {
    names.push_back(planBuilder.getStringAttr(paramNames[index]));
    sources.push_back(paramSources[index]);
  }
  auto plan = planBuilder.create<PlanOp>(loc, func.getSymName(),
                                         planBuilder.getArrayAttr(names),
                                         planBuilder.getArrayAttr(sources));
  Block *body = &plan.getBody().emplaceBlock();
  planBuilder.setInsertionPointToStart(body);
  for (auto &entry : memories) {
    const Memory &memory = entry.second;
    // Arguments no kernel reads need no buffer.
    if (memory.access == "in" &&
        llvm::none_of(kernels, [&](const KernelGroup &kernel) {
          return llvm::any_of(kernel.inputs, [&](Value input) {
            return memoryOf(input) == &memory;
          });
        }))
      continue;
    SizeAttr bytes;
    for (auto &[name, size] : bufferBytes)
      if (name == memory.name)
        bytes = *size;
    auto buffer = planBuilder.create<BufferOp>(
        loc, memory.name, memory.access,
        memory.aliases.empty()
            ? FlatSymbolRefAttr()
            : FlatSymbolRefAttr::get(func.getContext(), memory.aliases),
        bytes, SizeAttr(), StringAttr(), IntegerAttr(), IntegerAttr());
    buffer.setZeroed(memory.zeroed);
    if (const Launch *only = onlyLaunchCaseOf(memory)) {
      buffer.setGuardAttr(planBuilder.getStringAttr(*only->guard));
      buffer.setGuardMinAttr(planBuilder.getI64IntegerAttr(only->guardMin));
      buffer.setGuardMaxAttr(planBuilder.getI64IntegerAttr(only->guardMax));
    }
  }
  for (const Scratch &scratch : scratches) {
    const Launch &launch = launches[scratch.launch];
    auto buffer = planBuilder.create<BufferOp>(
        loc, scratch.name, "workspace", FlatSymbolRefAttr(), scratch.bytes,
        SizeAttr(), StringAttr(), IntegerAttr(), IntegerAttr());
    buffer.setZeroed(scratch.zeroed);
    if (launch.guard) {
      buffer.setGuardAttr(planBuilder.getStringAttr(*launch.guard));
      buffer.setGuardMinAttr(planBuilder.getI64IntegerAttr(launch.guardMin));
      buffer.setGuardMaxAttr(planBuilder.getI64IntegerAttr(launch.guardMax));
    }
  }

  auto kernelOp = kernelOps.begin();
  for (const Launch &launch : launches) {
    if (kernelOp != kernelOps.end() &&
        cast<KernelOp>(*kernelOp).getSymName() == launch.kernel) {
      (*kernelOp)->moveBefore(body, body->end());
      ++kernelOp;
    }
    auto op = planBuilder.create<LaunchOp>(
        loc, FlatSymbolRefAttr::get(func.getContext(), launch.kernel),
        planBuilder.getArrayAttr(launch.grid),
        planBuilder.getArrayAttr(launch.args), StringAttr(), IntegerAttr(),
        IntegerAttr(), StringAttr());
    if (launch.guard) {
      op.setGuardAttr(planBuilder.getStringAttr(*launch.guard));
      op.setGuardMinAttr(planBuilder.getI64IntegerAttr(launch.guardMin));
      op.setGuardMaxAttr(planBuilder.getI64IntegerAttr(launch.guardMax));
    }
    if (launch.repeat)
      op.setRepeatAttr(planBuilder.getStringAttr(*launch.repeat));
  }
  func.erase();
  return success();
}

struct PlanPass : public mlir::rudnn::impl::RudnnPlanBase<PlanPass> {
  void runOnOperation() override {
    SmallVector<func::FuncOp> funcs(getOperation().getOps<func::FuncOp>());
    for (func::FuncOp func : funcs) {
      if (func.isExternal())
        continue;
      nameFunctionTensors(func);
      if (failed(FunctionPlanner(func).plan()))
        return signalPassFailure();
    }
  }
};

} // namespace
