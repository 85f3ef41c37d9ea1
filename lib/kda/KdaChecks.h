//===- KdaChecks.h - What KDA's typed entry points add ----------*- C++ -*-===//
//
// The typed KDA entry points are conveniences over callOperator: the views
// are checked against the operator's contract there. What is left here is
// what the typed structs can say wrong and the contract cannot: the
// options' values and which optional tensors come together (the launch
// grid's limits are every plan's, checked before its first launch); and the
// attributes and named tensors every KDA operator takes from a call. Every
// fault is an InvalidArgument (or Unsupported) before anything runs.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_LIB_KDA_KDACHECKS_H
#define RUDNN_LIB_KDA_KDACHECKS_H

#include "rudnn/kda.h"
#include "rudnn/operator.h"

namespace rudnn {

/// What a call applies to its inputs before the recurrence.
struct KdaInputTransforms {
  bool qkL2Norm = false, betaLogits = false;
  /// The gate from raw projections: a_log given, dt_bias given.
  bool gate = false, gateBias = false;
  /// Negative: the bounded gate; 0: none.
  float lowerBound = 0;
};

/// The input transforms a call asks for (options, aLog, dtBias), checked:
/// dtBias and a lower bound come with aLog, the bound negative.
KdaInputTransforms inputTransformsOf(bool aLog, bool dtBias,
                                     const KdaOptions &options);

/// Whether q has fewer heads than v: grouped value heads (GVA), q and k
/// with Q heads each shared by H / Q value heads.
bool groupedHeads(const TensorView &q, const TensorView &v);

/// The attributes of a KDA operator call: grouped heads, the transforms,
/// and the scale and (`chunked`) chunk when the options give them, checked;
/// rudnn-specialize chooses those left open.
OperatorAttributes kdaAttributes(const TensorView &q, const TensorView &v,
                                 const KdaInputTransforms &transforms,
                                 const KdaOptions &options, bool chunked);

/// q, k, v, g, beta and the given ones of cu_seqlens, initial_state, a_log
/// and dt_bias, by their contract names.
NamedTensors kdaInputTensors(const KdaForwardInputs &inputs);

/// Checks what a forward's or a backward's structs and options can get
/// wrong that its contract cannot say.
void checkKdaForwardCall(const KdaForwardInputs &inputs,
                         const KdaForwardOutputs &outputs,
                         const KdaOptions &options);
void checkKdaBackwardCall(const KdaBackwardInputs &inputs,
                          const KdaBackwardOutputs &outputs,
                          const KdaOptions &options);

} // namespace rudnn

#endif // RUDNN_LIB_KDA_KDACHECKS_H
