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
/// dense [B, H, K, V] fp32 (boundaries [N, B, H, K, V], N = ceil(T / C)).
template <typename TIn, typename TGate, typename TBeta> struct ForwardParams {
  const TIn *q, *k, *v;
  const TGate *g;
  const TBeta *beta;
  const float *initial_state; // null: zero
  TIn *output;
  float *final_state; // null: not wanted
  float *boundaries;  // required by the chunked plan (workspace or result)
  float *workspace;   // ChunkTiles per (chunk, batch·head)
  SequenceStrides q_strides, k_strides, v_strides, g_strides, beta_strides,
      output_strides;
  int batch, length, heads;
  float scale;
};

/// The per-chunk tiles `prepare` leaves for the other kernels: Γ, U0 and
/// e^Γlast in fp32, as they meet fp32 arithmetic; then, in the input type,
/// the ones only ever used as tile-product operands (rounded to that type
/// there anyway): half the traffic for 16-bit inputs, the same numbers.
template <int K, int V, int C, typename TIn> struct ChunkTiles {
  // fp32, offsets in floats from the chunk's tiles.
  static constexpr long long kGamma = 0;           // [C][K]
  static constexpr long long kU0 = kGamma + C * K; // [C][V]
  static constexpr long long kLast = kU0 + C * V;  // [K] e^Γlast
  static constexpr long long kFp32Floats = kLast + K;
  // TIn, offsets in elements from operands().
  static constexpr long long kW = 0;            // [C][K]
  static constexpr long long kQd = kW + C * K;  // [C][K] q⊙e^Γ
  static constexpr long long kKd = kQd + C * K; // [C][K] k⊙e^(Γlast−Γ)
  static constexpr long long kB = kKd + C * K;  // [C][C]
  static constexpr long long kU = kB + C * C;   // [C][V] (propagate)
  static constexpr long long kInverse = kU + C * V; // [C][C] (I + A)⁻¹
  static constexpr long long kOperands = kInverse + C * C;
  static constexpr long long kFloats =
      kFp32Floats + (kOperands * (long long)sizeof(TIn) + 3) / 4;

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

/// Tokens of chunk `chunk` (C, or fewer for the tail).
template <int C> __device__ __forceinline__ int chunk_tokens(int chunk, int T) {
  int left = T - chunk * C;
  return left < C ? left : C;
}

} // namespace kda
} // namespace rudnn
