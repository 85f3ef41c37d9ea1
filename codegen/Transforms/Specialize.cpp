//===- Specialize.cpp - Bind the target, choose open parameters -----------===//

#include "codegen/Transforms/Passes.h"
#include "codegen/Transforms/TargetPolicy.h"
#include "dialects/IR/RudnnOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/TypeSwitch.h"

namespace mlir::rudnn {
#define GEN_PASS_DEF_RUDNNSPECIALIZE
#include "codegen/Transforms/Passes.h.inc"
} // namespace mlir::rudnn

using namespace mlir;
using namespace mlir::rudnn;

namespace {

/// Fills the chunk and scale of a KDA op (forward or backward) when absent.
template <typename KdaLikeOp>
LogicalResult specializeKda(KdaLikeOp op, int64_t requestedChunk,
                            TargetAttr target) {
  auto queryType = cast<RankedTensorType>(op.getQ().getType());
  auto valueType = cast<RankedTensorType>(op.getV().getType());
  int64_t featureDimK = queryType.getDimSize(3);
  int64_t featureDimV = valueType.getDimSize(3);
  Builder builder(op.getContext());

  if (!op.getChunk()) {
    std::optional<int64_t> chunk =
        requestedChunk ? std::optional<int64_t>(requestedChunk)
                       : chooseKdaChunk(featureDimK, featureDimV,
                                        target.getSmemPerBlock());
    if (!chunk)
      return op.emitOpError()
             << "no chunk size fits K = " << featureDimK
             << ", V = " << featureDimV
             << " in smem_per_block = " << target.getSmemPerBlock()
             << " bytes (needs "
             << kdaChunkSharedBytes(16, featureDimK, featureDimV)
             << " for chunk 16)";
    op.setChunkAttr(builder.getI64IntegerAttr(*chunk));
  }
  if (!op.getScaleAttr())
    op.setScaleAttr(builder.getF32FloatAttr(defaultKdaScale(featureDimK)));
  return success();
}

struct SpecializePass
    : public rudnn::impl::RudnnSpecializeBase<SpecializePass> {
  using RudnnSpecializeBase::RudnnSpecializeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    TargetAttr target = TargetAttr::getChecked(
        [&] { return module.emitError(); }, module.getContext(),
        StringRef(arch.getValue()), lanes.getValue(), smemPerBlock.getValue(),
        smCount.getValue());
    if (!target)
      return signalPassFailure();
    if (chunk != 0 && !isValidKdaChunk(chunk)) {
      module.emitError() << "rudnn-specialize: option 'chunk' must be 0 "
                            "(choose), 16, 32 or 64, got "
                         << chunk.getValue();
      return signalPassFailure();
    }
    module->setAttr(RudnnDialect::kTargetAttrName, target);

    WalkResult result = module.walk([&](Operation *op) {
      LogicalResult status =
          llvm::TypeSwitch<Operation *, LogicalResult>(op)
              .Case<KdaOp, KdaBackwardOp>([&](auto kda) {
                return specializeKda(kda, chunk.getValue(), target);
              })
              .Default([](Operation *) { return success(); });
      return failed(status) ? WalkResult::interrupt() : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
