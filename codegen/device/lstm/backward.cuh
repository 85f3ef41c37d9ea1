//===- lstm/backward.cuh - A recurrent layer's recurrence backwards -------===//
//
// Backpropagation through time, both directions at once, on the forward's
// grid: each block owns `Units` hidden units of one direction and walks
// each entry's steps in reverse. A step forms the units' hidden-state
// gradient from the output's and W_hhᵀ times the whole recurrent-side gate
// gradient of the step after (the block keeps W_hh's columns of its units,
// on chip where they fit), then the gate gradients (the pre-activations')
// from the forward's saved values, and carries what the cell hands back
// (the LSTM's cell gradient, the GRU's z ⊙ dh). The gate gradients go to
// memory in the layer's type: the other blocks read them at the next step,
// the weight and input gradients afterwards. Bias gradients are summed on
// chip over entries and steps in a fixed order.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/arch/grid.cuh"
#include "rudnn/lstm/cells.cuh"
#include "rudnn/lstm/products.cuh"
#include "rudnn/lstm/recurrence.cuh"
#include "rudnn/lstm/state.cuh"
#include "rudnn/shared.cuh"
#include "rudnn/tensor.cuh"

namespace rudnn {
namespace lstm {

/// `G`: the type of the output gradient (the caller's for the last layer,
/// fp32 from the layer above for the others).
template <typename T, typename G> struct BackwardParams {
  const float *gates;    // [·, T, B, 4H] saved values, direction d's at
  long long gates_first; //   slice gates_first + d
  const float *cells;    // [L·D, T, B, H]: the forward's saved cells (LSTM)
  const T *c0;           // [L·D, B, H], or null
  LayerStates c0_at;
  const T *hidden; // [L, T, B, D·H]: the forward's saved outputs (GRU)
  const T *h0;     // [L·D, B, H], or null
  LayerStates h0_at;
  const G *d_out; // [T, B, D·H]: the gradient of the layer's output
  TimeBatch d_out_at;
  const T *d_h_n, *d_c_n; // [L·D, B, H], or null (zero)
  LayerStates d_h_n_at, d_c_n_at;
  const T *weight[2]; // W_hh per direction, [G·H, H]
  long long weight_row[2];
  const int *lengths; // [B], or null
  float *state;       // [D, B, H] carried gradients, then the grid barrier
  T *d_gates;         // [D, T, B, C·H], dense (C: kGradientColumns)
  float *d_bias;      // [D, 4H]: the cell's bias sums
  T *d_h0, *d_c0;     // [L·D, B, H], or null
  LayerStates d_h0_at, d_c0_at;
  int steps, batch, layer;
};

/// A block's shared memory: the products of its units' W_hh columns (G·H
/// deep) with the staged gate gradients, then its bias gradients (4·Units
/// fp32) and a pass's gate gradients to add to them ([4·Units][kBatch]).
template <typename T, int Hidden, int Units, bool OnChip,
          typename Cell = LstmCell>
struct BackwardShared {
  using Products = RowProducts<T, Units, Cell::kGates * Hidden, OnChip>;
  static constexpr long long kBiasAt = Products::kBytes;
  static constexpr long long kPassAt = kBiasAt + 16ll * Units;
  static constexpr long long kBytes = kPassAt + 16ll * Units * Products::kBatch;
};

/// The time of entry b's backward step s (its forward step length − 1 − s).
__device__ __forceinline__ int backward_time(int d, int length, int s) {
  return d == 0 ? length - 1 - s : s;
}

/// Stages the recurrent-side gate gradients of the step before, [kBatch,
/// G·H] of entries b0.. (zero where an entry has none), from L2: other
/// blocks wrote them. `Columns`: a row's gate-gradient columns, the
/// recurrent side's the last G·H.
template <typename Products, int Columns, typename T>
__device__ __forceinline__ void
stage_gate_gradients(unsigned char *shared, const T *d_gates, int d, int s,
                     int b0, int steps, int batch, const int *lengths) {
  constexpr int kWidth = Products::kLength;
  constexpr int kRow = Columns, kFirst = Columns - kWidth;
  constexpr int kVector =
      kWidth % Vector16<T>::kCount == 0 && kRow % Vector16<T>::kCount == 0
          ? Vector16<T>::kCount
          : 1;
  constexpr int kGroups = Products::kDepth / kVector;
  for (int e = threadIdx.x; e < Products::kBatch * kGroups;
       e += kRecurrenceThreads) {
    const int i = e / kGroups, k = e % kGroups * kVector, b = b0 + i;
    const T *from = nullptr;
    if (b < batch && s > 0 && k < kWidth) {
      const int length = clamped_length(lengths, b, steps);
      if (s - 1 < length)
        from = d_gates +
               ((static_cast<long long>(d) * steps +
                 backward_time(d, length, s - 1)) *
                    batch +
                b) *
                   kRow +
               kFirst + k;
    }
    if constexpr (kVector > 1) {
      float values[kVector] = {};
      if (from) {
        const uint4 raw = __ldcg(reinterpret_cast<const uint4 *>(from));
        const T *elements = reinterpret_cast<const T *>(&raw);
#pragma unroll
        for (int v = 0; v < kVector; ++v)
          values[v] = to_float(elements[v]);
      }
#pragma unroll
      for (int v = 0; v < kVector; ++v)
        Products::stage(shared, i, k + v, values[v]);
    } else {
      Products::stage(shared, i, k, from ? to_float(__ldcg(from)) : 0.0f);
    }
  }
}

/// Backward step s of the block's units (s = T: only what reaches the
/// initial states of entries of length T).
template <typename T, typename G, int Hidden, int Directions, int Units,
          bool OnChip, typename Cell>
__device__ void backward_step(const BackwardParams<T, G> &p,
                              unsigned char *shared,
                              const BlockUnits<T, Hidden, Units> &own, int s) {
  using Shared = BackwardShared<T, Hidden, Units, OnChip, Cell>;
  using Products = typename Shared::Products;
  constexpr int kColumns = Cell::kGradientColumns;
  const int d = own.d, j0 = own.j0, units = own.units;
  const int n = p.layer * Directions + d;
  float *carried = p.state + static_cast<long long>(d) * p.batch * Hidden;
  float *pass = reinterpret_cast<float *>(shared + Shared::kPassAt);
  float *bias = reinterpret_cast<float *>(shared + Shared::kBiasAt);
  const PreviousHidden<T, Hidden, Directions> previous{
      p.hidden, p.h0, p.h0_at, p.lengths, p.steps, p.batch, p.layer, d};
  for (int b0 = 0; b0 < p.batch; b0 += Products::kBatch) {
    stage_gate_gradients<Products, kColumns * Hidden>(
        shared, p.d_gates, d, s, b0, p.steps, p.batch, p.lengths);
    __syncthreads();
    row_products<Products>(
        shared,
        [&](int u) {
          return WeightRow<T>{u < units ? own.weight + j0 + u : nullptr,
                              own.weight_row};
        },
        false);
    __syncthreads();
    for (int e = threadIdx.x; e < Units * Products::kBatch;
         e += kRecurrenceThreads) {
      const int u = e / Products::kBatch, i = e % Products::kBatch;
      const int b = b0 + i, j = j0 + u;
      float dz[kColumns] = {};
      if (u < units && b < p.batch) {
        const int length = clamped_length(p.lengths, b, p.steps);
        const long long at = static_cast<long long>(b) * Hidden + j;
        float dh = Products::sum(shared, u, i);
        // What the step after handed back: the LSTM's cell gradient, or
        // the GRU's part of dh.
        float carry = 0.0f;
        if (s == 0) {
          if (p.d_h_n)
            dh += to_float(p.d_h_n[p.d_h_n_at.offset(n, b) + j]);
          if (p.d_c_n)
            carry = to_float(p.d_c_n[p.d_c_n_at.offset(n, b) + j]);
        } else if (s <= length) {
          carry = carried[at];
        }
        if (!Cell::kCellState)
          dh += carry;
        if (s == length) { // past the first step: the initial states'
          if (p.d_h0)
            p.d_h0[p.d_h0_at.offset(n, b) + j] = from_float<T>(dh);
          if (p.d_c0)
            p.d_c0[p.d_c0_at.offset(n, b) + j] = from_float<T>(carry);
        } else if (s < length) {
          const int t = backward_time(d, length, s);
          const long long row = static_cast<long long>(t) * p.batch + b;
          dh += to_float(p.d_out[p.d_out_at.offset(t, b) + d * Hidden + j]);
          const float *gates =
              p.gates +
              ((p.gates_first + d) * p.steps * p.batch + row) * 4 * Hidden;
          const float saved[4] = {gates[j], gates[Hidden + j],
                                  gates[2 * Hidden + j], gates[3 * Hidden + j]};
          if constexpr (Cell::kCellState) {
            const float *cells = p.cells + static_cast<long long>(n) * p.steps *
                                               p.batch * Hidden;
            // The cell before: the forward's previous step's, or c0's.
            float c_prev = 0.0f;
            if (s < length - 1)
              c_prev =
                  cells[(row + (d == 0 ? -p.batch : p.batch)) * Hidden + j];
            else if (p.c0)
              c_prev = to_float(p.c0[p.c0_at.offset(n, b) + j]);
            carried[at] = Cell::backward(saved, dh, carry,
                                         cells[row * Hidden + j], c_prev, dz);
          } else {
            const T *h_prev = previous.row(row);
            carried[at] =
                Cell::backward(saved, dh, carry,
                               h_prev ? to_float(h_prev[j]) : 0.0f, 0.0f, dz);
          }
          T *to = p.d_gates +
                  (static_cast<long long>(d) * p.steps * p.batch + row) *
                      kColumns * Hidden;
#pragma unroll
          for (int q = 0; q < kColumns; ++q)
            to[q * Hidden + j] = from_float<T>(dz[q]);
        }
        if (s >= length && s < p.steps) { // rows past the length: zeros
          T *to = p.d_gates +
                  ((static_cast<long long>(d) * p.steps + s) * p.batch + b) *
                      kColumns * Hidden;
#pragma unroll
          for (int q = 0; q < kColumns; ++q)
            to[q * Hidden + j] = from_float<T>(0.0f);
        }
      }
#pragma unroll
      for (int q = 0; q < 4; ++q)
        pass[(q * Units + u) * Products::kBatch + i] = Cell::bias_sum(dz, q);
    }
    __syncthreads();
    // The pass's entries in order: the same sums on every run.
    for (int r = threadIdx.x; r < 4 * Units; r += kRecurrenceThreads)
#pragma unroll
      for (int i = 0; i < Products::kBatch; ++i)
        bias[r] += pass[r * Products::kBatch + i];
  }
}

/// The whole layer backwards on a cooperative grid, a grid barrier between
/// steps; then the block's bias gradients.
template <typename T, typename G, int Hidden, int Directions, int Units,
          bool OnChip, typename Cell = LstmCell>
__device__ void recur_backward(const BackwardParams<T, G> &p) {
  using Shared = BackwardShared<T, Hidden, Units, OnChip, Cell>;
  RUDNN_DYNAMIC_SHARED(unsigned char, shared);
  const BlockUnits<T, Hidden, Units> own(p.weight, p.weight_row);
  // Row u is column j0 + u of W_hh: W_hhᵀ's row, G·H deep.
  Shared::Products::fill(shared, [&](int u, int k) {
    return u < own.units ? own.weight[k * own.weight_row + own.j0 + u]
                         : from_float<T>(0.0f);
  });
  float *bias = reinterpret_cast<float *>(shared + Shared::kBiasAt);
  for (int r = threadIdx.x; r < 4 * Units; r += kRecurrenceThreads)
    bias[r] = 0.0f;
  unsigned *barrier = reinterpret_cast<unsigned *>(
      p.state + static_cast<long long>(Directions) * p.batch * Hidden);
  for (int s = 0; s <= p.steps; ++s) {
    backward_step<T, G, Hidden, Directions, Units, OnChip, Cell>(p, shared, own,
                                                                 s);
    if (s < p.steps)
      arch::grid_sync(barrier);
  }
  __syncthreads();
  for (int r = threadIdx.x; r < 4 * Units; r += kRecurrenceThreads) {
    const int q = r / Units, u = r % Units;
    if (u < own.units)
      p.d_bias[static_cast<long long>(own.d) * 4 * Hidden + q * Hidden +
               own.j0 + u] = bias[r];
  }
}

} // namespace lstm
} // namespace rudnn
