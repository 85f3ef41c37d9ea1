//===- rudnn/kda.h - Kimi Delta Attention -----------------------*- C++ -*-===//

#ifndef RUDNN_KDA_H
#define RUDNN_KDA_H

#include "rudnn/context.h"

#include <optional>
#include <vector>

namespace rudnn {

/// q, k, g [B, T, H, K]; v [B, T, H, V]; beta [B, T, H]; the optional
/// initial state [B, H, K, V] is dense fp32. q, k, v share one of f32, f16,
/// bf16; g and beta may be any of them (fp32 recommended for g). Views may
/// have any outer strides ([B, T, H, *] and [B, H, T, *] memory both work);
/// the innermost dim must be contiguous. K, V in 1 … 256; B, T, H ≥ 1.
///
/// Packed sequences (flash-linear-attention's `cu_seqlens`): with
/// cuSeqlens, a dense [S + 1] int32 tensor of offsets from 0 to T never
/// decreasing, B is 1 and sequence n the tokens cuSeqlens[n] to
/// cuSeqlens[n + 1]; the initial state and the final state (and their
/// gradients) are then [S, H, K, V], one a sequence, and chunks never
/// straddle two sequences. Changing the offsets never recompiles; nothing
/// reads them on the host. Saved boundaries and tiles then hold chunk
/// slots, N = ceil(T / chunk) + S + 1: sequence n's chunk j in slot
/// Σ_{i<n} ceil(len_i / chunk) + j (the slots past the last unwritten).
///
/// Gate from raw projections (Kimi Linear's): with aLog, a dense fp32 [H]
/// tensor (and optionally dtBias, dense fp32 [H, K]: flash-linear-
/// attention's [H·K] viewed as [H, K]), g holds the raw gate projections
/// and the log-decay is −exp(aLog[h]) · softplus(g + dtBias[h]), or with
/// KdaOptions::gateLowerBound lowerBound · sigmoid(exp(aLog[h]) · (g +
/// dtBias[h])).
struct KdaForwardInputs {
  TensorView q, k, v, g, beta;
  std::optional<TensorView> initialState;
  std::optional<TensorView> cuSeqlens = std::nullopt;
  std::optional<TensorView> aLog = std::nullopt, dtBias = std::nullopt;
};

/// output [B, T, H, V] in v's dtype; optional final state [B, H, K, V]
/// (dense fp32) and boundaries [ceil(T / chunk), B, H, K, V] (the state
/// before token c·chunk, dense, in q's dtype); with the boundaries, optional
/// tiles [ceil(T / chunk), B, H, W] (dense fp32; kdaSavedShapes gives W):
/// what the backward would otherwise compute again of each chunk. No output
/// may overlap another or an input, except that the final state may be
/// exactly the initial state's view (updated in place).
struct KdaForwardOutputs {
  TensorView output;
  std::optional<TensorView> finalState;
  std::optional<TensorView> boundaries;
  std::optional<TensorView> tiles;
};

struct KdaOptions {
  /// Default K^-0.5.
  std::optional<float> scale;
  /// 16, 32 or 64; default: chosen from K, V and the device.
  std::optional<int> chunk;
  /// Divide each row of q and k by its L2 norm, sqrt(Σ x² + 1e-6), inside
  /// (flash-linear-attention's use_qk_l2norm_in_kernel).
  bool qkL2Norm = false;
  /// beta holds logits: sigmoid(beta) is used.
  bool betaLogits = false;
  /// With aLog: the bounded gate, lowerBound · sigmoid(exp(aLog) · x)
  /// (negative).
  std::optional<float> gateLowerBound = std::nullopt;
};

/// The chunk a forward with these inputs and options runs at (the
/// options', or the one rudnn-specialize chooses for the context's target)
/// and the shapes of what it saves for the backward: boundaries
/// [N, B, H, K, V] and tiles [N, B, H, W], N = ceil(T / chunk), or for S
/// packed sequences ceil(T / chunk) + S + 1. Read from the function a
/// forward saving both runs (Function::resultShapes), so this compiles its
/// kernels when no call has yet. At bf16, K = V = 128, chunk 64 the tiles
/// take 1288 bytes per token and head and the boundaries 512. Throws
/// InvalidArgument for inputs or options no call accepts; nothing is read.
struct KdaSavedShapes {
  int chunk;
  std::vector<int64_t> boundaries, tiles;
};
KdaSavedShapes kdaSavedShapes(Context &context, const KdaForwardInputs &inputs,
                              const KdaOptions &options = {});

/// Per (b, h), S = initial state (or 0), for t = 0 … T-1:
///   S ← diag(exp(g_t))·S;  u_t = beta_t·(v_t − Sᵀk_t);  S ← S + k_t·u_tᵀ;
///   o_t = Sᵀ(scale·q_t).
/// Chunked for T > 1, token by token for T = 1; one compile per signature
/// (dtypes, K, V, chunk, which optional tensors are given): batch, length,
/// heads and strides never recompile. Throws InvalidArgument naming the bad
/// argument before anything is written.
void kdaForward(Context &context, const KdaForwardInputs &inputs,
                const KdaForwardOutputs &outputs,
                const KdaOptions &options = {}, Stream stream = nullptr);

/// The forward's inputs; optionally the boundaries the forward saved
/// ([ceil(T / chunk), B, H, K, V] dense in q's dtype, which then skip
/// recomputing the states; pass the forward's options, whose chunk, given
/// or chosen, the backward's is) and with them its saved tiles (then
/// nothing of the forward runs again); the gradient of the loss with respect to
/// the output, d_output [B, T, H, V] in v's dtype and layout rules, and
/// optionally with respect to the final state, d_final_state [B, H, K, V] dense
/// fp32 (absent: zero).
struct KdaBackwardInputs {
  KdaForwardInputs forward;
  TensorView dOutput;
  std::optional<TensorView> dFinalState;
  std::optional<TensorView> boundaries;
  std::optional<TensorView> tiles;
};

/// dq, dk [B, T, H, K] in q's dtype; dv [B, T, H, V] in v's; dg
/// [B, T, H, K] fp32; dbeta [B, T, H] in beta's dtype; d_initial_state
/// [B, H, K, V] dense fp32, only with an initial state (optional even then).
/// The sequence gradients may take any outer strides, like the inputs. No
/// gradient may overlap another or any input.
///
/// With the forward's input transforms (options and aLog, dtBias) the
/// gradients are those of the raw inputs, and dALog [H] and dDtBias [H, K]
/// (dense fp32) are required exactly when aLog and dtBias are given.
struct KdaBackwardOutputs {
  TensorView dq, dk, dv, dg, dbeta;
  std::optional<TensorView> dInitialState;
  std::optional<TensorView> dALog = std::nullopt, dDtBias = std::nullopt;
};

/// Gradients of ⟨d_output, output⟩ + ⟨d_final_state, final_state⟩ through
/// kdaForward with the same inputs and options: the forward's chunk
/// quantities and boundary states are recomputed unless saved, the state
/// gradient is carried back chunk by chunk, and the input gradients are
/// taken chunk-parallel. One compile per signature, as for kdaForward; throws
/// InvalidArgument naming the bad argument before anything is written.
void kdaBackward(Context &context, const KdaBackwardInputs &inputs,
                 const KdaBackwardOutputs &outputs,
                 const KdaOptions &options = {}, Stream stream = nullptr);

/// One decoding step over a serving engine's state pool: q, k, g
/// [B, T, H or Q, K], v [B, T, H, V], beta [B, T, H] as for kdaForward (T
/// the new tokens of each entry: 1, or a few); statePool [P, H, K, V],
/// dense, f32, f16 or bf16 (one state a request); slots [B], dense int32 in
/// device memory: entry b's state is statePool[slots[b]].
struct KdaDecodeInputs {
  TensorView q, k, v, g, beta, statePool, slots;
  /// The gate from raw projections, as KdaForwardInputs::aLog and dtBias.
  std::optional<TensorView> aLog = std::nullopt, dtBias = std::nullopt;
};

/// output [B, T, H, V] in v's dtype; optional status [B] (dense int32: 0
/// done, 1 refused).
struct KdaDecodeOutputs {
  TensorView output;
  std::optional<TensorView> status = std::nullopt;
};

/// Runs each entry's tokens from statePool[slots[b]] token by token and
/// writes its final state back there, in place (rounded to the pool's type
/// once a step). An entry whose slot lies outside [0, P) or is shared with
/// another entry of the call is refused: its state untouched, its output
/// 0. With a status tensor that is all: the refusals are reported there and
/// nothing reads the slots on the host (a captured CUDA graph replays as
/// they change). Without one, the call first copies the slots to the host
/// (synchronizing `stream`) and throws InvalidArgument naming the entries
/// at fault before anything is written. The options' input transforms
/// (qkL2Norm, betaLogits, gateLowerBound with aLog) apply as for
/// kdaForward; a decoding step takes no chunk. One compile per signature
/// (dtypes, K, V, the pool's type, grouped heads, the transforms, whether
/// status is given); B, T, H, P and the slots never recompile.
void kdaDecode(Context &context, const KdaDecodeInputs &inputs,
               const KdaDecodeOutputs &outputs, const KdaOptions &options = {},
               Stream stream = nullptr);

} // namespace rudnn

#endif // RUDNN_KDA_H
