//===- RudnnPlanOps.cpp - Kernels, buffers and plans ----------------------===//

#include "dialects/IR/RudnnOps.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::rudnn;

static bool isFloat16Or32(Type type) {
  return type.isF32() || type.isF16() || type.isBF16();
}

/// Every name a size refers to is a parameter of the plan.
static LogicalResult checkSize(Operation *op, SizeAttr size, StringRef what,
                               const llvm::StringSet<> &params) {
  for (Attribute name : size.getParams())
    if (!params.contains(cast<StringAttr>(name).getValue()))
      return op->emitOpError() << what << " refers to " << name
                               << ", which is not a parameter of the plan";
  return success();
}

/// A parameter's source reads a buffer a caller binds.
static LogicalResult checkSource(PlanOp plan, unsigned index,
                                 Attribute source) {
  StringRef buffer;
  if (auto dim = dyn_cast<DimSourceAttr>(source))
    buffer = dim.getBuffer();
  else if (auto stride = dyn_cast<StrideSourceAttr>(source))
    buffer = stride.getBuffer();
  else
    return plan.emitOpError()
           << "source #" << index
           << " must be a #rudnn.dim or #rudnn.stride, got " << source;
  auto bound = plan.lookupSymbol<BufferOp>(buffer);
  if (!bound || bound.getAccess() == "workspace")
    return plan.emitOpError() << "source #" << index << " reads '" << buffer
                              << "', which is not an argument or result "
                                 "buffer of the plan";
  return success();
}

LogicalResult PlanOp::verifyRegions() {
  llvm::StringSet<> params;
  for (Attribute name : getParams())
    if (!params.insert(cast<StringAttr>(name).getValue()).second)
      return emitOpError() << "parameter " << name << " is named twice";
  if (std::optional<ArrayAttr> sources = getSources()) {
    if (sources->size() != getParams().size())
      return emitOpError() << "has " << sources->size() << " sources for "
                           << getParams().size() << " parameters";
    for (auto [index, source] : llvm::enumerate(*sources))
      if (failed(checkSource(*this, index, source)))
        return failure();
  }

  for (Operation &op : getBody().front()) {
    if (auto buffer = dyn_cast<BufferOp>(op)) {
      if (auto alias = buffer.getAliasesAttr()) {
        auto target = lookupSymbol<BufferOp>(alias);
        if (!target || target.getAccess() != "in")
          return buffer.emitOpError()
                 << "aliases " << alias << ", which is not an 'in' buffer of "
                 << "the plan";
      }
      if ((buffer.getBytesAttr() &&
           failed(
               checkSize(buffer, buffer.getBytesAttr(), "'bytes'", params))) ||
          (buffer.getOffsetAttr() &&
           failed(
               checkSize(buffer, buffer.getOffsetAttr(), "'offset'", params))))
        return failure();
      continue;
    }
    if (isa<KernelOp>(op))
      continue;
    auto launch = dyn_cast<LaunchOp>(op);
    if (!launch)
      return op.emitOpError() << "cannot be part of a rudnn.plan";

    if (!lookupSymbol<KernelOp>(launch.getKernelAttr()))
      return launch.emitOpError()
             << "launches " << launch.getKernelAttr()
             << ", which is not a rudnn.kernel of the plan";
    // Entries that are not sizes are the launch verifier's to report.
    for (Attribute size : launch.getGrid())
      if (auto dims = dyn_cast<SizeAttr>(size);
          dims && failed(checkSize(launch, dims, "the grid", params)))
        return failure();
    if (launch.getRepeat() && !params.contains(*launch.getRepeat()))
      return launch.emitOpError() << "repeats over '" << *launch.getRepeat()
                                  << "', which is not a parameter of the plan";
    if (launch.getGuard() && !params.contains(*launch.getGuard()))
      return launch.emitOpError() << "is guarded by '" << *launch.getGuard()
                                  << "', which is not a parameter of the plan";
    for (auto [index, arg] : llvm::enumerate(launch.getArgs())) {
      if (auto buffer = dyn_cast<FlatSymbolRefAttr>(arg)) {
        if (!lookupSymbol<BufferOp>(buffer))
          return launch.emitOpError() << "argument #" << index << " binds "
                                      << buffer << ", which is not a buffer";
      } else if (auto param = dyn_cast<ParamAttr>(arg)) {
        if (!params.contains(param.getName()))
          return launch.emitOpError()
                 << "argument #" << index << " takes '" << param.getName()
                 << "', which is not a parameter of the plan";
      } else if (auto null = dyn_cast<IntegerAttr>(arg)) {
        if (null.getValue() != 0)
          return launch.emitOpError() << "argument #" << index
                                      << ": integers stand for null pointers "
                                         "and must be 0";
      } else if (auto constant = dyn_cast<FloatAttr>(arg)) {
        if (!constant.getType().isF32())
          return launch.emitOpError()
                 << "argument #" << index << ": constants are f32";
      } else {
        return launch.emitOpError()
               << "argument #" << index << " is neither a buffer, a null "
               << "pointer, a parameter nor an f32 constant: " << arg;
      }
    }
  }
  return success();
}

