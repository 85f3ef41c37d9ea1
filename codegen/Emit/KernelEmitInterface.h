//===- KernelEmitInterface.h - Primitives as CUDA C++ -----------*- C++ -*-===//
//
// KernelEmitOpInterface, and attachPrimitive: what each family's
// primitives register, one model per op implementing both the dialect's
// PrimitiveOpInterface (kernel group, result storage) and the kernel it
// emits.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_CODEGEN_EMIT_KERNELEMITINTERFACE_H
#define RUDNN_CODEGEN_EMIT_KERNELEMITINTERFACE_H

#include "codegen/Emit/KernelBuilder.h"
#include "dialects/IR/RudnnInterfaces.h"

#include "mlir/IR/OpDefinition.h"

#include "codegen/Emit/KernelEmitInterface.h.inc"

namespace rudnn::codegen {

/// The kernel emission of `Model`, a PrimitiveOpInterface model of `Op`
/// with an emitKernel(Operation *, KernelBuilder &) const of its own.
template <typename Op, typename Model>
struct EmitThroughModel
    : KernelEmitOpInterface::ExternalModel<EmitThroughModel<Op, Model>, Op> {
  mlir::LogicalResult emitKernel(mlir::Operation *op,
                                 KernelBuilder &builder) const {
    return Model().emitKernel(op, builder);
  }
};

/// Attaches `Model` to `Op` as its primitive interface and its kernel
/// emission.
template <typename Op, typename Model>
void attachPrimitive(mlir::MLIRContext &context) {
  Op::template attachInterface<Model>(context);
  Op::template attachInterface<EmitThroughModel<Op, Model>>(context);
}

} // namespace rudnn::codegen

#endif // RUDNN_CODEGEN_EMIT_KERNELEMITINTERFACE_H
