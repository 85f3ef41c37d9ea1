//===- kda/backward_params.cuh - What the KDA backward kernels share ------===//
//
// The backward's parameter block (the forward's, then the gradients and
// their strides) and the per-chunk scratch its reverse walk leaves for the
// chunk-parallel gradients.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/kda/chunk.cuh"

namespace rudnn {
namespace kda {

template <typename TIn, typename TGate, typename TBeta> struct BackwardParams {
  ForwardParams<TIn, TGate, TBeta> forward; // boundaries: filled, required
  const TIn *d_output;
  const float *d_final_state; // null: zero
  TIn *dq, *dk, *dv;
  float *dg;
  TBeta *dbeta;
  float *d_initial_state; // null: not wanted
  float *scratch;         // GradientTiles per (chunk, batch·head)
  SequenceStrides d_output_strides, dq_strides, dk_strides, dv_strides,
      dg_strides, dbeta_strides;
};

/// What the backward keeps per chunk, in the input type: the gradients of
/// the chunk's end state and of its updates (`gradients` takes them as
/// tensor-core operands, rounded to that type anyway).
template <int K, int V, int C, typename TIn> struct GradientTiles {
  static constexpr long long kDSEnd = 0;           // [K][V] dS at chunk end
  static constexpr long long kDU = kDSEnd + K * V; // [C][V]
  static constexpr long long kOperands = kDU + C * V;
  static constexpr long long kFloats =
      (kOperands * (long long)sizeof(TIn) + 15) / 16 * 4;

  static __device__ __forceinline__ TIn *at(float *scratch, int chunk,
                                            int sequence, int sequences) {
    return reinterpret_cast<TIn *>(
        scratch + ((long long)chunk * sequences + sequence) * kFloats);
  }
};

} // namespace kda
} // namespace rudnn
