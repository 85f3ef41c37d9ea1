//===- NormRules.h - Rules the normalisations' ops share --------*- C++ -*-===//

#ifndef RUDNN_DIALECTS_IR_NORM_NORMRULES_H
#define RUDNN_DIALECTS_IR_NORM_NORMRULES_H

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

} // namespace mlir::rudnn::norm

#endif // RUDNN_DIALECTS_IR_NORM_NORMRULES_H
