//===- lstm/recurrence.cuh - A recurrent layer's recurrence ---------------===//
//
// Both directions at once: each block owns `Units` hidden units of one
// direction, computes the gate rows of each (a `Cell`'s, lstm/cells.cuh)
// from the whole previous hidden state, updates their states and
// publishes their hidden state.
// `recur` runs every step on one cooperative grid, a grid barrier ending
// each; with `OnChip` the block's slice of W_hh stays in shared memory for
// all steps (16-bit weights, or f32 ones with `Tf32`, then meet the staged
// hidden states on tensor cores), without it is read from L2 each pass of
// entries. `recur_step`
// runs one step a launch (where the slices do not fit the target's SMs):
// with `OnChip` each launch loads its rows once for every pass.
//
// Packed sequences: entry b runs its own lengths[b] steps; the reverse
// direction starts at its last valid step. Outputs past the length are 0
// and its state stops there.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/arch/cp_async.cuh"
#include "rudnn/arch/grid.cuh"
#include "rudnn/lstm/cells.cuh"
#include "rudnn/lstm/products.cuh"
#include "rudnn/lstm/state.cuh"
#include "rudnn/shared.cuh"
#include "rudnn/tensor.cuh"
#include "rudnn/tile/copy.cuh"
#include "rudnn/tile/shared_tile.cuh"
#include "rudnn/tile/warp_tile.cuh"
#include "rudnn/warp.cuh"

