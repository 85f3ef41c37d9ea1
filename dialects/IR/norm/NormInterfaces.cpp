//===- NormInterfaces.cpp - The normalisations and their primitives -------===//
//
// rudnn.moments, rudnn.layer_norm and rudnn.rms_norm as operator ops: one
// contract per rank of x, the form rudnn-specialize chooses from C, and
// the primitives they become (rows normalised by one kernel, or a split
// row's partial moments first); the primitives' verifiers.
//
//===----------------------------------------------------------------------===//

#include "dialects/IR/RudnnOps.h"
#include "dialects/IR/ShapeChecker.h"
#include "dialects/IR/norm/NormContracts.h"
#include "dialects/IR/norm/NormPolicy.h"
#include "dialects/IR/norm/NormRules.h"

#include <cmath>
#include <type_traits>

using namespace mlir;
using namespace mlir::rudnn;
using ::rudnn::NormOperator;
using namespace mlir::rudnn::norm;

namespace mlir::rudnn::norm {

bool hasOuterRows(Value x) {
  return cast<RankedTensorType>(x.getType()).getRank() == 3;
}

int64_t featuresOf(Value x) {
  return cast<RankedTensorType>(x.getType()).getShape().back();
}

StringRef statsLayout(Value x) { return hasOuterRows(x) ? "MN" : "N"; }
StringRef rowsLayout(Value x) { return hasOuterRows(x) ? "MNC" : "NC"; }

LogicalResult checkRank(Operation *op, Value x) {
  const int64_t rank = cast<RankedTensorType>(x.getType()).getRank();
  if (rank != 2 && rank != 3)
    return op->emitOpError()
           << "'x' must be [N, C] or [M, N, C], got rank " << rank;
  return success();
}

LogicalResult checkEps(Operation *op, float eps) {
  if (!(eps >= 0.0f) || !std::isfinite(eps))
    return op->emitOpError()
           << "'eps' must be finite and not negative, got " << eps;
  return success();
}

/// `threads` a power of two from 32 to 1024; rows a block for warps only;
/// a chunk a multiple of the threads.
LogicalResult checkForm(Operation *op, int64_t features,
                        std::optional<uint64_t> threads,
                        std::optional<uint64_t> rowsPerBlock,
                        std::optional<uint64_t> chunk) {
  if (threads && (*threads < 32 || *threads > 1024 || *threads % 32 != 0))
    return op->emitOpError() << "'threads' must be a multiple of 32 up to "
                                "1024, got "
                             << *threads;
  if (rowsPerBlock &&
      (*rowsPerBlock < 1 || *rowsPerBlock > 32 || (threads && *threads != 32)))
    return op->emitOpError() << "'rows_per_block' is for a warp a row "
                                "(threads 32), 1 to 32 rows";
  if (chunk && (!threads || *chunk < *threads || *chunk % *threads != 0 ||
                *chunk / *threads > uint64_t(kNormMaxHeld)))
    return op->emitOpError()
           << "'chunk' must be 1 to " << kNormMaxHeld
           << " times 'threads' (elements a thread holds), got " << *chunk;
  if (threads && !chunk && features > int64_t(*threads) * kNormMaxHeld)
    return op->emitOpError() << "rows of " << features << " do not fit "
                             << *threads << " threads (" << kNormMaxHeld
                             << " elements each): split them with 'chunk'";
  return success();
}

LogicalResult checkChunkSummaries(Operation *op, ShapeChecker &shapes,
                                  StringRef name, Value summaries, Value x,
                                  uint64_t chunk, int64_t values,
                                  StringRef what) {
  const int64_t features = featuresOf(x);
  shapes.expect('S', (features + int64_t(chunk) - 1) / int64_t(chunk), "chunk");
  shapes.expect('Z', values, what);
  return success(succeeded(shapes.check(name, summaries,
                                        hasOuterRows(x) ? "MNSZ" : "NSZ")) &&
                 succeeded(checkF32ElementType(op, name, summaries)));
}

} // namespace mlir::rudnn::norm

