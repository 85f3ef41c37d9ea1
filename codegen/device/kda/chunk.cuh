//===- kda/chunk.cuh - What the chunked KDA kernels share -----------------===//
//
// The parameter block every KDA forward kernel takes and the layout of the
// per-chunk tiles `prepare` leaves in the workspace for the others.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/tensor.cuh"
#include "rudnn/tile/copy.cuh"

namespace rudnn {
namespace kda {

/// A KDA forward call. Sequence tensors are [B, T, H, *] views; states are
/// dense [B, H, K, V] fp32; boundaries dense [N, B, H, K, V] (N =
/// ceil(T / C)) in the input type, as every later use takes them as a
/// tensor-core operand.
template <typename TIn, typename TGate, typename TBeta> struct ForwardParams {
  const TIn *q, *k, *v;
  const TGate *g;
  const TBeta *beta;
  const float *initial_state; // null: zero
  TIn *output;
  float *final_state; // null: not wanted
  TIn *boundaries;    // required by the chunked plan (workspace or result)
  float *workspace;   // ChunkTiles per (chunk, batch·head), then a
                      // backward's BackwardTiles
  SequenceStrides q_strides, k_strides, v_strides, g_strides, beta_strides,
      output_strides;
  int batch, length, heads;
  float scale;
};

/// The per-chunk tiles the forward's kernels exchange: e^Γlast in fp32 (it
/// meets fp32 arithmetic), then, in the input type, the ones only ever used
/// as tile-product operands (rounded to that type there anyway): W, Kd, the
/// pairwise matrix B, and U0, which the walk overwrites with U. Γ and
/// q ⊙ e^Γ are not kept: `prepare` holds Γ in shared memory and `output`
/// forms q ⊙ e^Γ from q and g itself.
template <int K, int V, int C, typename TIn> struct ChunkTiles {
  // fp32, offsets in floats from the chunk's tiles.
  static constexpr long long kLast = 0; // [K] e^Γlast
  static constexpr long long kFp32Floats = (K + 3) / 4 * 4;
  // TIn, offsets in elements from operands().
  static constexpr long long kW = 0;           // [C][K]
  static constexpr long long kKd = kW + C * K; // [C][K] k⊙e^(Γlast−Γ)
  static constexpr long long kB = kKd + C * K; // [C][C]
  static constexpr long long kU = kB + C * C;  // [C][V] U0, then U
  static constexpr long long kOperands = kU + C * V;
  // Whole 16-byte chunks, so every chunk's tiles start 16-byte aligned.
  static constexpr long long kFloats =
      kFp32Floats + (kOperands * (long long)sizeof(TIn) + 15) / 16 * 4;

  /// With K and V multiples of 8 every row of the tiles is 16-byte aligned
  /// (the workspace is 256-byte aligned and each part a multiple of 16
  /// bytes): copies of them need no element-wise path.
  static constexpr tile::Alignment kAlignment = K % 8 == 0 && V % 8 == 0
                                                    ? tile::Alignment::Aligned
                                                    : tile::Alignment::Checked;

  static __device__ __forceinline__ float *at(float *workspace, int chunk,
                                              int sequence, int sequences) {
    return workspace + ((long long)chunk * sequences + sequence) * kFloats;
  }
  static __device__ __forceinline__ TIn *operands(float *tiles) {
    return reinterpret_cast<TIn *>(tiles + kFp32Floats);
  }
  static __device__ __forceinline__ const TIn *operands(const float *tiles) {
    return reinterpret_cast<const TIn *>(tiles + kFp32Floats);
  }
};

/// What a backward's `prepare` keeps besides the forward's tiles, in a
/// second array after every chunk's ChunkTiles, in the input type: the
/// decayed queries q ⊙ e^Γ (the reverse walk's operand) and (I + A)⁻¹.
/// `gradients` forms Γ again from g and needs no U0 (see there).
template <int K, int V, int C, typename TIn> struct BackwardTiles {
  static constexpr long long kQd = 0;                // [C][K] q⊙e^Γ
  static constexpr long long kInverse = kQd + C * K; // [C][C]
  static constexpr long long kOperands = kInverse + C * C;
  static constexpr long long kFloats =
      (kOperands * (long long)sizeof(TIn) + 15) / 16 * 4;

  static __device__ __forceinline__ TIn *
  at(float *workspace, int chunk, int sequence, int sequences, int length) {
    const long long chunks = (length + C - 1) / C;
    return reinterpret_cast<TIn *>(
        workspace + chunks * sequences * ChunkTiles<K, V, C, TIn>::kFloats +
        ((long long)chunk * sequences + sequence) * kFloats);
  }
};

/// Tokens of chunk `chunk` (C, or fewer for the tail).
template <int C> __device__ __forceinline__ int chunk_tokens(int chunk, int T) {
  int left = T - chunk * C;
  return left < C ? left : C;
}

/// visit(i, d, Γ_id) for the L tokens from t0 of sequence (b, h) and every
/// feature d: Γ the in-chunk inclusive cumulative sum of g, in fp32, one
/// thread a feature. Every kernel forms Γ here, so they agree bit for bit.
template <int K, typename TIn, typename TGate, typename TBeta, typename Visit>
__device__ void chunk_decay(const ForwardParams<TIn, TGate, TBeta> &p, int b,
                            int h, int t0, int L, Visit visit) {
  for (int d = threadIdx.x; d < K; d += blockDim.x) {
    const TGate *g = p.g + p.g_strides.offset(b, t0, h) + d;
    float gamma = 0.f;
    for (int i = 0; i < L; ++i) {
      gamma += to_float(g[(long long)i * p.g_strides.time]);
      visit(i, d, gamma);
    }
  }
}

} // namespace kda
} // namespace rudnn