namespace rudnn {
namespace lstm {

template <typename T> struct RecurrenceParams {
  const float *gates; // [D, T, B, G·H]: the input projection, biases in
  const T *weight[2]; // W_hh per direction, [G·H, H]
  long long weight_row[2];
  const T *bias_hh[2]; // per direction, [G·H], or null: the biases the
                       // projection leaves to the cell (GRU's b_hn)
  const int *lengths;  // [B], or null: every entry runs T steps
  float *state;        // StateLayout, initialised by the projection
  T *out;              // [T, B, D·H] or [B, T, D·H]
  TimeBatch out_at;
  T *h_n, *c_n; // [L·D, B, H], or null
  LayerStates h_n_at, c_n_at;
  // What the backward takes, dense, or null: every layer's outputs [L, T,
  // B, D·H], cell states [L·D, T, B, H] (LSTM) and the four values a step
  // saves [L·D, T, B, 4H] (the cell's); 0 past an entry's length.
  T *saved_hidden;
  float *saved_cells, *saved_gates;
  int steps, batch, layer;
};

/// A block's shared memory: its G·Units gate rows of W_hh (when `OnChip`)
/// times the staged hidden states (lstm/products.cuh).
template <typename T, int Hidden, int Units, bool OnChip,
          typename Cell = LstmCell, bool Tf32 = false>
using RecurrenceShared =
    RowProducts<T, Cell::kGates * Units, Hidden, OnChip, Tf32>;

/// Entry b's steps, lengths[b] clamped to [0, T] (T without lengths).
__device__ __forceinline__ int clamped_length(const int *lengths, int b,
                                              int steps) {
  const int length = lengths ? lengths[b] : steps;
  return length < 0 ? 0 : length > steps ? steps : length;
}

/// Where direction d of a layer keeps what its backward takes (nothing
/// when the forward saves nothing).
template <typename T, int Hidden, int Directions> struct SavedSteps {
  const RecurrenceParams<T> &p;
  int d;

  /// Unit j of entry b at time t: h, c and the step's saved values.
  __device__ __forceinline__ void keep(int t, int b, int j, float h, float c,
                                       const float (&gates)[4]) const {
    if (!p.saved_hidden)
      return;
    const long long row = static_cast<long long>(t) * p.batch + b;
    p.saved_hidden[(static_cast<long long>(p.layer) * p.steps * p.batch + row) *
                       Directions * Hidden +
                   d * Hidden + j] = from_float<T>(h);
    const long long n = p.layer * Directions + d;
    const long long at = n * p.steps * p.batch + row;
    if (p.saved_cells)
      p.saved_cells[at * Hidden + j] = c;
    if (p.saved_gates)
#pragma unroll
      for (int q = 0; q < 4; ++q)
        p.saved_gates[at * 4 * Hidden + q * Hidden + j] = gates[q];
  }

  /// Zeros at time t, past entry b's length.
  __device__ __forceinline__ void clear(int t, int b, int j) const {
    keep(t, b, j, 0.0f, 0.0f, {0.0f, 0.0f, 0.0f, 0.0f});
  }
};

/// Each row's hidden state before its step in direction d of layer `layer`,
/// from the forward's saved outputs: the output one step back in the
/// direction's time, h0's slice (or zeros) at the first step, none past
/// the entry's length. Rows k = t·B + b.
template <typename T, int Hidden, int Directions> struct PreviousHidden {
  const T *hidden; // [L, T, B, D·H]
  const T *h0;     // [L·D, B, H], or null
  LayerStates h0_at;
  const int *lengths;
  int steps, batch, layer, d;

  /// Row k's H elements, or null for zeros.
  __device__ __forceinline__ const T *row(long long k) const {
    const int t = static_cast<int>(k / batch), b = static_cast<int>(k % batch);
    const int length = clamped_length(lengths, b, steps);
    if (t >= length)
      return nullptr;
    if (d == 0 ? t == 0 : t == length - 1)
      return h0 ? h0 + h0_at.offset(layer * Directions + d, b) : nullptr;
    const long long rows = static_cast<long long>(steps) * batch;
    return hidden +
           (layer * rows + k + (d == 0 ? -batch : batch)) * Directions *
               Hidden +
           d * Hidden;
  }

  /// Whether every row starts on 16 bytes.
  __device__ __forceinline__ bool aligned() const {
    return Hidden * sizeof(T) % 16 == 0 && rows_aligned16(hidden, Hidden) &&
           (!h0 || (rows_aligned16(h0, h0_at.batch) &&
                    h0_at.state * sizeof(T) % 16 == 0));
  }
};

/// What one block of the grid (Directions × ceil(Hidden / Units) blocks)
/// owns: hidden units [j0, j0 + units) of direction d, their gate rows.
template <typename T, int Hidden, int Units> struct BlockUnits {
  static constexpr int kParts = (Hidden + Units - 1) / Units;
  int d, j0, units;
  const T *weight;
  long long weight_row;
  bool aligned; // every row starts on 16 bytes

  __device__ __forceinline__ BlockUnits(const T *const (&weights)[2],
                                        const long long (&rows)[2])
      : d(blockIdx.x / kParts), j0(blockIdx.x % kParts * Units),
        units(Hidden - j0 < Units ? Hidden - j0 : Units),
        weight(of_direction(weights, d)), weight_row(of_direction(rows, d)),
        aligned(rows_aligned16(weight, weight_row)) {}

  /// Row r of the block is gate r / Units of unit j0 + r % Units; rows past
  /// the block's units (and padding) are none.
  template <int Gates> __device__ __forceinline__ const T *row(int r) const {
    if (r >= Gates * Units || r % Units >= units)
      return nullptr;
    return weight + (r / Units * Hidden + j0 + r % Units) * weight_row;
  }
};

/// Fills the block's W_hh rows into shared memory, once for all steps (or,
/// one step a launch, once a launch): 16 bytes a copy where rows allow.
template <typename T, int Hidden, int Units, bool OnChip, typename Cell,
          bool Tf32>
__device__ __forceinline__ void
load_weights(unsigned char *shared, const BlockUnits<T, Hidden, Units> &own) {
  using Shared = RecurrenceShared<T, Hidden, Units, OnChip, Cell, Tf32>;
  auto row = [&](int r) { return own.template row<Cell::kGates>(r); };
  constexpr int kChunks = Hidden * sizeof(T) / 16;
  if constexpr (Shared::kTensor) {
    tile::gather_tile_async(
        typename Shared::WeightTile{reinterpret_cast<T *>(shared)}, row, Hidden,
        own.aligned, own.weight);
    arch::cp_async_commit();
    arch::cp_async_wait<0>();
  } else if constexpr (OnChip) {
    if (Hidden * sizeof(T) % 16 == 0 && own.aligned) {
      // Plain rows of Hidden elements: a row's 16-byte chunks, zeros for a
      // row the block lacks.
      for (int e = threadIdx.x; e < Shared::kRows * kChunks;
           e += kRecurrenceThreads) {
        const int r = e / kChunks, c = e % kChunks;
        const T *from = row(r);
        arch::cp_async_16_zfill(shared + static_cast<long long>(e) * 16,
                                from ? from + c * (16 / sizeof(T)) : own.weight,
                                from ? 16 : 0);
      }
      arch::cp_async_commit();
      arch::cp_async_wait<0>();
    } else {
      Shared::fill(shared, [&](int r, int k) {
        const T *from = row(r);
        return from ? from[k] : from_float<T>(0.0f);
      });
    }
  }
}

/// Stages the fp32 previous hidden states of entries b0.. (zero past the
/// batch and the depth) for a pass of the products.
template <typename Shared>
__device__ __forceinline__ void
stage_states(unsigned char *shared, const float *h_prev, int b0, int batch) {
  constexpr int Hidden = Shared::kLength;
  // Other blocks wrote h_prev: read it from L2, never a stale L1 line,
  // four states a load where rows allow.
  constexpr int kVector = Hidden % 4 == 0 ? 4 : 1;
  constexpr int kGroups = Shared::kDepth / kVector;
  for (int e = threadIdx.x; e < Shared::kBatch * kGroups;
       e += kRecurrenceThreads) {
    const int i = e / kGroups, k = e % kGroups * kVector;
    const int b = b0 + i;
    const bool inside = b < batch && k < Hidden;
    const float *from = h_prev + static_cast<long long>(b) * Hidden + k;
    if constexpr (kVector == 4) {
      const float4 h = inside ? __ldcg(reinterpret_cast<const float4 *>(from))
                              : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
      Shared::stage(shared, i, k, h.x);
      Shared::stage(shared, i, k + 1, h.y);
      Shared::stage(shared, i, k + 2, h.z);
      Shared::stage(shared, i, k + 3, h.w);
    } else {
      Shared::stage(shared, i, k, inside ? __ldcg(from) : 0.0f);
    }
  }
}

/// Step s of the block's units: gate rows × the previous hidden state, the
/// cell's update, the new hidden state and the step's outputs. Reads one
/// hidden buffer and writes the other; the caller orders steps (a grid
/// barrier, or one launch a step).
template <typename T, int Hidden, int Directions, int Units, bool OnChip,
          typename Cell, bool Tf32>
__device__ void step(const RecurrenceParams<T> &p, unsigned char *shared,
                     const BlockUnits<T, Hidden, Units> &own, int s) {
  using Shared = RecurrenceShared<T, Hidden, Units, OnChip, Cell, Tf32>;
  constexpr int kGates = Cell::kGates;
  const int d = own.d, j0 = own.j0, units = own.units;
  const StateLayout layout{p.state, p.batch, Hidden};
  const float *h_prev = layout.hidden(d, s & 1);
  float *h_next = layout.hidden(d, (s + 1) & 1);
  float *cell = layout.cell(d);
  const SavedSteps<T, Hidden, Directions> saved{p, d};
  // With weights on tensor cores (16-bit, or f32 in TF32) the products
  // take the states in the layer's type: from step 1 on they are the layer's
  // outputs of the step before, which cp.async copies from L2 straight into the
  // swizzled tile (half the fp32 state's bytes, no register round trip) where
  // rows start on 16 bytes. Same values: the outputs are the states rounded as
  // staging would round them.
  const bool from_outputs =
      Shared::kTensor && s > 0 && Hidden * sizeof(T) % 16 == 0 &&
      rows_aligned16(p.out, p.out_at.time) &&
      p.out_at.batch * static_cast<long long>(sizeof(T)) % 16 == 0;
  for (int b0 = 0; b0 < p.batch; b0 += Shared::kBatch) {
    if constexpr (Shared::kTensor) {
      if (from_outputs) {
        tile::gather_tile_async<tile::Alignment::Aligned>(
            typename Shared::StateTile{
                reinterpret_cast<T *>(shared + Shared::kWeightBytes)},
            [&](int i) -> const T * {
              const int b = b0 + i;
              if (b >= p.batch)
                return nullptr;
              const int length = clamped_length(p.lengths, b, p.steps);
              if (s >= length) // past its end: the products go unused
                return nullptr;
              return p.out + p.out_at.offset(d == 0 ? s - 1 : length - s, b) +
                     d * Hidden;
            },
            Hidden, true, p.out);
        arch::cp_async_commit();
        arch::cp_async_wait<0>();
      }
    }
    if (!from_outputs)
      stage_states<Shared>(shared, h_prev, b0, p.batch);
    __syncthreads();
    // On chip, rows of Hidden elements from the 16-byte aligned base.
    row_products<Shared>(
        shared,
        [&](int r) {
          return WeightRow<T>{own.template row<kGates>(r), 1};
        },
        own.aligned);
    __syncthreads();
    for (int e = threadIdx.x; e < Units * Shared::kBatch;
         e += kRecurrenceThreads) {
      const int u = e / Shared::kBatch, i = e % Shared::kBatch;
      const int b = b0 + i, j = j0 + u;
      if (u >= units || b >= p.batch)
        continue;
      const int length = clamped_length(p.lengths, b, p.steps);
      const long long at = static_cast<long long>(b) * Hidden + j;
      if (s >= length) { // past the entry's end: state kept, output 0
        h_next[at] = __ldcg(h_prev + at);
        p.out[p.out_at.offset(s, b) + d * Hidden + j] = from_float<T>(0.0f);
        saved.clear(s, b, j);
        continue;
      }
      const int t = d == 0 ? s : length - 1 - s;
      const float *gates =
          p.gates + ((static_cast<long long>(d) * p.steps + t) * p.batch + b) *
                        kGates * Hidden;
      float projected[kGates], recurrent[kGates], kept[4];
#pragma unroll
      for (int q = 0; q < kGates; ++q) {
        projected[q] = gates[q * Hidden + j];
        recurrent[q] = Shared::sum(shared, q * Units + u, i);
      }
      const T *bias = of_direction(p.bias_hh, d);
      float c = Cell::kCellState ? cell[at] : 0.0f;
      const float h =
          Cell::forward(projected, recurrent,
                        bias ? to_float(bias[(kGates - 1) * Hidden + j]) : 0.0f,
                        Cell::kCellState ? 0.0f : __ldcg(h_prev + at), c, kept);
      if (Cell::kCellState)
        cell[at] = c;
      h_next[at] = h;
      p.out[p.out_at.offset(t, b) + d * Hidden + j] = from_float<T>(h);
      saved.keep(t, b, j, h, c, kept);
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
    if (p.c_n) // LSTM only
      p.c_n[p.c_n_at.offset(n, b) + j] = from_float<T>(__ldcg(cell + at));
  }
}

/// The whole layer on a cooperative grid, a grid barrier between steps.
template <typename T, int Hidden, int Directions, int Units, bool OnChip,
          typename Cell = LstmCell, bool Tf32 = false>
__device__ void recur(const RecurrenceParams<T> &p) {
  RUDNN_DYNAMIC_SHARED(unsigned char, shared);
  const BlockUnits<T, Hidden, Units> own(p.weight, p.weight_row);
  load_weights<T, Hidden, Units, OnChip, Cell, Tf32>(shared, own);
  const StateLayout layout{p.state, p.batch, Hidden};
  for (int s = 0; s < p.steps; ++s) {
    step<T, Hidden, Directions, Units, OnChip, Cell, Tf32>(p, shared, own, s);
    arch::grid_sync(layout.barrier(Directions));
  }
  store_final_states<T, Hidden, Directions, Units>(p, own);
}

/// Step s alone: the plan launches it for s = 0 … T − 1 in order, the
/// block's W_hh rows read from L2 once (`OnChip`) or once a pass.
template <typename T, int Hidden, int Directions, int Units, bool OnChip,
          typename Cell = LstmCell, bool Tf32 = false>
__device__ void recur_step(const RecurrenceParams<T> &p, int s) {
  RUDNN_DYNAMIC_SHARED(unsigned char, shared);
  const BlockUnits<T, Hidden, Units> own(p.weight, p.weight_row);
  load_weights<T, Hidden, Units, OnChip, Cell, Tf32>(shared, own);
  step<T, Hidden, Directions, Units, OnChip, Cell, Tf32>(p, shared, own, s);
  if (s == p.steps - 1)
    store_final_states<T, Hidden, Directions, Units>(p, own);
}

} // namespace lstm
} // namespace rudnn
