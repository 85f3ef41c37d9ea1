//===- ScoreOptions.h - Attention's score options as attributes -*- C++ -*-===//
//
// The softcap and window every attention-like entry point takes (the
// forward, the backward, the K/V-cache step), validated in the options'
// own terms and turned into the operators' attributes.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_LIB_ATTENTION_SCOREOPTIONS_H
#define RUDNN_LIB_ATTENTION_SCOREOPTIONS_H

#include "rudnn/operator.h"

#include <optional>

namespace rudnn {

/// Appends `scale` (when given), `softcap` (when positive) and the window
/// (when a side is bounded) to `attributes`; InvalidArgument naming a bad
/// softcap or bound (0 is no softcap, −1 an unbounded side).
void addScoreOptions(OperatorAttributes &attributes, std::optional<float> scale,
                     float softcap, int64_t windowLeft, int64_t windowRight);

} // namespace rudnn

#endif // RUDNN_LIB_ATTENTION_SCOREOPTIONS_H
