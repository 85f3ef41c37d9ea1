//===- InitRudnn.cpp - Register rudnn's dialects and passes ---------------===//

#include "codegen/InitRudnn.h"
#include "codegen/Emit/Primitives.h"
#include "codegen/Transforms/Passes.h"
#include "dialects/IR/RudnnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

void mlir::rudnn::registerRudnnDialects(DialectRegistry &registry) {
  registry.insert<RudnnDialect, arith::ArithDialect, func::FuncDialect,
                  tensor::TensorDialect>();
  // One line an operator family.
  ::rudnn::codegen::registerAttentionPrimitives(registry);
  ::rudnn::codegen::registerKdaPrimitives(registry);
  ::rudnn::codegen::registerKvCachePrimitives(registry);
  ::rudnn::codegen::registerLstmPrimitives(registry);
  ::rudnn::codegen::registerNormPrimitives(registry);
}

void mlir::rudnn::registerRudnnPipelinePasses() { registerRudnnPasses(); }
