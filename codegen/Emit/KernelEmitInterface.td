//===- KernelEmitInterface.td - Primitives as CUDA C++ ------*- tablegen -*-===//
//
// The code generator's side of a primitive: the dialect's
// PrimitiveOpInterface says how rudnn-plan groups and stores primitives,
// this one how the last primitive of a kernel writes it. Attached with the
// primitive interface by attachPrimitives (KernelEmitInterface.h).
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_KERNEL_EMIT_INTERFACE_TD
#define RUDNN_KERNEL_EMIT_INTERFACE_TD

include "mlir/IR/OpBase.td"

def Rudnn_KernelEmitOpInterface : OpInterface<"KernelEmitOpInterface"> {
  let cppNamespace = "::rudnn::codegen";
  let description = [{
    A primitive that can end a kernel: rudnn-plan asks the last primitive of
    each kernel region to write the kernel (its device-library call, the
    bindings its signature is built from, its launch geometry), reaching
    the region's other primitives through its operands.
  }];
  let methods = [
    InterfaceMethod<
        "Emits the kernel this op ends into `builder`.",
        "::mlir::LogicalResult", "emitKernel",
        (ins "::rudnn::codegen::KernelBuilder &":$builder)>,
  ];
}

#endif // RUDNN_KERNEL_EMIT_INTERFACE_TD
