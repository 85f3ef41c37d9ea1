//===- AlignedViews.cpp - Primitives reading views that promise alignment -===//

#include "dialects/IR/RudnnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Interfaces/CastInterfaces.h"

using namespace mlir;
using namespace mlir::rudnn;

namespace {

/// Whether `value` is a function argument promising 16-byte aligned rows,
/// or a value the function returns (through casts) with that promise.
bool promisesAlignedRows(Value value) {
  auto promised = [](IntegerAttr bytes) {
    return bytes && bytes.getInt() >= 16;
  };
  if (auto argument = dyn_cast_or_null<BlockArgument>(value)) {
    auto func = dyn_cast<func::FuncOp>(argument.getOwner()->getParentOp());
    return func && promised(func.getArgAttrOfType<IntegerAttr>(
                       argument.getArgNumber(), RudnnDialect::kAlignAttrName));
  }
  if (!value || value.use_empty())
    return false;
  for (OpOperand &use : value.getUses()) {
    Operation *user = use.getOwner();
    if (isa<CastOpInterface>(user) && user->getNumResults() == 1) {
      if (!promisesAlignedRows(user->getResult(0)))
        return false;
      continue;
    }
    auto ret = dyn_cast<func::ReturnOp>(user);
    auto func = ret ? ret->getParentOfType<func::FuncOp>() : func::FuncOp();
    if (!func || !promised(func.getResultAttrOfType<IntegerAttr>(
                     use.getOperandNumber(), RudnnDialect::kAlignAttrName)))
      return false;
  }
  return true;
}

} // namespace

bool mlir::rudnn::promisesAlignedViews(ArrayRef<Value> views) {
  return llvm::all_of(views, promisesAlignedRows);
}

void mlir::rudnn::markAlignedViews(Operation *op, Operation *before,
                                   ArrayRef<Value> views, StringRef marker) {
  if (!promisesAlignedViews(views))
    return;
  for (Operation *created = before ? before->getNextNode()
                                   : &op->getBlock()->front();
       created != op; created = created->getNextNode())
    created->walk([&](Operation *nested) {
      if (isa_and_nonnull<RudnnDialect>(nested->getDialect()) &&
          !isa<DimSwitchOp, YieldOp, ViewLikeOpInterface>(nested))
        nested->setAttr(marker, UnitAttr::get(nested->getContext()));
    });
}
