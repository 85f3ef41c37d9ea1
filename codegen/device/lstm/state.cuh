//===- lstm/state.cuh - Where an LSTM layer's kernels keep their state ----===//
//
// The views both kernels of a layer read and the fp32 state they hand on:
// per direction, the hidden state in two buffers (step s reads one and
// writes the other, so one grid barrier a step suffices) and the cell
// state, [B, H] each.
//
//===----------------------------------------------------------------------===//

#pragma once

namespace rudnn {
namespace lstm {

/// Strides, in elements, of a sequence view's time and batch dims (either
/// may be outer: [T, B, F] or, batch first, [B, T, F]).
struct TimeBatch {
  long long time, batch;

  __device__ __forceinline__ long long offset(long long t, long long b) const {
    return t * time + b * batch;
  }
};

/// values[d] for direction d: selected, since indexing a kernel
/// parameter's array at run time would copy it to local memory.
template <typename X>
__device__ __forceinline__ X of_direction(const X (&values)[2], int d) {
  return d ? values[1] : values[0];
}

/// Strides of an [L·D, B, H] view of hidden or cell states.
struct LayerStates {
  long long state, batch;

  __device__ __forceinline__ long long offset(long long n, long long b) const {
    return n * state + b * batch;
  }
};

/// [D, 3, B, H] fp32: per direction two hidden buffers, then the cell;
/// after them the recurrence's grid barrier, one word (the buffer holds
/// [D·3·H + 4, B] words).
struct StateLayout {
  float *base;
  int batch, hidden_size;

  __device__ __forceinline__ float *hidden(int d, int buffer) const {
    return slot(d, buffer);
  }
  __device__ __forceinline__ float *cell(int d) const { return slot(d, 2); }
  __device__ __forceinline__ unsigned *barrier(int directions) const {
    return reinterpret_cast<unsigned *>(slot(directions, 0));
  }

private:
  __device__ __forceinline__ float *slot(int d, int which) const {
    return base + (static_cast<long long>(d) * 3 + which) * batch * hidden_size;
  }
};

} // namespace lstm
} // namespace rudnn
