//===- RudnnKdaInputOps.cpp - KDA's input transforms' rules ---------------===//

#include "dialects/IR/RudnnOps.h"
#include "dialects/IR/ShapeChecker.h"

using namespace mlir;
using namespace mlir::rudnn;

namespace {

/// The block of tokens each gate-backward partial sums.
constexpr int64_t kGatePartialTokens = 64;

LogicalResult checkEps(Operation *op, FloatAttr eps) {
  const double value = eps.getValueAsDouble();
  if (!(value > 0.0) || !std::isfinite(value))
    return op->emitOpError()
           << "'eps' must be positive and finite, got " << value;
  return success();
}

LogicalResult checkLowerBound(Operation *op, std::optional<APFloat> bound) {
  if (bound && !(bound->convertToDouble() < 0.0))
    return op->emitOpError() << "'lower_bound' must be negative, got "
                             << bound->convertToDouble();
  return success();
}

/// g_raw [B, T, H, K], a_log [H] f32, dt_bias [H, K] f32.
LogicalResult checkGateOperands(Operation *op, ShapeChecker &shapes, Value gRaw,
                                Value aLog, Value dtBias) {
  if (failed(shapes.check("g_raw", gRaw, "BTHK")) ||
      failed(checkFloatElementType(op, "g_raw", gRaw)) ||
      failed(shapes.check("a_log", aLog, "H")) ||
      failed(checkF32ElementType(op, "a_log", aLog)))
    return failure();
  if (dtBias && (failed(shapes.check("dt_bias", dtBias, "HK")) ||
                 failed(checkF32ElementType(op, "dt_bias", dtBias))))
    return failure();
  return success();
}

} // namespace

int64_t mlir::rudnn::kdaGatePartialTokens() { return kGatePartialTokens; }

LogicalResult L2NormalizeOp::verify() {
  ShapeChecker shapes(*this, "D");
  if (failed(shapes.check("x", getX(), "BTHD")) ||
      failed(shapes.check("y", getY(), "BTHD")) ||
      failed(checkFloatElementType(*this, "x", getX())) ||
      failed(checkSameElementType(*this, "y", getY(), "x", getX())))
    return failure();
  return checkEps(*this, getEpsAttr());
}

LogicalResult L2NormalizeBackwardOp::verify() {
  ShapeChecker shapes(*this, "D");
  if (failed(shapes.check("x", getX(), "BTHD")) ||
      failed(shapes.check("dy", getDy(), "BTHD")) ||
      failed(shapes.check("dx", getDx(), "BTHD")) ||
      failed(checkFloatElementType(*this, "x", getX())) ||
      failed(checkFloatElementType(*this, "dy", getDy())) ||
      failed(checkSameElementType(*this, "dx", getDx(), "x", getX())))
    return failure();
  return checkEps(*this, getEpsAttr());
}

LogicalResult KdaGateOp::verify() {
  ShapeChecker shapes(*this, "K");
  if (failed(checkGateOperands(*this, shapes, getGRaw(), getALog(),
                               getDtBias())) ||
      failed(shapes.check("g", getG(), "BTHK")) ||
      failed(checkF32ElementType(*this, "g", getG())))
    return failure();
  return checkLowerBound(*this, getLowerBound());
}

LogicalResult KdaGateBackwardOp::verify() {
  ShapeChecker shapes(*this, "K");
  if (failed(checkGateOperands(*this, shapes, getGRaw(), getALog(),
                               getDtBias())) ||
      failed(shapes.check("dg", getDg(), "BTHK")) ||
      failed(checkF32ElementType(*this, "dg", getDg())) ||
      failed(shapes.check("dg_raw", getDgRaw(), "BTHK")) ||
      failed(checkF32ElementType(*this, "dg_raw", getDgRaw())) ||
      failed(shapes.check("partials", getPartials(), "NBHPK")) ||
      failed(checkF32ElementType(*this, "partials", getPartials())))
    return failure();
  if (std::optional<int64_t> pair = shapes.lookup('P'); pair && *pair != 2)
    return emitOpError() << "'partials' dim 3 must be 2 (dt_bias, a_log)";
  return checkLowerBound(*this, getLowerBound());
}

LogicalResult KdaGateSumsOp::verify() {
  ShapeChecker shapes(*this, "K");
  if (failed(shapes.check("partials", getPartials(), "NBHPK")) ||
      failed(checkF32ElementType(*this, "partials", getPartials())) ||
      failed(shapes.check("d_a_log", getDALog(), "H")) ||
      failed(checkF32ElementType(*this, "d_a_log", getDALog())) ||
      failed(shapes.check("d_dt_bias", getDDtBias(), "HK")) ||
      failed(checkF32ElementType(*this, "d_dt_bias", getDDtBias())))
    return failure();
  return success();
}

LogicalResult SigmoidOp::verify() {
  ShapeChecker shapes(*this, "");
  if (failed(shapes.check("x", getX(), "BTH")) ||
      failed(checkFloatElementType(*this, "x", getX())) ||
      failed(shapes.check("y", getY(), "BTH")) ||
      failed(checkF32ElementType(*this, "y", getY())))
    return failure();
  return success();
}

LogicalResult SigmoidBackwardOp::verify() {
  ShapeChecker shapes(*this, "");
  if (failed(shapes.check("x", getX(), "BTH")) ||
      failed(checkFloatElementType(*this, "x", getX())) ||
      failed(shapes.check("dy", getDy(), "BTH")) ||
      failed(checkFloatElementType(*this, "dy", getDy())) ||
      failed(shapes.check("dx", getDx(), "BTH")) ||
      failed(checkSameElementType(*this, "dx", getDx(), "x", getX())))
    return failure();
  return success();
}
