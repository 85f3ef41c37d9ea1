//===- KdaChecks.h - Validating KDA calls -----------------------*- C++ -*-===//
//
// A KDA call's views are checked against the operator's contract
// (dialects/IR/KdaContracts.h) by the generic lib/ContractChecks; what is
// left here is what the contract cannot say: the options, the sizes of what
// a forward saves (once the function's chunk is known), and the launch
// grid's limits. Every fault is an
// InvalidArgument (or Unsupported) before anything runs.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_LIB_KDA_KDACHECKS_H
#define RUDNN_LIB_KDA_KDACHECKS_H

#include "lib/kda/KdaKernels.h"
#include "rudnn/kda.h"

#include <cstdint>

namespace rudnn {

/// The sizes of a valid call.
struct KdaCallShape {
  int64_t B, T, H, K, V, chunk, N;
  double scale;
};

/// Checks a forward's views and options; resolves the scale, and the chunk
/// when the options give one or the tiles are saved (0 otherwise: the
/// target's policy chooses).
KdaCallShape checkKdaForwardCall(const KdaForwardInputs &inputs,
                                 const KdaForwardOutputs &outputs,
                                 const KdaOptions &options);

/// Checks a backward's views and options; resolves the chunk and scale
/// (saved boundaries and tiles need the forward's chunk, given in the
/// options).
KdaCallShape checkKdaBackwardCall(const KdaBackwardInputs &inputs,
                                  const KdaBackwardOutputs &outputs,
                                  const KdaOptions &options);

/// Whether q has fewer heads than v: grouped value heads (GVA), q and k
/// with Q heads each shared by H / Q value heads.
bool groupedHeads(const TensorView &q, const TensorView &v);

/// The input transforms a call asks for (options, aLog, dtBias), checked:
/// dtBias and a lower bound come with aLog, the bound negative.
KdaInputTransforms inputTransformsOf(const KdaForwardInputs &inputs,
                                     const KdaOptions &options);
KdaInputTransforms inputTransformsOf(bool aLog, bool dtBias,
                                     const KdaOptions &options);

/// The chunk a call runs at: the options', or the default target's choice
/// for K, V and the input type (what rudnn-specialize chooses).
int64_t resolveKdaChunk(int64_t featureK, int64_t featureV, DType input,
                        const KdaOptions &options);

/// Checks what the forward saves (boundaries, tiles), when given, against
/// the sizes the function's chunk fixes (chosen by rudnn-specialize unless
/// the options gave it).
void checkKdaSavedSizes(const KdaForwardInputs &inputs,
                        const KdaForwardOutputs &outputs, int64_t chunk);
void checkKdaSavedSizes(const KdaBackwardInputs &inputs,
                        const KdaBackwardOutputs &outputs, int64_t chunk);

} // namespace rudnn

#endif // RUDNN_LIB_KDA_KDACHECKS_H