namespace {

/// What the three operators have in common, read off each.
struct NormCall {
  NormOperator kind = NormOperator::Moments;
  Value x, residual, gamma, beta;
  float eps = 0.0f;
  /// The operator's results in rudnn.norm_rows's order: y, mean, second
  /// (var or rstd), h; null where the operator has none.
  Value y, mean, second, h;
};

NormCall callOf(MomentsOp op) {
  NormCall c;
  c.kind = NormOperator::Moments;
  c.x = op.getX();
  c.mean = op.getMean();
  c.second = op.getVar();
  return c;
}
/// LayerNorm and RMSNorm: the rows normalised, with or without centring.
template <typename NormOp> NormCall callOf(NormOp op) {
  NormCall c;
  c.kind = NormOperator::RmsNorm;
  c.x = op.getX();
  c.residual = op.getResidual();
  c.gamma = op.getGamma();
  c.eps = op.getEps().convertToFloat();
  c.y = op.getY();
  c.second = op.getRstd();
  c.h = op.getH();
  if constexpr (std::is_same_v<NormOp, LayerNormOp>) {
    c.kind = NormOperator::LayerNorm;
    c.beta = op.getBeta();
    c.mean = op.getMean();
  }
  return c;
}

// The three operators' interface methods (Rudnn_NormOperatorOp).

template <typename Op> LogicalResult verifyNorm(Op op) {
  if (failed(checkRank(op, op.getX())))
    return failure();
  ShapeChecker shapes(op, "C");
  if (failed(verifyOperatorContract(op, shapes)) ||
      failed(checkForm(op, featuresOf(op.getX()), op.getThreads(),
                       op.getRowsPerBlock(), op.getChunk())))
    return failure();
  return checkEps(op, callOf(op).eps); // moments: 0
}

/// The form for C, unless given; a warp a row unless told otherwise.
template <typename Op> LogicalResult specializeNorm(Op op, TargetAttr) {
  const NormForm form = chooseNormForm(featuresOf(op.getX()));
  if (!op.getThreads())
    setNormForm(op, form);
  else if (*op.getThreads() == 32 && !op.getRowsPerBlock() && !op.getChunk())
    op.setRowsPerBlockAttr(Builder(op.getContext()).getI64IntegerAttr(4));
  return checkForm(op, featuresOf(op.getX()), op.getThreads(),
                   op.getRowsPerBlock(), op.getChunk());
}

/// [partials →] rows.
template <typename Op> LogicalResult decomposeNorm(Op op, OpBuilder &builder) {
  if (!op.getThreads())
    return op.emitOpError() << "needs its form: run rudnn-specialize before "
                               "rudnn-decompose";
  const NormCall call = callOf(op);
  Location loc = op.getLoc();
  auto xType = cast<RankedTensorType>(call.x.getType());
  Type f32 = builder.getF32Type();
  SmallVector<int64_t> statsShape(xType.getShape().drop_back());
  auto statsType = RankedTensorType::get(statsShape, f32);
  const StringAttr kind =
      builder.getStringAttr(::rudnn::normKindName(call.kind));
  Value partials;
  if (std::optional<uint64_t> chunk = op.getChunk()) {
    SmallVector<int64_t> shape(statsShape);
    shape.append(
        {(featuresOf(call.x) + int64_t(*chunk) - 1) / int64_t(*chunk), 3});
    partials = builder.create<NormPartialsOp>(
        loc, RankedTensorType::get(shape, f32), call.x, call.residual, kind,
        op.getChunkAttr(), op.getThreadsAttr());
  }
  auto rows = builder.create<NormRowsOp>(
      loc, TypeRange{xType, statsType, statsType, xType}, call.x, call.residual,
      call.gamma, call.beta, partials, kind, builder.getF32FloatAttr(call.eps),
      op.getThreadsAttr(), op.getRowsPerBlockAttr(), op.getChunkAttr());
  if (auto policy = op->template getAttrOfType<StringAttr>("policy"))
    rows->setAttr("policy", policy);
  const Value from[] = {rows.getY(), rows.getMean(), rows.getSecond(),
                        rows.getH()};
  Value to[] = {call.y, call.mean, call.second, call.h};
  for (int i = 0; i < 4; ++i)
    if (to[i])
      to[i].replaceAllUsesWith(from[i]);
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// The primitives
//===----------------------------------------------------------------------===//

namespace {

/// Shared rules: x's rank, the kind, optional rows and [C] vectors.
LogicalResult verifyRowsOperands(Operation *op, ShapeChecker &shapes,
                                 StringRef kind, Value x, Value residual,
                                 Value gamma, Value beta) {
  if (failed(checkRank(op, x)))
    return failure();
  if (!::rudnn::normKindNamed(kind.str()))
    return op->emitOpError() << "'kind' must be moments, layer_norm or "
                                "rms_norm, got '"
                             << kind << "'";
  auto like = [&](StringRef name, Value value, StringRef layout) {
    return !value || (succeeded(shapes.check(name, value, layout)) &&
                      succeeded(checkFloatElementType(op, name, value)) &&
                      succeeded(checkSameElementType(op, name, value, "x", x)));
  };
  if (!like("x", x, rowsLayout(x)) ||
      !like("residual", residual, rowsLayout(x)) ||
      !like("gamma", gamma, "C") || !like("beta", beta, "C"))
    return failure();
  return success();
}

} // namespace

/// What a split row's partial summary holds, in this order.
static constexpr llvm::StringLiteral kSummaryValues =
    "the summary's count, mean and M2";

LogicalResult NormPartialsOp::verify() {
  ShapeChecker shapes(*this, "CS");
  if (failed(verifyRowsOperands(*this, shapes, getKind(), getX(), getResidual(),
                                {}, {})) ||
      failed(checkForm(*this, featuresOf(getX()), getThreads(), std::nullopt,
                       getChunk())))
    return failure();
  return checkChunkSummaries(*this, shapes, "partials", getPartials(), getX(),
                             getChunk(), 3, kSummaryValues);
}

LogicalResult NormRowsOp::verify() {
  ShapeChecker shapes(*this, "CS");
  // The form first: the partials' count divides by 'chunk'.
  if (failed(verifyRowsOperands(*this, shapes, getKind(), getX(), getResidual(),
                                getGamma(), getBeta())) ||
      failed(checkForm(*this, featuresOf(getX()), getThreads(),
                       getRowsPerBlock(), getChunk())))
    return failure();
  if (getPartials()) {
    if (!getChunk())
      return emitOpError() << "reads 'partials' of a split row: needs 'chunk'";
    if (failed(checkChunkSummaries(*this, shapes, "partials", getPartials(),
                                   getX(), *getChunk(), 3, kSummaryValues)))
      return failure();
  } else if (getChunk()) {
    return emitOpError() << "splits rows ('chunk'): needs their 'partials'";
  }
  auto f32 = [&](StringRef name, Value value) {
    return succeeded(shapes.check(name, value, statsLayout(getX()))) &&
           succeeded(checkF32ElementType(*this, name, value));
  };
  if (failed(shapes.check("y", getY(), rowsLayout(getX()))) ||
      failed(shapes.check("h", getH(), rowsLayout(getX()))) ||
      !f32("mean", getMean()) || !f32("second", getSecond()))
    return failure();
  if (getY().getType() != getX().getType() ||
      getH().getType() != getX().getType())
    return emitOpError() << "'y' and 'h' have the type of 'x'";
  return checkEps(*this, getEps().convertToFloat());
}

//===----------------------------------------------------------------------===//
// The generated op classes, whose methods call the family's functions
//===----------------------------------------------------------------------===//

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define GET_OP_CLASSES
#include "dialects/IR/norm/RudnnNormOps.cpp.inc"
#pragma GCC diagnostic pop
