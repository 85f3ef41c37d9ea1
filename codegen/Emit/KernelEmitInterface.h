//===- KernelEmitInterface.h - Primitives as CUDA C++ -----------*- C++ -*-===//
//
// KernelEmitOpInterface, and attachPrimitives: what each family's
// primitives register, one model per op implementing both the dialect's
// PrimitiveOpInterface (kernel group, result storage) and the kernel it
// emits.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_CODEGEN_EMIT_KERNELEMITINTERFACE_H
#define RUDNN_CODEGEN_EMIT_KERNELEMITINTERFACE_H

#include "codegen/Emit/KernelBuilder.h"
#include "dialects/IR/RudnnDialect.h"
#include "dialects/IR/RudnnInterfaces.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/OpDefinition.h"

// The generated models do not use their `impl` parameter.
#if defined(__clang__)
#pragma clang diagnostic push
#pragma clang diagnostic ignored "-Wunused-parameter"
#endif
#include "codegen/Emit/KernelEmitInterface.h.inc"
#if defined(__clang__)
#pragma clang diagnostic pop
#endif

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

/// An op and the model that makes it a primitive: the model is attached as
/// the op's primitive interface and its kernel emission.
template <typename Op, typename Model> struct Primitive {
  static void attach(mlir::MLIRContext &context) {
    Op::template attachInterface<Model>(context);
    Op::template attachInterface<EmitThroughModel<Op, Model>>(context);
  }
};

/// Attaches each `Primitive<Op, Model>` when the registry's context loads
/// the rudnn dialect: what a family's `register<Family>Primitives` does.
template <typename... Primitives>
void attachPrimitives(mlir::DialectRegistry &registry) {
  registry.addExtension(
      +[](mlir::MLIRContext *context, mlir::rudnn::RudnnDialect *) {
        (Primitives::attach(*context), ...);
      });
}

} // namespace rudnn::codegen

#endif // RUDNN_CODEGEN_EMIT_KERNELEMITINTERFACE_H
