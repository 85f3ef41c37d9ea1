//===- Specialize.cpp - Bind the target, choose open parameters -----------===//

#include "codegen/Transforms/Passes.h"
#include "dialects/IR/RudnnOps.h"

namespace mlir::rudnn {
#define GEN_PASS_DEF_RUDNNSPECIALIZE
#include "codegen/Transforms/Passes.h.inc"
} // namespace mlir::rudnn

using namespace mlir;
using namespace mlir::rudnn;

namespace {

struct SpecializePass
    : public mlir::rudnn::impl::RudnnSpecializeBase<SpecializePass> {
  using RudnnSpecializeBase::RudnnSpecializeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    TargetAttr target = TargetAttr::getChecked(
        [&] { return module.emitError(); }, module.getContext(),
        StringRef(arch.getValue()), lanes.getValue(), smemPerBlock.getValue(),
        smCount.getValue());
    if (!target)
      return signalPassFailure();
    module->setAttr(RudnnDialect::kTargetAttrName, target);

    SpecializeOptions options;
    options.chunk = chunk.getValue();
    WalkResult result = module.walk([&](OperatorOpInterface op) {
      return failed(op.specialize(target, options)) ? WalkResult::interrupt()
                                                    : WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
