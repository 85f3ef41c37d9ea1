//===- kda/state_rows.cuh - A walk's state rows in warp accumulators ------===//
//
// The 16-bit walks keep their block's columns of the [K][V] state in warp
// tiles, fp32: these move a warp's rows of it in from and out to memory,
// round them into the tile that feeds the tensor cores, and decay them.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/tile/mma_tile.cuh"
#include "rudnn/tile/warp_tile.cuh"

namespace rudnn {
namespace kda {

/// Rows d0.. of the block's columns of a [K][V] fp32 state (`from` at the
/// block's first column; null: zeros) into a warp's accumulators.
template <int K, int V, typename State>
__device__ void load_state_rows(State &state, const float *from, int d0,
                                int width) {
  state.update_pairs([&](int r, int c, float &first, float &second) {
    first = second = 0.f;
    if (!from || d0 + r >= K)
      return;
    const float *row = from + (long long)(d0 + r) * V + c;
    first = c < width ? row[0] : 0.f;
    second = c + 1 < width ? row[1] : 0.f;
  });
}

/// The accumulators' rows d0.. back out to a [K][V] state (`to` at the
/// block's first column; fp32, or a boundary in the input type), pairs in
/// one store.
template <int K, int V, typename State, typename T>
__device__ void store_state_rows(const State &state, T *to, int d0, int width) {
  state.for_each_pair([&](int r, int c, float first, float second) {
    if (d0 + r < K && c < width)
      tile::store_pair(to + (long long)(d0 + r) * V + c, first, second,
                       c + 1 < width);
  });
}

/// The accumulators' rows d0.., rounded, into `staged`: the [rows][16]
/// tile that feeds them to the tensor cores.
template <typename State, typename Staged>
__device__ void stage_state_rows(const State &state, const Staged &staged,
                                 int d0) {
  using T = typename Staged::Element;
  state.for_each_pair([&](int r, int c, float first, float second) {
    *reinterpret_cast<unsigned *>(&staged(d0 + r, c)) =
        tile::Mma16<T>::pack(first, second);
  });
}

/// state(d, ·) *= decay(0, d0 + d): e^Γlast ⊙ S over the warp's rows.
template <typename State, typename Decay>
__device__ __forceinline__ void decay_rows(State &state, const Decay &decay,
                                           int d0) {
  state.update_pairs([&](int r, int, float &first, float &second) {
    const float factor = decay(0, d0 + r);
    first *= factor;
    second *= factor;
  });
}

/// The accumulators' rows d0.., rounded, into `staged` transposed: the
/// [columns][rows] tile that feeds them to the tensor cores K-major.
template <typename State, typename Staged>
__device__ void stage_state_columns(const State &state, const Staged &staged,
                                    int d0) {
  using T = typename Staged::Element;
  state.for_each_pair([&](int r, int c, float first, float second) {
    staged(c, d0 + r) = from_float<T>(first);
    staged(c + 1, d0 + r) = from_float<T>(second);
  });
}

} // namespace kda
} // namespace rudnn
