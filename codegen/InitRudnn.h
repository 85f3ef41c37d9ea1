//===- InitRudnn.h - Register rudnn's dialects and passes -------*- C++ -*-===//

#ifndef RUDNN_CODEGEN_INITRUDNN_H
#define RUDNN_CODEGEN_INITRUDNN_H

#include "mlir/IR/DialectRegistry.h"

namespace mlir::rudnn {

/// The dialects rudnn IR is written in: rudnn plus the builtin-adjacent
/// func, arith and tensor dialects.
void registerRudnnDialects(DialectRegistry &registry);

/// Every rudnn pass, for command-line tools and pass pipelines.
void registerRudnnPipelinePasses();

} // namespace mlir::rudnn

#endif // RUDNN_CODEGEN_INITRUDNN_H