LogicalResult BufferOp::verify() {
  StringRef access = getAccess();
  if (access != "in" && access != "out" && access != "inout" &&
      access != "workspace")
    return emitOpError() << "access must be in, out, inout or workspace, got '"
                         << access << "'";
  if (access == "workspace" && !getBytesAttr())
    return emitOpError() << "a workspace buffer needs 'bytes'";
  if (access != "workspace" && (getBytesAttr() || getOffsetAttr()))
    return emitOpError() << "only workspace buffers have 'bytes' and 'offset'";
  if (getAliases() && access != "out")
    return emitOpError() << "only an 'out' buffer may alias another";
  return success();
}

LogicalResult KernelOp::verify() {
  StringRef stage = getStage();
  static constexpr StringRef kStages[] = {
      "prepare", "propagate",      "output",   "recurrent",
      "restore", "state_gradient", "gradients"};
  if (!llvm::is_contained(kStages, stage))
    return emitOpError()
           << "stage must be prepare, propagate, output, "
              "recurrent, restore, state_gradient or gradients, got '"
           << stage << "'";
  if (getThreads() < 1 || getThreads() > 1024)
    return emitOpError() << "threads must be in [1, 1024], got "
                         << getThreads();
  // The largest opt-in shared memory of any GPU rudnn targets (sm_90).
  constexpr int64_t kMaxSharedBytes = 227 * 1024;
  const int64_t shared = getSharedBytesAttr().getInt();
  if (shared < 0 || shared > kMaxSharedBytes)
    return emitOpError() << "shared_bytes must be in [0, " << kMaxSharedBytes
                         << "], got " << shared;
  for (auto [name, dim] : {std::pair{"K", getK()}, std::pair{"V", getV()}})
    if (dim < 1 || dim > static_cast<uint64_t>(kKdaMaxFeatureDim))
      return emitOpError() << name << " must be in [1, 256], got " << dim;
  if (!isValidKdaChunk(static_cast<int64_t>(getChunk())))
    return emitOpError() << "'chunk' must be 16, 32 or 64, got " << getChunk();
  for (auto [name, type] :
       {std::pair{"input", getInput()}, std::pair{"gate", getGate()},
        std::pair{"beta", getBeta()}})
    if (!isFloat16Or32(type))
      return emitOpError() << "'" << name << "' must be f32, f16 or bf16, got "
                           << type;
  return success();
}

LogicalResult LaunchOp::verify() {
  if (getGrid().size() != 3 || !llvm::all_of(getGrid(), [](Attribute size) {
        return isa<SizeAttr>(size);
      }))
    return emitOpError() << "grid must be three #rudnn.size";
  bool guarded = getGuard().has_value();
  if (guarded != getGuardMin().has_value() ||
      guarded != getGuardMax().has_value())
    return emitOpError() << "'guard', 'guard_min' and 'guard_max' go together";
  if (guarded && *getGuardMin() > *getGuardMax())
    return emitOpError() << "guard range [" << *getGuardMin() << ", "
                         << *getGuardMax() << "] is empty";
  return success();
}
