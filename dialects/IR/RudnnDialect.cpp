//===- RudnnDialect.cpp - The rudnn dialect -------------------------------===//

#include "dialects/IR/RudnnDialect.h"
#include "dialects/IR/RudnnOps.h"

#include "mlir/IR/BuiltinOps.h"

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
