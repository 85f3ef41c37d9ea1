//===- NormRules.h - Rules the normalisations' ops share --------*- C++ -*-===//

#ifndef RUDNN_DIALECTS_IR_NORM_NORMRULES_H
#define RUDNN_DIALECTS_IR_NORM_NORMRULES_H

#include "dialects/IR/RudnnOps.h"
#include "dialects/IR/ShapeChecker.h"
#include "dialects/IR/norm/NormPolicy.h"

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"

#include <optional>

namespace mlir::rudnn::norm {

/// Whether x is [M, N, C] (else [N, C]); its C.
bool hasOuterRows(Value x);
int64_t featuresOf(Value x);
/// The layout letters of x's rows and of its statistics.
StringRef rowsLayout(Value x);
StringRef statsLayout(Value x);

/// x is [N, C] or [M, N, C].
LogicalResult checkRank(Operation *op, Value x);
/// eps is finite and not negative.
LogicalResult checkEps(Operation *op, float eps);
/// `threads` a multiple of 32 up to 1024; rows a block for warps only; a
/// chunk 1 to kNormMaxHeld times the threads; rows of `features` held by
/// the threads unless split.
LogicalResult checkForm(Operation *op, int64_t features,
                        std::optional<uint64_t> threads,
                        std::optional<uint64_t> rowsPerBlock,
                        std::optional<uint64_t> chunk);

/// A split row's per-chunk summaries [N, S, Z] (or [M, N, S, Z]) in f32:
/// S the chunks of x's C, Z `values` values (`what`).
LogicalResult checkChunkSummaries(Operation *op, ShapeChecker &shapes,
                                  StringRef name, Value summaries, Value x,
                                  uint64_t chunk, int64_t values,
                                  StringRef what);

/// Gives `op` `form`'s threads, rows a block and chunk (those it has), and
/// the reason as its `policy`.
template <typename Op> void setNormForm(Op op, const NormForm &form) {
  Builder builder(op.getContext());
  op.setThreadsAttr(builder.getI64IntegerAttr(form.threads));
  if (form.rowsPerBlock)
    op.setRowsPerBlockAttr(builder.getI64IntegerAttr(form.rowsPerBlock));
  if (form.chunk)
    op.setChunkAttr(builder.getI64IntegerAttr(form.chunk));
  op->setAttr("policy", builder.getStringAttr(form.reason));
}

/// The backward operators' interface methods (Rudnn_NormOperatorOp of family
/// "NormBackward"), defined in NormBackwardInterfaces.cpp for both ops.
template <typename Op> LogicalResult verifyNormBackward(Op op);
template <typename Op>
LogicalResult specializeNormBackward(Op op, TargetAttr target);
template <typename Op>
LogicalResult decomposeNormBackward(Op op, OpBuilder &builder);

} // namespace mlir::rudnn::norm

#endif // RUDNN_DIALECTS_IR_NORM_NORMRULES_H
