//===- RudnnPlanOps.cpp - Kernels, buffers and plans ----------------------===//

#include "dialects/IR/RudnnOps.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::rudnn;

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
  else if (isa<SizeAttr, SplitSourceAttr, SumSourceAttr>(source)) {
    // Derived from parameters before it, so each is computed in order.
    SmallVector<SizeAttr> sizes;
    if (auto split = dyn_cast<SplitSourceAttr>(source))
      sizes = {split.getBlocks(), split.getMax()};
    else if (auto sum = dyn_cast<SumSourceAttr>(source))
      for (Attribute term : sum.getTerms())
        sizes.push_back(cast<SizeAttr>(term));
    else
      sizes = {cast<SizeAttr>(source)};
    auto params = plan.getParams().getValue().take_front(index);
    for (SizeAttr size : sizes)
      for (Attribute name : size.getParams())
        if (!llvm::is_contained(params, name))
          return plan.emitOpError()
                 << "source #" << index << " refers to " << name
                 << ", which is not a parameter before it";
    return success();
  } else
    return plan.emitOpError() << "source #" << index
                              << " must be a #rudnn.dim, #rudnn.stride, "
                                 "#rudnn.size, #rudnn.split or #rudnn.sum, "
                                 "got "
                              << source;
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
      } else if (auto map = dyn_cast<TensorMapAttr>(arg)) {
        if (!lookupSymbol<BufferOp>(map.getBuffer()))
          return launch.emitOpError()
                 << "argument #" << index << " maps '" << map.getBuffer()
                 << "', which is not a buffer";
        for (Attribute extent :
             llvm::concat<const Attribute>(map.getDims(), map.getStrides()))
          if (auto param = dyn_cast<ParamAttr>(extent);
              param && !params.contains(param.getName()))
            return launch.emitOpError()
                   << "argument #" << index << "'s tensor map takes '"
                   << param.getName()
                   << "', which is not a parameter of the plan";
      } else {
        return launch.emitOpError()
               << "argument #" << index << " is neither a buffer, a null "
               << "pointer, a parameter, an f32 constant nor a tensor map: "
               << arg;
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
  if (getZeroed() && access != "workspace")
    return emitOpError() << "only a workspace buffer is 'zeroed'";
  return success();
}

LogicalResult KernelOp::verify() {
  if (getThreads() < 1 || getThreads() > 1024)
    return emitOpError() << "threads must be in [1, 1024], got "
                         << getThreads();
  // The largest opt-in shared memory of any GPU rudnn targets (sm_90).
  constexpr int64_t kMaxSharedBytes = 227 * 1024;
  const int64_t shared = getSharedBytesAttr().getInt();
  if (shared < 0 || shared > kMaxSharedBytes)
    return emitOpError() << "shared_bytes must be in [0, " << kMaxSharedBytes
                         << "], got " << shared;
  // The report divides the FLOPs by them.
  for (auto [name, per] :
       {std::pair{"flops_per_exponential", getFlopsPerExponentialAttr()},
        std::pair{"flops_per_shared_byte", getFlopsPerSharedByteAttr()},
        std::pair{"flops_per_reduced_byte", getFlopsPerReducedByteAttr()},
        std::pair{"flops_per_l2_byte", getFlopsPerL2ByteAttr()}})
    if (per && per.getInt() < 1)
      return emitOpError() << name << " must be positive, got " << per.getInt();
  if (getBody().empty())
    return emitOpError() << "needs a body";
  Block &body = getBody().front();
  if (body.empty() || !isa<YieldOp>(body.back()))
    return emitOpError() << "body must end with rudnn.yield";
  for (Operation &op : body.without_terminator())
    if (!isa<PrimitiveOpInterface>(op))
      return op.emitOpError() << "is not a primitive: a rudnn.kernel holds "
                                 "primitives only";
  return success();
}

