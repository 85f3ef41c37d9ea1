//===- RudnnOps.cpp - rudnn operations ------------------------------------===//

#include "dialects/IR/RudnnOps.h"
#include "dialects/IR/KdaRules.h"
#include "dialects/IR/ShapeChecker.h"

#include "llvm/ADT/STLExtras.h"

#include <cmath>

using namespace mlir;
using namespace mlir::rudnn;

bool mlir::rudnn::isValidKdaChunk(int64_t chunk) {
  return llvm::is_contained(kKdaChunkSizes, chunk);
}

double mlir::rudnn::defaultKdaScale(int64_t featureDimK) {
  return 1.0 / std::sqrt(static_cast<double>(featureDimK));
}

//===----------------------------------------------------------------------===//
// KDA: rules shared by the forward and the backward
//===----------------------------------------------------------------------===//

LogicalResult mlir::rudnn::verifyKdaAttributes(Operation *op,
                                               std::optional<uint64_t> chunk,
                                               FloatAttr scale) {
  if (chunk && !isValidKdaChunk(static_cast<int64_t>(*chunk)))
    return op->emitOpError() << "'chunk' must be 16, 32 or 64, got "
                             << static_cast<int64_t>(*chunk);
  if (scale) {
    double value = scale.getValueAsDouble();
    if (!(value > 0.0) || !std::isfinite(value))
      return op->emitOpError()
             << "'scale' must be positive and finite, got " << value;
  }
  return success();
}

LogicalResult mlir::rudnn::verifyKdaChunkCount(Operation *op,
                                               const ShapeChecker &shapes,
                                               StringRef name,
                                               std::optional<uint64_t> chunk) {
  std::optional<int64_t> count = shapes.lookup('N');
  std::optional<int64_t> length = shapes.lookup('T');
  if (!count || !length)
    return success();
  if (!chunk)
    return op->emitOpError()
           << "'" << name
           << "' with a static chunk count needs an explicit 'chunk'";
  int64_t expected = llvm::divideCeil(*length, *chunk);
  if (*count != expected)
    return op->emitOpError()
           << "'" << name << "' dim 0 (chunks) is " << *count << ", expected "
           << expected << " = ceil(T=" << *length << " / chunk=" << *chunk
           << ")";
  return success();
}

//===----------------------------------------------------------------------===//
// KdaOp
//===----------------------------------------------------------------------===//

void KdaOp::build(OpBuilder &builder, OperationState &state, Value q, Value k,
                  Value v, Value g, Value beta, Value initialState,
                  bool saveBoundaries) {
  auto queryType = cast<RankedTensorType>(q.getType());
  auto valueType = cast<RankedTensorType>(v.getType());
  int64_t batch = queryType.getDimSize(0), heads = queryType.getDimSize(2);
  int64_t featureDimK = queryType.getDimSize(3);
  int64_t featureDimV = valueType.getDimSize(3);
  Type f32 = builder.getF32Type();
  auto stateType =
      RankedTensorType::get({batch, heads, featureDimK, featureDimV}, f32);
  Type boundariesType =
      saveBoundaries ? RankedTensorType::get({ShapedType::kDynamic, batch,
                                              heads, featureDimK, featureDimV},
                                             queryType.getElementType())
                     : Type();
  build(builder, state, valueType, stateType, boundariesType, q, k, v, g, beta,
        initialState, /*chunk=*/nullptr, /*scale=*/nullptr, saveBoundaries);
}

LogicalResult KdaOp::verify() {
  if (getSaveBoundaries() && !getBoundaries())
    return emitOpError() << "'save_boundaries' is set but the op has no "
                            "'boundaries' result";
  if (!getSaveBoundaries() && getBoundaries())
    return emitOpError()
           << "'boundaries' result is produced only with 'save_boundaries'";
  return verifyKdaForward(*this);
}

//===----------------------------------------------------------------------===//
// KdaBackwardOp
//===----------------------------------------------------------------------===//

LogicalResult KdaBackwardOp::verify() {
  if (getInitialState() && !getDInitialState())
    return emitOpError() << "'initial_state' is given, so the op must produce "
                            "'d_initial_state'";
  if (!getInitialState() && getDInitialState())
    return emitOpError() << "'d_initial_state' is produced only when "
                            "'initial_state' is given";
  if (getBoundaries() && !getChunk())
    return emitOpError() << "'boundaries' needs an explicit 'chunk' (the "
                            "forward's chunk size)";
  ShapeChecker shapes(*this, kKdaStaticDims);
  if (failed(verifyOperatorContract(*this, shapes)) ||
      failed(verifyKdaAttributes(*this, getChunk(), getScaleAttr())))
    return failure();
  if (getBoundaries())
    return verifyKdaChunkCount(*this, shapes, "boundaries", getChunk());
  return success();
}

// Generated builders and parsers take parameters some ops do not use.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define GET_OP_CLASSES
#include "dialects/IR/RudnnOps.cpp.inc"
#pragma GCC diagnostic pop
