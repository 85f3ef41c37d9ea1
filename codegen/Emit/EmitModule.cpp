//===- EmitModule.cpp - The CUDA kernels of a planned module --------------===//

#include "codegen/Emit/EmitModule.h"
#include "codegen/Emit/KernelEmitInterface.h"

using namespace mlir;
using namespace mlir::rudnn;

namespace rudnn::codegen {

LogicalResult emitKernel(KernelOp kernel, KernelBuilder &builder) {
  Block &body = kernel.getBody().front();
  Operation *last = body.getTerminator()->getPrevNode();
  auto root =
      last ? dyn_cast<KernelEmitOpInterface>(last) : KernelEmitOpInterface();
  if (!root)
    return kernel.emitOpError() << "holds no primitive to emit";
  if (failed(root.emitKernel(builder)))
    return failure();
  if (!builder.conflict().empty())
    return kernel.emitOpError() << "cannot be emitted: " << builder.conflict();
  builder.setEntry(kernel.getSymName().str());
  return success();
}

FailureOr<std::vector<EmittedKernel>> emitKernels(ModuleOp module) {
  std::vector<EmittedKernel> kernels;
  bool ok = true;
  module.walk([&](Operation *op) {
    if (isa<OperatorOpInterface>(op)) {
      op->emitError() << "cannot emit an operator op: run rudnn-specialize "
                         "and rudnn-decompose first";
      ok = false;
      return WalkResult::skip();
    }
    if (isa<PrimitiveOpInterface>(op) && !op->getParentOfType<KernelOp>()) {
      op->emitError() << "cannot emit a primitive outside a kernel: run "
                         "rudnn-plan first";
      ok = false;
      return WalkResult::skip();
    }
    if (auto kernel = dyn_cast<KernelOp>(op)) {
      KernelBuilder builder;
      if (failed(emitKernel(kernel, builder)))
        ok = false;
      else
        kernels.push_back(
            {builder.entry(), builder.source(), builder.launch().threads,
             builder.launch().sharedBytes, builder.archSpecific()});
      return WalkResult::skip();
    }
    return WalkResult::advance();
  });
  if (!ok)
    return failure();
  return kernels;
}

} // namespace rudnn::codegen
