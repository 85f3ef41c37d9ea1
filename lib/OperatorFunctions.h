//===- OperatorFunctions.h - Operator calls as cached functions -*- C++ -*-===//
//
// An operator entry point (kdaForward, attentionForward, ...) writes its
// call's signature once as a rudnn IR function and calls it through the
// Program API, which compiles it at its first call: one function per
// context and signature.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_LIB_OPERATORFUNCTIONS_H
#define RUDNN_LIB_OPERATORFUNCTIONS_H

#include "rudnn/program.h"
#include "rudnn/types.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>
#include <vector>

namespace rudnn {

/// The MLIR element type of `dtype`.
mlir::Type mlirElementType(mlir::Builder &builder, DType dtype);

/// The function `build` writes (a module holding one func.func), parsed
/// into a Program module once per context and signature.
Function cachedFunction(
    Context &context, const std::string &signature,
    llvm::function_ref<mlir::OwningOpRef<mlir::ModuleOp>(mlir::MLIRContext &)>
        build);

/// The views `views` holds (null entries are absent optional tensors,
/// which the operator's function leaves out), in order: a call's argument
/// or result list.
std::vector<TensorView>
presentViews(const std::vector<const TensorView *> &views);

} // namespace rudnn

#endif // RUDNN_LIB_OPERATORFUNCTIONS_H
