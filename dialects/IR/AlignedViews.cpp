//===- AlignedViews.cpp - Primitives reading views that promise alignment -===//

#include "dialects/IR/RudnnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

using namespace mlir;
using namespace mlir::rudnn;

namespace {

/// Whether `value` is a function argument promising 16-byte aligned rows.
bool promisesAlignedRows(Value value) {
  auto argument = dyn_cast_or_null<BlockArgument>(value);
  auto func = argument
                  ? dyn_cast<func::FuncOp>(argument.getOwner()->getParentOp())
                  : func::FuncOp();
  if (!func)
    return false;
  auto bytes = func.getArgAttrOfType<IntegerAttr>(argument.getArgNumber(),
                                                  RudnnDialect::kAlignAttrName);
  return bytes && bytes.getInt() >= 16;
}

} // namespace

void mlir::rudnn::markAlignedViews(Operation *op, Operation *before,
                                   ArrayRef<Value> views) {
  if (!llvm::all_of(views, promisesAlignedRows))
    return;
  for (Operation *created = before ? before->getNextNode()
                                   : &op->getBlock()->front();
       created != op; created = created->getNextNode())
    created->walk([](Operation *nested) {
      if (isa_and_nonnull<RudnnDialect>(nested->getDialect()) &&
          !isa<DimSwitchOp, YieldOp, ViewLikeOpInterface>(nested))
        nested->setAttr(RudnnDialect::kAlignedViewsAttrName,
                        UnitAttr::get(nested->getContext()));
    });
}
