//===- lstm/recurrence.cuh - An LSTM layer's recurrence, persistent -------===//
//
// One cooperative grid runs every time step of a layer, both directions at
// once: each block owns `Units` hidden units of one direction, computes the
// four gate rows of each from the whole previous hidden state, updates
// their cells and publishes their hidden state; a grid barrier ends the
// step. With `OnChip` the block's slice of W_hh stays in shared memory for
// all steps (16-bit weights then meet the staged hidden states on tensor
// cores); without (when the slices do not fit the target's SMs) it is read
// from L2 each step.
//
// Packed sequences: entry b runs its own lengths[b] steps; the reverse
// direction starts at its last valid step. Outputs past the length are 0
// and its state stops there.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/arch/cp_async.cuh"
#include "rudnn/arch/grid.cuh"
#include "rudnn/lstm/state.cuh"
#include "rudnn/shared.cuh"
#include "rudnn/tensor.cuh"
#include "rudnn/tile/copy.cuh"
#include "rudnn/tile/shared_tile.cuh"
#include "rudnn/tile/warp_tile.cuh"
#include "rudnn/warp.cuh"

namespace rudnn {
namespace lstm {

/// Batch entries a pass over the block's rows covers: the tensor-core
/// product's N, or (fp32 states staged) 8 on FMA. Threads of a block.
inline constexpr int kRecurrenceTensorBatch = 16;
inline constexpr int kRecurrenceFmaBatch = 8;
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

/// How a block computes its gate rows and what its shared memory holds.
/// 16-bit weights kept on chip go through tensor cores: W_hh's rows and the
/// staged hidden states (rounded to T) in swizzled tiles, padded to whole
/// 16 x 16 steps, the warps splitting the rows' 16-row tiles and the depth,
/// their partial sums added in the cell update. Otherwise each warp takes
/// whole rows on FMA, the states staged in fp32.
template <typename T, int Hidden, int Units, bool OnChip>
struct RecurrenceShared {
  static constexpr bool kTensor = sizeof(T) == 2 && OnChip;
  static constexpr int kWarps = kRecurrenceThreads / 32;
  static constexpr int kRows = 4 * Units;
  static constexpr int kRowsPadded = (kRows + 15) / 16 * 16;
  static constexpr int kDepth = (Hidden + 15) / 16 * 16;
  static constexpr int kRowTiles = kRowsPadded / 16;
  static constexpr int kSlices =
      kTensor && kRowTiles < kWarps ? kWarps / kRowTiles : 1;
  static constexpr int kBatch =
      kTensor ? kRecurrenceTensorBatch : kRecurrenceFmaBatch;
  using WeightTile = tile::SharedTile<T, kRowsPadded, kDepth>;
  using StateTile = tile::SharedTile<T, kBatch, kDepth>;

