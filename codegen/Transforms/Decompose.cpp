//===- Decompose.cpp - Operator ops to primitives -------------------------===//

#include "codegen/Transforms/FunctionTensors.h"
#include "codegen/Transforms/Passes.h"
#include "dialects/IR/RudnnOps.h"

namespace mlir::rudnn {
#define GEN_PASS_DEF_RUDNNDECOMPOSE
#include "codegen/Transforms/Passes.h.inc"
} // namespace mlir::rudnn

using namespace mlir;
using namespace mlir::rudnn;

namespace {

/// Each operator op builds its primitives (OperatorOpInterface::decompose);
/// the pass only walks and erases.
struct DecomposePass
    : public mlir::rudnn::impl::RudnnDecomposeBase<DecomposePass> {
  void runOnOperation() override {
    // Names and layouts come from the contracts, read before they go.
    for (auto func : getOperation().getOps<func::FuncOp>())
      nameFunctionTensors(func);
    SmallVector<OperatorOpInterface> ops;
    getOperation().walk([&](OperatorOpInterface op) { ops.push_back(op); });
    for (OperatorOpInterface op : ops) {
      OpBuilder builder(op);
      if (failed(op.decompose(builder)))
        return signalPassFailure();
      op->erase();
    }
  }
};

} // namespace
