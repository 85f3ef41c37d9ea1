//===- KdaReference.h - Kimi Delta Attention in float64 ---------*- C++ -*-===//
//
// The recurrence of DESIGN §7 evaluated token by token in double precision:
// the independent reference every KDA kernel is checked against.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_LIB_REFERENCE_KDA_KDAREFERENCE_H
#define RUDNN_LIB_REFERENCE_KDA_KDAREFERENCE_H

#include <cstdint>
#include <vector>

namespace rudnn::reference {

struct KdaShape {
  int64_t batch = 1, length = 1, heads = 1, featureK = 1, featureV = 1;
};

/// Dense row-major arrays: q, k, g [B,T,H,K]; v [B,T,H,V]; beta [B,T,H];
/// initialState [B,H,K,V] or empty (zero state).
struct KdaInputs {
  std::vector<double> q, k, v, g, beta, initialState;
};

struct KdaOutputs {
  std::vector<double> output;     // [B,T,H,V]
  std::vector<double> finalState; // [B,H,K,V]
  /// [ceil(T/chunk),B,H,K,V]: the state before token c·chunk.
  std::vector<double> boundaries;
};

/// Per (b, h), with S = initial state (or 0), for t = 0 … T-1:
///   S ← diag(exp(g_t))·S;  u_t = beta_t·(v_t − Sᵀk_t);  S ← S + k_t·u_tᵀ;
///   o_t = Sᵀ(scale·q_t).
KdaOutputs kdaForward(const KdaShape &shape, const KdaInputs &inputs,
                      double scale, int64_t chunk);

struct KdaGradients {
  std::vector<double> dq, dk, dv, dg; // [B,T,H,K] / [B,T,H,V]
  std::vector<double> dbeta;          // [B,T,H]
  std::vector<double> dInitialState;  // [B,H,K,V]
};

/// Every gradient of `shape` sized and zero.
KdaGradients zeroGradients(const KdaShape &shape);

/// Gradients of ⟨dOutput, output⟩ + ⟨dFinalState, final state⟩ with respect
/// to every input of kdaForward, by reverse-mode differentiation of the
/// token recurrence in double precision. `dFinalState` may be empty (zero);
/// dInitialState is returned whether or not an initial state was given.
KdaGradients kdaBackward(const KdaShape &shape, const KdaInputs &inputs,
                         double scale, const std::vector<double> &dOutput,
                         const std::vector<double> &dFinalState);

/// Packed sequences: `shape` has batch 1 and T every sequence's tokens,
/// sequence n the tokens offsets[n] to offsets[n + 1]; the states
/// (initialState, the final states, dFinalState, dInitialState) are
/// [S, H, K, V], S = offsets.size() − 1. Each sequence goes alone through
/// the batch recurrence above. With a chunk, the boundaries [ceil(T /
/// chunk) + S + 1, 1, H, K, V]: sequence n's chunk j in slot Σ_{i<n}
/// ceil(len_i / chunk) + j, the slots past the last zero.
KdaOutputs kdaVarlenForward(const KdaShape &shape, const KdaInputs &inputs,
                            const std::vector<double> &offsets, double scale,
                            int64_t chunk = 0);
KdaGradients kdaVarlenBackward(const KdaShape &shape, const KdaInputs &inputs,
                               const std::vector<double> &offsets, double scale,
                               const std::vector<double> &dOutput,
                               const std::vector<double> &dFinalState);

/// A decoding step over a state pool [P, H, K, V]: entry b's tokens start
/// from pool[slots[b]] and leave their final state there. An entry whose
/// slot is outside [0, P) or shared with another entry is refused (output
/// 0, its state untouched, status 1). inputs.initialState is not read.
struct KdaPoolStep {
  std::vector<double> output, pool, status;
};
KdaPoolStep kdaPoolStep(const KdaShape &shape, const KdaInputs &inputs,
                        const std::vector<double> &pool,
                        const std::vector<double> &slots, double scale);

/// What a KDA operator may apply to its inputs first: q and k rows divided
/// by sqrt(Σ x² + 1e-6); beta from logits (sigmoid); the gate from raw
/// projections, x = g + dtBias[h, d] (dtBias [H·K] or empty), as
/// −exp(aLog[h]) · softplus(x) or, with lowerBound < 0,
/// lowerBound · sigmoid(exp(aLog[h]) · x) (aLog [H] or empty: g as given).
struct KdaInputTransforms {
  bool qkL2Norm = false, betaLogits = false;
  std::vector<double> aLog, dtBias;
  double lowerBound = 0;
};

/// `raw` through the transforms (shape's heads those of all its tensors).
KdaInputs transformKdaInputs(const KdaShape &shape, const KdaInputs &raw,
                             const KdaInputTransforms &transforms);

/// Turns `gradients` of the transformed inputs into those of the raw ones,
/// in place, and returns the gate parameters' (dALog [H], dDtBias [H·K];
/// empty when not given).
struct KdaParameterGradients {
  std::vector<double> dALog, dDtBias;
};
KdaParameterGradients
transformKdaGradients(const KdaShape &shape, const KdaInputs &raw,
                      const KdaInputTransforms &transforms,
                      KdaGradients &gradients);

/// Grouped value heads (GVA): q or k [rows, Q, width] with each head
/// repeated for the `heads` / Q value heads sharing it, [rows, heads,
/// width]; and back, a [rows, heads, width] gradient summed over each group.
std::vector<double> repeatHeads(const std::vector<double> &x, int64_t rows,
                                int64_t keyHeads, int64_t heads, int64_t width);
std::vector<double> sumHeadGroups(const std::vector<double> &x, int64_t rows,
                                  int64_t keyHeads, int64_t heads,
                                  int64_t width);

} // namespace rudnn::reference

#endif // RUDNN_LIB_REFERENCE_KDA_KDAREFERENCE_H
