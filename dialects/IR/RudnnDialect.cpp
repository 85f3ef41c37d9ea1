//===- RudnnDialect.cpp - The rudnn dialect -------------------------------===//

#include "dialects/IR/RudnnDialect.h"
#include "dialects/IR/RudnnOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/MathExtras.h"

using namespace mlir;
using namespace mlir::rudnn;

#include "dialects/IR/RudnnDialect.cpp.inc"

void RudnnDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dialects/IR/RudnnOps.cpp.inc"
      >();
  registerAttributes();
}

LogicalResult RudnnDialect::verifyOperationAttribute(Operation *op,
                                                     NamedAttribute attr) {
  if (attr.getName() == kAlignedViewsAttrName ||
      attr.getName() == kAlignedOutputsAttrName) {
    if (!isa<UnitAttr>(attr.getValue()))
      return op->emitError()
             << "'" << attr.getName().strref() << "' must be a unit attribute";
    return success();
  }
  if (attr.getName() != kTargetAttrName)
    return op->emitError() << "unknown attribute '" << attr.getName().strref()
                           << "' of the rudnn dialect";
  if (!isa<ModuleOp>(op))
    return op->emitError() << "'" << kTargetAttrName
                           << "' may only be attached to a builtin.module";
  if (!isa<TargetAttr>(attr.getValue()))
    return op->emitError() << "'" << kTargetAttrName
                           << "' must be a #rudnn.target, got "
                           << attr.getValue();
  return success();
}

/// Checks a `rudnn.name`, `rudnn.layout`, `rudnn.aliases` or `rudnn.align`
/// on a function argument or result.
static LogicalResult verifyValueName(Operation *op, NamedAttribute attr,
                                     StringRef what, unsigned index) {
  if (attr.getName() == RudnnDialect::kAlignAttrName) {
    auto bytes = dyn_cast<IntegerAttr>(attr.getValue());
    if (!bytes || bytes.getInt() < 16 || !llvm::isPowerOf2_64(bytes.getInt()))
      return op->emitError()
             << "'" << RudnnDialect::kAlignAttrName << "' of " << what << " #"
             << index << " must be a power of two of at least 16 bytes, got "
             << attr.getValue();
    return success();
  }
  if (attr.getName() != RudnnDialect::kNameAttrName &&
      attr.getName() != RudnnDialect::kLayoutAttrName &&
      !(attr.getName() == RudnnDialect::kAliasesAttrName &&
        StringRef(what) == "result"))
    return op->emitError() << "unknown attribute '" << attr.getName().strref()
                           << "' of the rudnn dialect on " << what << " #"
                           << index;
  auto name = dyn_cast<StringAttr>(attr.getValue());
  if (!name || name.empty())
    return op->emitError() << "'" << attr.getName().strref() << "' of " << what
                           << " #" << index << " must be a non-empty string";
  return success();
}

LogicalResult RudnnDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                     unsigned argIndex,
                                                     NamedAttribute attr) {
  return verifyValueName(op, attr, "argument", argIndex);
}

LogicalResult RudnnDialect::verifyRegionResultAttribute(Operation *op, unsigned,
                                                        unsigned resultIndex,
                                                        NamedAttribute attr) {
  return verifyValueName(op, attr, "result", resultIndex);
}
