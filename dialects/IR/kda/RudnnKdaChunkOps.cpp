//===- RudnnKdaChunkOps.cpp - KDA's chunk primitives ----------------------===//

#include "dialects/IR/RudnnOps.h"
#include "dialects/IR/kda/KdaRules.h"

#include "mlir/IR/BuiltinTypes.h"

#include <cmath>

using namespace mlir;
using namespace mlir::rudnn;

namespace {

/// Rules every chunk primitive shares: a valid chunk, bound as dim C; static
/// K, V and C; consistent N = ceil(T / C) where both are static. With packed
/// sequences (`cu_seqlens` [S + 1] i32): B = 1, states [S, H, K, V] and N
/// the chunk slots of every sequence.
class ChunkRules {
public:
  ChunkRules(Operation *op, uint64_t chunk, Value cuSeqlens = {})
      : op(op), chunk(static_cast<int64_t>(chunk)), cuSeqlens(cuSeqlens),
        shapes(op, "KVC") {
    shapes.expect('C', this->chunk, "chunk");
    if (cuSeqlens)
      shapes.expect('B', 1, "batch of packed sequences");
  }

  LogicalResult start() {
    if (!isValidKdaChunk(chunk))
      return op->emitOpError() << "'chunk' must be 16, 32 or 64, got " << chunk;
    if (!cuSeqlens)
      return success();
    auto type = cast<RankedTensorType>(cuSeqlens.getType());
    if (type.getRank() != 1 || !type.getElementType().isInteger(32))
      return op->emitOpError()
             << "'cu_seqlens' must be a 1-D i32 tensor, got " << type;
    return success();
  }

  /// A state [B, H, K, V] ([S, H, K, V] for packed sequences), fp32.
  LogicalResult state(StringRef name, Value value) {
    return tile(name, value, cuSeqlens ? "SHKV" : "BHKV");
  }

  /// A sequence tensor [B, T, H, *] of f32, f16 or bf16.
  LogicalResult sequence(StringRef name, Value value, StringRef layout) {
    if (failed(shapes.check(name, value, layout)) ||
        failed(checkFloatElementType(op, name, value)))
      return failure();
    return success();
  }

  /// An fp32 tile or state tensor.
  LogicalResult tile(StringRef name, Value value, StringRef layout) {
    if (failed(shapes.check(name, value, layout)) ||
        failed(checkF32ElementType(op, name, value)))
      return failure();
    return success();
  }

  LogicalResult sameType(StringRef name, Value value, StringRef refName,
                         Value ref) {
    return checkSameElementType(op, name, value, refName, ref);
  }

  /// Boundary states [N, B, H, K, V] in the input type of `ref`.
  LogicalResult boundaries(Value value, StringRef refName, Value ref) {
    if (failed(shapes.check("boundaries", value, "NBHKV")))
      return failure();
    return checkSameElementType(op, "boundaries", value, refName, ref);
  }

  /// N = ceil(T / C) when both are known (a batch).
  LogicalResult finish() {
    if (cuSeqlens)
      return success();
    std::optional<int64_t> count = shapes.lookup('N');
    std::optional<int64_t> length = shapes.lookup('T');
    if (!count || !length)
      return success();
    int64_t expected = (*length + chunk - 1) / chunk;
    if (*count != expected)
      return op->emitOpError()
             << "chunk count N is " << *count << ", expected " << expected
             << " = ceil(T=" << *length << " / chunk=" << chunk << ")";
    return success();
  }

private:
  Operation *op;
  int64_t chunk;
  Value cuSeqlens;
  ShapeChecker shapes;
};

} // namespace

LogicalResult ChunkDecayOp::verify() {
  ChunkRules rules(*this, getChunk());
  if (failed(rules.start()) || failed(rules.sequence("g", getG(), "BTHK")) ||
      failed(rules.tile("gamma", getGamma(), "BHNCK")))
    return failure();
  return rules.finish();
}

LogicalResult ChunkPairwiseOp::verify() {
  ChunkRules rules(*this, getChunk());
  if (failed(rules.start()) || failed(rules.sequence("q", getQ(), "BTQK")) ||
      failed(rules.sequence("k", getK(), "BTQK")) ||
      failed(rules.sameType("k", getK(), "q", getQ())) ||
      failed(rules.sequence("beta", getBeta(), "BTH")) ||
      failed(rules.tile("gamma", getGamma(), "BHNCK")) ||
      failed(rules.tile("strict", getStrict(), "BHNCC")) ||
      failed(rules.tile("pairwise", getPairwise(), "BHNCC")))
    return failure();
  return rules.finish();
}

