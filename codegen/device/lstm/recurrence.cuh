//===- lstm/recurrence.cuh - An LSTM layer's recurrence -------------------===//
//
// Both directions at once: each block owns `Units` hidden units of one
// direction, computes the four gate rows of each from the whole previous
// hidden state, updates their cells and publishes their hidden state.
// `recur` runs every step on one cooperative grid, a grid barrier ending
// each; with `OnChip` the block's slice of W_hh stays in shared memory for
// all steps (16-bit weights then meet the staged hidden states on tensor
// cores), without it is read from L2 each step. `recur_step` runs one step
// a launch (where the slices do not fit the target's SMs).
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
/// staged hidden states of Shared::kBatch entries. `vectors`: the rows
/// start on 16 bytes.
template <typename T, int Hidden, int Units, bool OnChip, typename RowAt>
__device__ __forceinline__ void gate_products(unsigned char *shared,
                                              float *sums, int units,
                                              RowAt row_at, bool vectors) {
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
    // Each lane takes 16 bytes of the row at a time where rows allow, and
    // the states under them four fp32 a shared load.
    constexpr int kVector = Vector16<T>::kCount;
    const float *staged =
        reinterpret_cast<const float *>(shared + Shared::kWeightBytes);
    for (int r = warp; r < Shared::kRows; r += Shared::kWarps) {
      if (r % Units >= units)
        continue;
      const T *row =
          OnChip ? reinterpret_cast<const T *>(shared) + r * Hidden : row_at(r);
      float acc[Shared::kBatch] = {};
      if (Hidden % kVector == 0 && vectors) {
        for (int k = lane * kVector; k < Hidden; k += 32 * kVector) {
          float w[kVector];
          load_vector16(row + k, w);
#pragma unroll
          for (int i = 0; i < Shared::kBatch; ++i)
#pragma unroll
            for (int v = 0; v < kVector; v += 4) {
              const float4 h = *reinterpret_cast<const float4 *>(
                  staged + i * Hidden + k + v);
              acc[i] +=
                  w[v] * h.x + w[v + 1] * h.y + w[v + 2] * h.z + w[v + 3] * h.w;
            }
        }
      } else {
        for (int k = lane; k < Hidden; k += 32) {
          const float w = to_float(row[k]);
#pragma unroll
          for (int i = 0; i < Shared::kBatch; ++i)
            acc[i] += w * staged[i * Hidden + k];
        }
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

/// What one block of the grid (Directions × ceil(Hidden / Units) blocks)
/// owns: hidden units [j0, j0 + units) of direction d, their gate rows.
template <typename T, int Hidden, int Units> struct BlockUnits {
  static constexpr int kParts = (Hidden + Units - 1) / Units;
  int d, j0, units;
  const T *weight;
  long long weight_row;
  bool aligned; // every row starts on 16 bytes

  __device__ __forceinline__ explicit BlockUnits(const RecurrenceParams<T> &p)
      : d(blockIdx.x / kParts), j0(blockIdx.x % kParts * Units),
        units(Hidden - j0 < Units ? Hidden - j0 : Units),
        weight(of_direction(p.weight, d)),
        weight_row(of_direction(p.weight_row, d)),
        aligned(rows_aligned16(weight, weight_row)) {}

  /// Row r of the block is gate r / Units of unit j0 + r % Units; rows past
  /// the block's units (and padding) are none.
  __device__ __forceinline__ const T *row(int r) const {
    if (r >= 4 * Units || r % Units >= units)
      return nullptr;
    return weight + (r / Units * Hidden + j0 + r % Units) * weight_row;
  }
};

/// Fills the block's W_hh rows into shared memory, once for all steps.
template <typename T, int Hidden, int Units, bool OnChip>
__device__ __forceinline__ void
load_weights(unsigned char *shared, const BlockUnits<T, Hidden, Units> &own) {
  using Shared = RecurrenceShared<T, Hidden, Units, OnChip>;
  auto row = [&](int r) { return own.row(r); };
  if constexpr (Shared::kTensor) {
    tile::gather_tile_async(
        typename Shared::WeightTile{reinterpret_cast<T *>(shared)}, row, Hidden,
        own.aligned, own.weight);
    arch::cp_async_commit();
    arch::cp_async_wait<0>();
  } else if constexpr (OnChip) {
    T *weights = reinterpret_cast<T *>(shared);
    for (int e = threadIdx.x; e < Shared::kRows * Hidden;
         e += kRecurrenceThreads) {
      const T *from = row(e / Hidden);
      weights[e] = from ? from[e % Hidden] : from_float<T>(0.0f);
    }
  }
}

/// Step s of the block's units: gate rows × the previous hidden state, the
/// cell update, the new hidden state and the step's outputs. Reads one
/// hidden buffer and writes the other; the caller orders steps (a grid
/// barrier, or one launch a step).
template <typename T, int Hidden, int Units, bool OnChip>
__device__ void step(const RecurrenceParams<T> &p, unsigned char *shared,
                     const BlockUnits<T, Hidden, Units> &own, int s) {
  using Shared = RecurrenceShared<T, Hidden, Units, OnChip>;
  constexpr int kGates = 4 * Hidden;
  float *sums = reinterpret_cast<float *>(shared + Shared::kSumsAt);
  const int d = own.d, j0 = own.j0, units = own.units;
  const StateLayout layout{p.state, p.batch, Hidden};
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
        const float4 h = inside ? __ldcg(reinterpret_cast<const float4 *>(from))
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
    // On chip, rows of Hidden elements from the 16-byte aligned base.
    gate_products<T, Hidden, Units, OnChip>(
        shared, sums, units, [&](int r) { return own.row(r); },
        OnChip || own.aligned);
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
}

/// After the last step: the block's units of h_n and c_n (written by this
/// block, so no barrier is needed before).
template <typename T, int Hidden, int Directions, int Units>
__device__ __forceinline__ void
store_final_states(const RecurrenceParams<T> &p,
                   const BlockUnits<T, Hidden, Units> &own) {
  const StateLayout layout{p.state, p.batch, Hidden};
  const int n = p.layer * Directions + own.d;
  const float *h_last = layout.hidden(own.d, p.steps & 1);
  const float *cell = layout.cell(own.d);
  for (long long e = threadIdx.x;
       e < static_cast<long long>(own.units) * p.batch;
       e += kRecurrenceThreads) {
    const int b = static_cast<int>(e / own.units),
              j = own.j0 + static_cast<int>(e % own.units);
    const long long at = static_cast<long long>(b) * Hidden + j;
    if (p.h_n)
      p.h_n[p.h_n_at.offset(n, b) + j] = from_float<T>(__ldcg(h_last + at));
    if (p.c_n)
      p.c_n[p.c_n_at.offset(n, b) + j] = from_float<T>(__ldcg(cell + at));
  }
}

/// The whole layer on a cooperative grid, a grid barrier between steps.
template <typename T, int Hidden, int Directions, int Units, bool OnChip>
__device__ void recur(const RecurrenceParams<T> &p) {
  RUDNN_DYNAMIC_SHARED(unsigned char, shared);
  const BlockUnits<T, Hidden, Units> own(p);
  load_weights<T, Hidden, Units, OnChip>(shared, own);
  const StateLayout layout{p.state, p.batch, Hidden};
  for (int s = 0; s < p.steps; ++s) {
    step<T, Hidden, Units, OnChip>(p, shared, own, s);
    arch::grid_sync(layout.barrier(Directions));
  }
  store_final_states<T, Hidden, Directions, Units>(p, own);
}

/// Step s alone: the plan launches it for s = 0 … T − 1 in order, W_hh read
/// from L2 each time.
template <typename T, int Hidden, int Directions, int Units>
__device__ void recur_step(const RecurrenceParams<T> &p, int s) {
  RUDNN_DYNAMIC_SHARED(unsigned char, shared);
  const BlockUnits<T, Hidden, Units> own(p);
  step<T, Hidden, Units, false>(p, shared, own, s);
  if (s == p.steps - 1)
    store_final_states<T, Hidden, Directions, Units>(p, own);
}

} // namespace lstm
} // namespace rudnn
