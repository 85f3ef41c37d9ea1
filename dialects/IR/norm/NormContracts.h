//===- NormContracts.h - The normalisations' contracts ----------*- C++ -*-===//

#ifndef RUDNN_DIALECTS_IR_NORM_NORMCONTRACTS_H
#define RUDNN_DIALECTS_IR_NORM_NORMCONTRACTS_H

#include "dialects/IR/OperatorContract.h"

#include <optional>
#include <string_view>

namespace rudnn {

/// Largest normalised dim C.
inline constexpr int64_t kNormMaxFeatures = int64_t(1) << 24;
/// Largest outer row dim M of x [M, N, C] (a grid dimension).
inline constexpr int64_t kNormMaxOuterRows = 65535;

enum class NormOperator { Moments = 0, LayerNorm = 1, RmsNorm = 2 };

/// "moments", "layer_norm", "rms_norm": the kind attribute's spelling.
std::string_view normKindName(NormOperator op);
std::optional<NormOperator> normKindNamed(std::string_view name);

/// The contract of `op` over x [N, C], or [M, N, C] with `outerRows`:
/// rudnn.moments (x -> mean, var), rudnn.layer_norm (x, residual, gamma,
/// beta -> y, mean, rstd, h), rudnn.rms_norm (x, residual, gamma -> y,
/// rstd, h).
const OperatorContract &normContract(NormOperator op, bool outerRows);

/// The backward of LayerNorm or RMSNorm over x [N, C] ([M, N, C]):
/// rudnn.layer_norm_backward (dy, x, mean, rstd, gamma -> dx, dgamma,
/// dbeta), rudnn.rms_norm_backward (dy, x, rstd, gamma -> dx, dgamma).
const OperatorContract &normBackwardContract(NormOperator op, bool outerRows);

} // namespace rudnn

#endif // RUDNN_DIALECTS_IR_NORM_NORMCONTRACTS_H