LogicalResult ChunkSolveOp::verify() {
  ChunkRules rules(*this, getChunk(), getCuSeqlens());
  if (failed(rules.start()) ||
      failed(rules.tile("strict", getStrict(), "BHNCC")) ||
      failed(rules.sequence("k", getK(), "BTQK")) ||
      failed(rules.sequence("v", getV(), "BTHV")) ||
      failed(rules.sameType("v", getV(), "k", getK())) ||
      failed(rules.sequence("beta", getBeta(), "BTH")) ||
      failed(rules.tile("gamma", getGamma(), "BHNCK")) ||
      failed(rules.tile("w", getW(), "BHNCK")) ||
      failed(rules.tile("u0", getU0(), "BHNCV")))
    return failure();
  return rules.finish();
}

LogicalResult ChunkPropagateOp::verify() {
  ChunkRules rules(*this, getChunk(), getCuSeqlens());
  if (failed(rules.start()) || failed(rules.tile("w", getW(), "BHNCK")) ||
      failed(rules.tile("u0", getU0(), "BHNCV")) ||
      failed(rules.sequence("k", getK(), "BTQK")) ||
      failed(rules.tile("gamma", getGamma(), "BHNCK")) ||
      (getInitialState() &&
       failed(rules.state("initial_state", getInitialState()))) ||
      failed(rules.tile("u", getU(), "BHNCV")) ||
      failed(rules.boundaries(getBoundaries(), "k", getK())) ||
      failed(rules.state("final_state", getFinalState())))
    return failure();
  return rules.finish();
}

LogicalResult ChunkRestoreOp::verify() {
  ChunkRules rules(*this, getChunk());
  if (failed(rules.start()) || failed(rules.tile("w", getW(), "BHNCK")) ||
      failed(rules.tile("u0", getU0(), "BHNCV")) ||
      failed(rules.sequence("boundaries", getBoundaries(), "NBHKV")) ||
      failed(rules.tile("u", getU(), "BHNCV")))
    return failure();
  return rules.finish();
}

LogicalResult ChunkOutputOp::verify() {
  ChunkRules rules(*this, getChunk(), getCuSeqlens());
  double scale = getScaleAttr().getValueAsDouble();
  if (!(scale > 0.0) || !std::isfinite(scale))
    return emitOpError() << "'scale' must be positive and finite, got "
                         << scale;
  if (failed(rules.start()) || failed(rules.sequence("q", getQ(), "BTQK")) ||
      failed(rules.sequence("g", getG(), "BTHK")) ||
      failed(rules.tile("pairwise", getPairwise(), "BHNCC")) ||
      failed(rules.tile("u", getU(), "BHNCV")) ||
      failed(rules.boundaries(getBoundaries(), "q", getQ())) ||
      failed(rules.sequence("output", getOutput(), "BTHV")) ||
      failed(rules.sameType("output", getOutput(), "q", getQ())))
    return failure();
  return rules.finish();
}

LogicalResult KdaRecurrentOp::verify() {
  // The forward's results but the tiles, which only the chunked kernels
  // save; packed sequences save none.
  if (getCuSeqlens()) {
    if (getBoundaries())
      return emitOpError() << "saves no 'boundaries' of packed sequences";
    return verifyKdaVarlenForward(*this, /*grouped=*/true,
                                  {getQ(), getK(), getV(), getG(), getBeta(),
                                   getCuSeqlens(), getInitialState()},
                                  {getOutput(), getFinalState()});
  }
  // q and k may have fewer heads than v (grouped_heads, checked by the
  // operator op).
  return verifyKdaForward(
      *this, {getQ(), getK(), getV(), getG(), getBeta(), getInitialState()},
      [&](unsigned i) {
        auto group = i < 3 ? getODSResults(i) : ResultRange(nullptr, 0);
        return group.empty() ? Value() : Value(group.front());
      },
      /*grouped=*/true);
}

LogicalResult ChunkStateGradientOp::verify() {
  ChunkRules rules(*this, getChunk(), getCuSeqlens());
  if (failed(rules.start()) || failed(rules.sequence("q", getQ(), "BTQK")) ||
      failed(rules.sequence("k", getK(), "BTQK")) ||
      failed(rules.tile("gamma", getGamma(), "BHNCK")) ||
      failed(rules.tile("pairwise", getPairwise(), "BHNCC")) ||
      failed(rules.tile("w", getW(), "BHNCK")) ||
      failed(rules.sequence("d_output", getDOutput(), "BTHV")) ||
      (getDFinalState() &&
       failed(rules.state("d_final_state", getDFinalState()))) ||
      failed(rules.tile("du", getDu(), "BHNCV")) ||
      failed(rules.tile("d_state_end", getDStateEnd(), "NBHKV")) ||
      failed(rules.state("d_initial_state", getDInitialState())))
    return failure();
  return rules.finish();
}

