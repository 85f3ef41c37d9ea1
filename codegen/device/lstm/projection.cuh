//===- lstm/projection.cuh - An LSTM layer's input projection -------------===//
//
// Before a layer's recurrence, the part of its gates that does not depend
// on the hidden state is computed for every time step at once, as one GEMM
// per direction: gates[d, t, b] = input[t, b] · W_ih[d]ᵀ + b_ih[d] + b_hh[d].
// The same kernel lays out the recurrence's initial state (h0 and c0, or
// zeros), so the recurrent kernel starts without a barrier.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/lstm/state.cuh"
#include "rudnn/tensor.cuh"

namespace rudnn {
namespace lstm {

/// Rows (batch entries of one step), gate columns and input features a
/// block's tile covers; its threads.
inline constexpr int kProjectionRows = 16;
inline constexpr int kProjectionCols = 64;
inline constexpr int kProjectionDepth = 32;
inline constexpr int kProjectionThreads = 256;

template <typename T> struct ProjectionParams {
  const T *input; // [T, B, In] or [B, T, In]
  TimeBatch input_at;
  const T *weight[2]; // W_ih per direction, [4H, In]
  long long weight_row[2];
  const T *bias_ih[2], *bias_hh[2]; // [4H] each, or null
  const T *h0, *c0;                 // [L·D, B, H], or null
  LayerStates h0_at, c0_at;
  float *gates; // [D, T, B, 4H], dense
  float *state; // StateLayout
  int steps, batch, layer;
};

/// One block per (time step, 64 gate columns, direction); the batch in
/// tiles of 16 rows.
template <typename T, int In, int Hidden, int Directions>
__device__ void project_inputs(const ProjectionParams<T> &p) {
  constexpr int kGates = 4 * Hidden;
  // +1: the column tile is read down its rows, conflict-free.
  __shared__ float rows[kProjectionRows][kProjectionDepth + 1];
  __shared__ float cols[kProjectionCols][kProjectionDepth + 1];
  const int t = blockIdx.x, d = blockIdx.z;
  const int col0 = blockIdx.y * kProjectionCols;
  const int col = threadIdx.x % kProjectionCols;
  const int group = threadIdx.x / kProjectionCols;
  constexpr int kGroups = kProjectionThreads / kProjectionCols;
  constexpr int kPerThread = kProjectionRows / kGroups;
  const T *weight = of_direction(p.weight, d);
  const T *bias_ih = of_direction(p.bias_ih, d),
          *bias_hh = of_direction(p.bias_hh, d);
  const long long weight_row = of_direction(p.weight_row, d);
  const int g = col0 + col;

  float bias = 0.0f;
  if (g < kGates) {
    if (bias_ih)
      bias += to_float(bias_ih[g]);
    if (bias_hh)
      bias += to_float(bias_hh[g]);
  }
  for (int b0 = 0; b0 < p.batch; b0 += kProjectionRows) {
    float acc[kPerThread] = {};
    for (int k0 = 0; k0 < In; k0 += kProjectionDepth) {
      for (int e = threadIdx.x; e < kProjectionRows * kProjectionDepth;
           e += kProjectionThreads) {
        const int r = e / kProjectionDepth, k = e % kProjectionDepth;
        const int b = b0 + r;
        rows[r][k] = b < p.batch && k0 + k < In
                         ? to_float(p.input[p.input_at.offset(t, b) + k0 + k])
                         : 0.0f;
      }
      for (int e = threadIdx.x; e < kProjectionCols * kProjectionDepth;
           e += kProjectionThreads) {
        const int c = e / kProjectionDepth, k = e % kProjectionDepth;
        const int row = col0 + c;
        cols[c][k] = row < kGates && k0 + k < In
                         ? to_float(weight[row * weight_row + k0 + k])
                         : 0.0f;
      }
      __syncthreads();
#pragma unroll 8
      for (int k = 0; k < kProjectionDepth; ++k) {
        const float w = cols[col][k];
#pragma unroll
        for (int i = 0; i < kPerThread; ++i)
          acc[i] += rows[group + kGroups * i][k] * w;
      }
      __syncthreads();
    }
    if (g < kGates)
#pragma unroll
      for (int i = 0; i < kPerThread; ++i) {
        const int b = b0 + group + kGroups * i;
        if (b < p.batch)
          p.gates[((static_cast<long long>(d) * p.steps + t) * p.batch + b) *
                      kGates +
                  g] = acc[i] + bias;
      }
  }

  if (blockIdx.x == 0 && blockIdx.y == 0) {
    const StateLayout layout{p.state, p.batch, Hidden};
    if (d == 0 && threadIdx.x == 0)
      *layout.barrier(Directions) = 0;
    const int n = p.layer * Directions + d;
    for (int e = threadIdx.x; e < p.batch * Hidden; e += kProjectionThreads) {
      const int b = e / Hidden, j = e % Hidden;
      layout.hidden(d, 0)[e] =
          p.h0 ? to_float(p.h0[p.h0_at.offset(n, b) + j]) : 0.0f;
      layout.cell(d)[e] =
          p.c0 ? to_float(p.c0[p.c0_at.offset(n, b) + j]) : 0.0f;
    }
  }
}

} // namespace lstm
} // namespace rudnn
