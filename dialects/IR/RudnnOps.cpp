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

LogicalResult mlir::rudnn::verifyKdaInputs(Operation *op, ShapeChecker &shapes,
                                           const KdaInputs &in,
                                           std::optional<uint64_t> chunk,
                                           FloatAttr scale) {
  if (failed(shapes.check("q", in.q, "BTHK")) ||
      failed(shapes.check("k", in.k, "BTHK")) ||
      failed(shapes.check("v", in.v, "BTHV")) ||
      failed(shapes.check("g", in.g, "BTHK")) ||
      failed(shapes.check("beta", in.beta, "BTH")) ||
      (in.initialState &&
       failed(shapes.check("initial_state", in.initialState, "BHKV"))))
    return failure();

  if (failed(checkFloatElementType(op, "q", in.q)) ||
      failed(checkSameElementType(op, "k", in.k, "q", in.q)) ||
      failed(checkSameElementType(op, "v", in.v, "q", in.q)) ||
      failed(checkFloatElementType(op, "g", in.g)) ||
      failed(checkFloatElementType(op, "beta", in.beta)) ||
      (in.initialState &&
       failed(checkF32ElementType(op, "initial_state", in.initialState))))
    return failure();

  for (char dim : kKdaStaticDims) {
    int64_t size = *shapes.lookup(dim);
    if (size < 1 || size > kKdaMaxFeatureDim)
      return op->emitOpError() << "feature dim " << dim << " is " << size
                               << ", expected 1 to " << kKdaMaxFeatureDim;
  }

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

LogicalResult mlir::rudnn::verifyKdaBoundaries(Operation *op,
                                               ShapeChecker &shapes,
                                               StringRef name, Value boundaries,
                                               std::optional<uint64_t> chunk) {
  if (failed(shapes.check(name, boundaries, "NBHKV")) ||
      failed(checkF32ElementType(op, name, boundaries)))
    return failure();
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
                                             f32)
                     : Type();
  build(builder, state, valueType, stateType, boundariesType, q, k, v, g, beta,
        initialState, /*chunk=*/nullptr, /*scale=*/nullptr, saveBoundaries);
}

LogicalResult mlir::rudnn::verifyKdaForward(
    Operation *op, const KdaInputs &inputs, std::optional<uint64_t> chunk,
    FloatAttr scale, Value output, Value finalState, Value boundaries) {
  ShapeChecker shapes(op, kKdaStaticDims);
  if (failed(verifyKdaInputs(op, shapes, inputs, chunk, scale)))
    return failure();
  if (failed(shapes.check("output", output, "BTHV")) ||
      failed(checkSameElementType(op, "output", output, "v", inputs.v)) ||
      failed(shapes.check("final_state", finalState, "BHKV")) ||
      failed(checkF32ElementType(op, "final_state", finalState)))
    return failure();
  if (boundaries)
    return verifyKdaBoundaries(op, shapes, "boundaries", boundaries, chunk);
  return success();
}

LogicalResult KdaOp::verify() {
  if (getSaveBoundaries() && !getBoundaries())
    return emitOpError() << "'save_boundaries' is set but the op has no "
                            "'boundaries' result";
  if (!getSaveBoundaries() && getBoundaries())
    return emitOpError()
           << "'boundaries' result is produced only with 'save_boundaries'";
  return verifyKdaForward(
      *this, {getQ(), getK(), getV(), getG(), getBeta(), getInitialState()},
      getChunk(), getScaleAttr(), getOutput(), getFinalState(),
      getBoundaries());
}

//===----------------------------------------------------------------------===//
// KdaBackwardOp
//===----------------------------------------------------------------------===//

LogicalResult KdaBackwardOp::verify() {
  Operation *op = getOperation();
  ShapeChecker shapes(op, kKdaStaticDims);
  KdaInputs inputs{getQ(), getK(),    getV(),
                   getG(), getBeta(), getInitialState()};
  if (failed(verifyKdaInputs(op, shapes, inputs, getChunk(), getScaleAttr())))
    return failure();

  if (getBoundaries()) {
    if (!getChunk())
      return emitOpError() << "'boundaries' needs an explicit 'chunk' (the "
                              "forward's chunk size)";
    if (failed(verifyKdaBoundaries(op, shapes, "boundaries", getBoundaries(),
                                   getChunk())))
      return failure();
  }

  if (failed(shapes.check("d_output", getDOutput(), "BTHV")) ||
      failed(checkSameElementType(op, "d_output", getDOutput(), "v", getV())))
    return failure();
  if (getDFinalState() &&
      (failed(shapes.check("d_final_state", getDFinalState(), "BHKV")) ||
       failed(checkF32ElementType(op, "d_final_state", getDFinalState()))))
    return failure();

  if (failed(shapes.check("dq", getDq(), "BTHK")) ||
      failed(checkSameElementType(op, "dq", getDq(), "q", getQ())) ||
      failed(shapes.check("dk", getDk(), "BTHK")) ||
      failed(checkSameElementType(op, "dk", getDk(), "k", getK())) ||
      failed(shapes.check("dv", getDv(), "BTHV")) ||
      failed(checkSameElementType(op, "dv", getDv(), "v", getV())) ||
      failed(shapes.check("dg", getDg(), "BTHK")) ||
      failed(checkF32ElementType(op, "dg", getDg())) ||
      failed(shapes.check("dbeta", getDbeta(), "BTH")) ||
      failed(checkSameElementType(op, "dbeta", getDbeta(), "beta", getBeta())))
    return failure();

  if (getInitialState() && !getDInitialState())
    return emitOpError() << "'initial_state' is given, so the op must produce "
                            "'d_initial_state'";
  if (!getInitialState() && getDInitialState())
    return emitOpError() << "'d_initial_state' is produced only when "
                            "'initial_state' is given";
  if (getDInitialState() &&
      (failed(shapes.check("d_initial_state", getDInitialState(), "BHKV")) ||
       failed(checkF32ElementType(op, "d_initial_state", getDInitialState()))))
    return failure();
  return success();
}

// Generated builders and parsers take parameters some ops do not use.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define GET_OP_CLASSES
#include "dialects/IR/RudnnOps.cpp.inc"
#pragma GCC diagnostic pop