LogicalResult ChunkGradientsOp::verify() {
  ChunkRules rules(*this, getChunk(), getCuSeqlens());
  if (failed(rules.start()) || failed(rules.sequence("q", getQ(), "BTQK")) ||
      failed(rules.sequence("k", getK(), "BTQK")) ||
      failed(rules.sequence("v", getV(), "BTHV")) ||
      failed(rules.sequence("g", getG(), "BTHK")) ||
      failed(rules.sequence("beta", getBeta(), "BTH")) ||
      failed(rules.tile("pairwise", getPairwise(), "BHNCC")) ||
      failed(rules.tile("u", getU(), "BHNCV")) ||
      failed(rules.boundaries(getBoundaries(), "q", getQ())) ||
      failed(rules.sequence("d_output", getDOutput(), "BTHV")) ||
      failed(rules.tile("du", getDu(), "BHNCV")) ||
      failed(rules.tile("d_state_end", getDStateEnd(), "NBHKV")) ||
      failed(rules.sequence("dq", getDq(), "BTHK")) ||
      failed(rules.sameType("dq", getDq(), "q", getQ())) ||
      failed(rules.sequence("dk", getDk(), "BTHK")) ||
      failed(rules.sequence("dv", getDv(), "BTHV")) ||
      failed(rules.tile("dg", getDg(), "BTHK")) ||
      failed(rules.sequence("dbeta", getDbeta(), "BTH")) ||
      failed(rules.sameType("dbeta", getDbeta(), "beta", getBeta())))
    return failure();
  return rules.finish();
}

LogicalResult KdaPoolStepOp::verify() {
  // The operator's rules; q and k may have fewer heads than v
  // (grouped_heads, checked by the operator op). The gate's parameters,
  // last in the contract, are the operator's: the step takes the gate
  // formed.
  ShapeChecker shapes(*this, kKdaStaticDims);
  if (failed(verifyContract(
          *this, ::rudnn::kdaDecodeContract(/*grouped=*/true),
          [&](unsigned i) {
            return i < getNumOperands() ? getOperand(i) : Value();
          },
          [&](unsigned i) {
            return i < getNumResults() ? getResult(i) : Value();
          },
          shapes)))
    return failure();
  return verifyKdaAttributes(*this, std::nullopt, getScaleAttr());
}

LogicalResult HeadGroupSumOp::verify() {
  ShapeChecker shapes(*this, "D");
  if (failed(shapes.check("x", getX(), "BTHD")) ||
      failed(shapes.check("like", getLike(), "BTQD")) ||
      failed(shapes.check("sum", getSum(), "BTQD")) ||
      failed(checkFloatElementType(*this, "x", getX())) ||
      failed(checkSameElementType(*this, "sum", getSum(), "x", getX())))
    return failure();
  std::optional<int64_t> heads = shapes.lookup('H'),
                         groups = shapes.lookup('Q');
  if (heads && groups && (*groups < 1 || *heads % *groups != 0))
    return emitOpError() << "'x' has " << *heads
                         << " heads, not a multiple of the " << *groups
                         << " heads of 'like'";
  return success();
}

/// The saved tiles [N, B, H, W] f32 beside the chunk tiles they hold.
static LogicalResult verifyTilesView(Operation *op, uint64_t chunk, Value tiles,
                                     Value gamma, Value pairwise, Value w,
                                     Value u) {
  ChunkRules rules(op, chunk);
  if (failed(rules.start()) || failed(rules.tile("tiles", tiles, "NBHW")) ||
      failed(rules.tile("gamma", gamma, "BHNCK")) ||
      failed(rules.tile("pairwise", pairwise, "BHNCC")) ||
      failed(rules.tile("w", w, "BHNCK")) ||
      failed(rules.tile("u", u, "BHNCV")))
    return failure();
  return rules.finish();
}

LogicalResult ChunkTilesExportOp::verify() {
  return verifyTilesView(*this, getChunk(), getTiles(), getGamma(),
                         getPairwise(), getW(), getU());
}

Value ChunkTilesExportOp::getViewSource() { return getGamma(); }

LogicalResult ChunkTilesImportOp::verify() {
  return verifyTilesView(*this, getChunk(), getTiles(), getGamma(),
                         getPairwise(), getW(), getU());
}

Value ChunkTilesImportOp::getViewSource() { return getTiles(); }
