//===- lstm/recurrence.cuh - An LSTM layer's recurrence, persistent -------===//
//
// One cooperative grid runs every time step of a layer, both directions at
// once: each block owns `Units` hidden units of one direction, computes the
// four gate rows of each from the whole previous hidden state, updates
// their cells and publishes their hidden state; a grid barrier ends the
// step. With `OnChip` the block's slice of W_hh stays in shared memory for
// all steps; without (when the slices do not fit the target's SMs) it is
// read from L2 each step.
//
// Packed sequences: entry b runs its own lengths[b] steps; the reverse
// direction starts at its last valid step. Outputs past the length are 0
// and its state stops there.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/arch/grid.cuh"
#include "rudnn/lstm/state.cuh"
#include "rudnn/shared.cuh"
#include "rudnn/tensor.cuh"
#include "rudnn/warp.cuh"

namespace rudnn {
namespace lstm {

/// Batch entries a pass over the block's rows covers; threads of a block.
inline constexpr int kRecurrenceBatch = 8;
inline constexpr int kRecurrenceThreads = 256;

template <typename T> struct RecurrenceParams {
  const float *gates; // [D, T, B, 4H]: the input projection, biases in
  const T *weight[2]; // W_hh per direction, [4H, H]
  long long weight_row[2];
  const int *lengths; // [B], or null: every entry runs T steps
  float *state;       // StateLayout, initialised by the projection
  T *out;             // [T, B, D·H] or [B, T, D·H]
  TimeBatch out_at;
  T *h_n, *c_n; // [L·D, B, H], or null
  LayerStates h_n_at, c_n_at;
  int steps, batch, layer;
};

/// The dynamic shared memory of a block: its W_hh rows (`OnChip`), the
/// staged hidden states of kRecurrenceBatch entries, the gate sums.
template <typename T, int Hidden, int Units, bool OnChip>
struct RecurrenceShared {
  static constexpr int kRows = 4 * Units;
  static constexpr long long kWeightBytes =
      OnChip
          ? (static_cast<long long>(kRows) * Hidden * sizeof(T) + 15) / 16 * 16
          : 0;
  static constexpr long long kBytes = kWeightBytes +
                                      4ll * kRecurrenceBatch * Hidden +
                                      4ll * kRows * kRecurrenceBatch;
};

__device__ __forceinline__ float sigmoid(float x) {
  return 1.0f / (1.0f + expf(-x));
}

/// The whole layer; the grid is Directions × ceil(Hidden / Units) blocks.
template <typename T, int Hidden, int Directions, int Units, bool OnChip>
__device__ void recur(const RecurrenceParams<T> &p) {
  using Shared = RecurrenceShared<T, Hidden, Units, OnChip>;
  constexpr int kRows = Shared::kRows, kGates = 4 * Hidden;
  constexpr int kParts = (Hidden + Units - 1) / Units;
  constexpr int kWarps = kRecurrenceThreads / 32;
  RUDNN_DYNAMIC_SHARED(unsigned char, shared);
  T *weights = reinterpret_cast<T *>(shared);
  float *staged = reinterpret_cast<float *>(shared + Shared::kWeightBytes);
  float *sums = staged + kRecurrenceBatch * Hidden;

  const int d = blockIdx.x / kParts, j0 = blockIdx.x % kParts * Units;
  const int units = Hidden - j0 < Units ? Hidden - j0 : Units;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const StateLayout layout{p.state, p.batch, Hidden};
  // Row r of the block is gate r / Units of unit j0 + r % Units.
  const T *weight = of_direction(p.weight, d);
  const long long weight_row = of_direction(p.weight_row, d);
  auto global_row = [&](int r) {
    return weight + (r / Units * Hidden + j0 + r % Units) * weight_row;
  };
  if (OnChip) {
    for (int e = threadIdx.x; e < kRows * Hidden; e += kRecurrenceThreads) {
      const int r = e / Hidden, k = e % Hidden;
      weights[e] = r % Units < units ? global_row(r)[k] : from_float<T>(0.0f);
    }
  }

  for (int s = 0; s < p.steps; ++s) {
    const float *h_prev = layout.hidden(d, s & 1);
    float *h_next = layout.hidden(d, (s + 1) & 1);
    float *cell = layout.cell(d);
    for (int b0 = 0; b0 < p.batch; b0 += kRecurrenceBatch) {
      // Other blocks wrote h_prev: read it from L2, never a stale L1 line.
      for (int e = threadIdx.x; e < kRecurrenceBatch * Hidden;
           e += kRecurrenceThreads) {
        const int b = b0 + e / Hidden;
        staged[e] =
            b < p.batch
                ? __ldcg(h_prev + static_cast<long long>(b0) * Hidden + e)
                : 0.0f;
      }
      __syncthreads();
      for (int r = warp; r < kRows; r += kWarps) {
        if (r % Units >= units)
          continue;
        const T *row = OnChip ? weights + r * Hidden : global_row(r);
        float acc[kRecurrenceBatch] = {};
        for (int k = lane; k < Hidden; k += 32) {
          const float w = to_float(row[k]);
#pragma unroll
          for (int i = 0; i < kRecurrenceBatch; ++i)
            acc[i] += w * staged[i * Hidden + k];
        }
#pragma unroll
        for (int i = 0; i < kRecurrenceBatch; ++i)
          acc[i] = warp_sum(acc[i]);
        if (lane == 0)
#pragma unroll
          for (int i = 0; i < kRecurrenceBatch; ++i)
            sums[r * kRecurrenceBatch + i] = acc[i];
      }
      __syncthreads();
      for (int e = threadIdx.x; e < Units * kRecurrenceBatch;
           e += kRecurrenceThreads) {
        const int u = e / kRecurrenceBatch, i = e % kRecurrenceBatch;
        const int b = b0 + i, j = j0 + u;
        if (u >= units || b >= p.batch)
          continue;
        int length = p.lengths ? p.lengths[b] : p.steps;
        length = length < 0 ? 0 : length > p.steps ? p.steps : length;
        const long long at = static_cast<long long>(b) * Hidden + j;
        if (s >= length) { // past the entry's end: state kept, output 0
          h_next[at] = __ldcg(h_prev + at);
          p.out[p.out_at.offset(s, b) + d * Hidden + j] = from_float<T>(0.0f);
          continue;
        }
        const int t = d == 0 ? s : length - 1 - s;
        const float *projected =
            p.gates +
            ((static_cast<long long>(d) * p.steps + t) * p.batch + b) * kGates;
        auto gate = [&](int q) {
          return sums[(q * Units + u) * kRecurrenceBatch + i] +
                 projected[q * Hidden + j];
        };
        const float in = sigmoid(gate(0)), forget = sigmoid(gate(1)),
                    candidate = tanhf(gate(2)), out = sigmoid(gate(3));
        const float c = forget * cell[at] + in * candidate;
        const float h = out * tanhf(c);
        cell[at] = c;
        h_next[at] = h;
        p.out[p.out_at.offset(t, b) + d * Hidden + j] = from_float<T>(h);
      }
      __syncthreads();
    }
    arch::grid_sync(layout.barrier(Directions));
  }

  const int n = p.layer * Directions + d;
  const float *h_last = layout.hidden(d, p.steps & 1);
  for (int e = threadIdx.x; e < units * p.batch; e += kRecurrenceThreads) {
    const int b = e / units, j = j0 + e % units;
    const long long at = static_cast<long long>(b) * Hidden + j;
    if (p.h_n)
      p.h_n[p.h_n_at.offset(n, b) + j] = from_float<T>(__ldcg(h_last + at));
    if (p.c_n)
      p.c_n[p.c_n_at.offset(n, b) + j] = from_float<T>(layout.cell(d)[at]);
  }
}

} // namespace lstm
} // namespace rudnn