  static constexpr long long kWeightBytes =
      kTensor ? WeightTile::kBytes
      : OnChip
          ? (static_cast<long long>(kRows) * Hidden * sizeof(T) + 15) / 16 * 16
          : 0;
  static constexpr long long kStagedBytes =
      kTensor ? StateTile::kBytes : 4ll * kBatch * Hidden;
  static constexpr long long kSumsAt =
      kWeightBytes + (kStagedBytes + 15) / 16 * 16;
  static constexpr long long kBytes =
      kSumsAt + 4ll * kSlices * kRowsPadded * kBatch;
};

__device__ __forceinline__ float sigmoid(float x) {
  return 1.0f / (1.0f + expf(-x));
}

/// sums[slice][row][entry] of one pass: the block's gate rows times the
/// staged hidden states of Shared::kBatch entries.
template <typename T, int Hidden, int Units, bool OnChip, typename RowAt>
__device__ __forceinline__ void
gate_products(unsigned char *shared, float *sums, int units, RowAt row_at) {
  using Shared = RecurrenceShared<T, Hidden, Units, OnChip>;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if constexpr (Shared::kTensor) {
    constexpr int kSteps = Shared::kDepth / 16;
    const typename Shared::WeightTile weights{reinterpret_cast<T *>(shared)};
    const typename Shared::StateTile staged{
        reinterpret_cast<T *>(shared + Shared::kWeightBytes)};
    for (int item = warp; item < Shared::kRowTiles * Shared::kSlices;
         item += Shared::kWarps) {
      const int rows = item % Shared::kRowTiles * 16,
                slice = item / Shared::kRowTiles;
      tile::WarpTile<T, 16, Shared::kBatch> product;
      product.clear();
      for (int step = slice * kSteps / Shared::kSlices;
           step < (slice + 1) * kSteps / Shared::kSlices; ++step)
        product.template mma<tile::BLayout::NK>(weights, rows, staged, 0,
                                                16 * step);
      float *slice_sums = sums + slice * Shared::kRowsPadded * Shared::kBatch;
      product.for_each_pair([&](int r, int c, float first, float second) {
        slice_sums[(rows + r) * Shared::kBatch + c] = first;
        slice_sums[(rows + r) * Shared::kBatch + c + 1] = second;
      });
    }
  } else {
    const float *staged =
        reinterpret_cast<const float *>(shared + Shared::kWeightBytes);
    for (int r = warp; r < Shared::kRows; r += Shared::kWarps) {
      if (r % Units >= units)
        continue;
      const T *row =
          OnChip ? reinterpret_cast<const T *>(shared) + r * Hidden : row_at(r);
      float acc[Shared::kBatch] = {};
      for (int k = lane; k < Hidden; k += 32) {
        const float w = to_float(row[k]);
#pragma unroll
        for (int i = 0; i < Shared::kBatch; ++i)
          acc[i] += w * staged[i * Hidden + k];
      }
#pragma unroll
      for (int i = 0; i < Shared::kBatch; ++i)
        acc[i] = warp_sum(acc[i]);
      if (lane == 0)
#pragma unroll
        for (int i = 0; i < Shared::kBatch; ++i)
          sums[r * Shared::kBatch + i] = acc[i];
    }
  }
}

/// The whole layer; the grid is Directions × ceil(Hidden / Units) blocks.
template <typename T, int Hidden, int Directions, int Units, bool OnChip>
__device__ void recur(const RecurrenceParams<T> &p) {
  using Shared = RecurrenceShared<T, Hidden, Units, OnChip>;
  constexpr int kGates = 4 * Hidden;
  constexpr int kParts = (Hidden + Units - 1) / Units;
  RUDNN_DYNAMIC_SHARED(unsigned char, shared);
  float *sums = reinterpret_cast<float *>(shared + Shared::kSumsAt);

  const int d = blockIdx.x / kParts, j0 = blockIdx.x % kParts * Units;
  const int units = Hidden - j0 < Units ? Hidden - j0 : Units;
  const StateLayout layout{p.state, p.batch, Hidden};
  const T *weight = of_direction(p.weight, d);
  const long long weight_row = of_direction(p.weight_row, d);
  // Row r of the block is gate r / Units of unit j0 + r % Units; rows past
  // the block's units (and padding) are none.
  auto global_row = [&](int r) -> const T * {
    if (r >= Shared::kRows || r % Units >= units)
      return nullptr;
    return weight + (r / Units * Hidden + j0 + r % Units) * weight_row;
  };
  if constexpr (Shared::kTensor) {
    const bool vectors =
        reinterpret_cast<unsigned long long>(weight) % 16 == 0 &&
        weight_row * sizeof(T) % 16 == 0;
    tile::gather_tile_async(
        typename Shared::WeightTile{reinterpret_cast<T *>(shared)}, global_row,
        Hidden, vectors, weight);
    arch::cp_async_commit();
    arch::cp_async_wait<0>();
  } else if constexpr (OnChip) {
    T *weights = reinterpret_cast<T *>(shared);
    for (int e = threadIdx.x; e < Shared::kRows * Hidden;
         e += kRecurrenceThreads) {
      const T *row = global_row(e / Hidden);
      weights[e] = row ? row[e % Hidden] : from_float<T>(0.0f);
    }
  }

  for (int s = 0; s < p.steps; ++s) {
    const float *h_prev = layout.hidden(d, s & 1);
    float *h_next = layout.hidden(d, (s + 1) & 1);
    float *cell = layout.cell(d);
    for (int b0 = 0; b0 < p.batch; b0 += Shared::kBatch) {
      // Other blocks wrote h_prev: read it from L2, never a stale L1 line,
      // four states a load where rows allow.
      auto stage = [&](int i, int k, float h) {
        if constexpr (Shared::kTensor)
          typename Shared::StateTile{reinterpret_cast<T *>(
              shared + Shared::kWeightBytes)}(i, k) = from_float<T>(h);
        else if (k < Hidden)
          reinterpret_cast<float *>(shared +
                                    Shared::kWeightBytes)[i * Hidden + k] = h;
      };
      constexpr int kVector = Hidden % 4 == 0 ? 4 : 1;
      constexpr int kGroups = Shared::kDepth / kVector;
      for (int e = threadIdx.x; e < Shared::kBatch * kGroups;
           e += kRecurrenceThreads) {
        const int i = e / kGroups, k = e % kGroups * kVector;
        const int b = b0 + i;
        const bool inside = b < p.batch && k < Hidden;
        const float *from = h_prev + static_cast<long long>(b) * Hidden + k;
        if constexpr (kVector == 4) {
          const float4 h = inside
                               ? __ldcg(reinterpret_cast<const float4 *>(from))
                               : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
          stage(i, k, h.x);
          stage(i, k + 1, h.y);
          stage(i, k + 2, h.z);
          stage(i, k + 3, h.w);
        } else {
          stage(i, k, inside ? __ldcg(from) : 0.0f);
        }
      }
      __syncthreads();
      gate_products<T, Hidden, Units, OnChip>(shared, sums, units, global_row);
      __syncthreads();
      for (int e = threadIdx.x; e < Units * Shared::kBatch;
           e += kRecurrenceThreads) {
        const int u = e / Shared::kBatch, i = e % Shared::kBatch;
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
          float sum = projected[q * Hidden + j];
#pragma unroll
          for (int slice = 0; slice < Shared::kSlices; ++slice)
            sum += sums[(slice * Shared::kRowsPadded + q * Units + u) *
                            Shared::kBatch +
                        i];
          return sum;
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
  for (long long e = threadIdx.x; e < static_cast<long long>(units) * p.batch;
       e += kRecurrenceThreads) {
    const int b = static_cast<int>(e / units),
              j = j0 + static_cast<int>(e % units);
    const long long at = static_cast<long long>(b) * Hidden + j;
    if (p.h_n)
      p.h_n[p.h_n_at.offset(n, b) + j] = from_float<T>(__ldcg(h_last + at));
    if (p.c_n)
      p.c_n[p.c_n_at.offset(n, b) + j] = from_float<T>(layout.cell(d)[at]);
  }
}

} // namespace lstm
} // namespace rudnn