// %r = rudnn.dim_switch %v[1] cases [1, 2] {attrs} : type -> types {...}, {...}
ParseResult DimSwitchOp::parse(OpAsmParser &parser, OperationState &result) {
  OpAsmParser::UnresolvedOperand value;
  Type valueType;
  int64_t index = 0;
  SmallVector<Type> resultTypes;
  if (parser.parseOperand(value) || parser.parseLSquare() ||
      parser.parseInteger(index) || parser.parseRSquare() ||
      parser.parseKeyword("cases"))
    return failure();
  Attribute cases = DenseI64ArrayAttr::parse(parser, Type());
  if (!cases)
    return failure();
  result.addAttribute(getCasesAttrName(result.name), cases);
  result.addAttribute(getIndexAttrName(result.name),
                      parser.getBuilder().getI64IntegerAttr(index));
  if (parser.parseOptionalAttrDict(result.attributes) || parser.parseColon() ||
      parser.parseType(valueType) || parser.parseArrow() ||
      parser.parseTypeList(resultTypes) ||
      parser.resolveOperand(value, valueType, result.operands))
    return failure();
  result.addTypes(resultTypes);
  do {
    Region &region = *result.addRegion();
    if (parser.parseRegion(region))
      return failure();
    // A case reads values defined before the switch only. A name it uses
    // that is still unresolved could otherwise bind to a later case's value,
    // which a parse error there would free under this case's uses.
    WalkResult forward = region.walk([](Operation *op) {
      for (Value operand : op->getOperands())
        if (Operation *definer = operand.getDefiningOp();
            definer && !definer->getBlock())
          return WalkResult::interrupt();
      return WalkResult::advance();
    });
    if (forward.wasInterrupted())
      return parser.emitError(parser.getCurrentLocation())
             << "a rudnn.dim_switch case uses a value defined after it";
  } while (succeeded(parser.parseOptionalComma()));
  return success();
}

void DimSwitchOp::print(OpAsmPrinter &printer) {
  printer << " " << getValue() << "[" << getIndex() << "] cases ";
  getCasesAttr().print(printer);
  printer.printOptionalAttrDict((*this)->getAttrs(),
                                {getCasesAttrName(), getIndexAttrName()});
  printer << " : " << getValue().getType() << " -> ";
  llvm::interleaveComma(getResultTypes(), printer);
  printer << " ";
  llvm::interleaveComma(getAlternatives(), printer,
                        [&](Region &region) { printer.printRegion(region); });
}

LogicalResult DimSwitchOp::verify() {
  if (getNumResults() == 0)
    return emitOpError() << "computes nothing: it needs results";
  ArrayRef<int64_t> cases = getCases();
  if (cases.empty() || cases.size() != getAlternatives().size())
    return emitOpError() << "needs one case per region, got " << cases.size()
                         << " cases and " << getAlternatives().size()
                         << " regions";
  bool ascending = cases.front() >= 0;
  for (size_t i = 1; i < cases.size(); ++i)
    ascending &= cases[i - 1] < cases[i];
  if (!ascending)
    return emitOpError() << "cases must be ascending lower bounds from 0 up";
  auto type = cast<RankedTensorType>(getValue().getType());
  if (getIndex() >= static_cast<uint64_t>(type.getRank()))
    return emitOpError() << "switches on dim " << getIndex() << " of a rank-"
                         << type.getRank() << " tensor";
  for (Region &region : getAlternatives()) {
    if (region.empty() || region.front().empty())
      return emitOpError() << "each case needs a body";
    auto yield = dyn_cast<YieldOp>(region.front().back());
    if (!yield)
      return emitOpError() << "each case must end with rudnn.yield";
    if (yield.getValues().getTypes() != getResultTypes())
      return yield.emitOpError()
             << "yields types that are not the rudnn.dim_switch's results";
  }
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

// Generated builders and parsers take parameters some ops do not use.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define GET_OP_CLASSES
#include "dialects/IR/RudnnPlanOps.cpp.inc"
#pragma GCC diagnostic pop
