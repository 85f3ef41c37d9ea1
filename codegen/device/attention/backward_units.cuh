//===- attention/backward_units.cuh - The backward's units of work --------===//
//
// What both one-pass backward kernels (sm_80's and Hopper's) share: a
// block's unit of work (a key tile and the query tiles that see it), the
// order blocks take units in, and dQ's f32 sum, added to with reductions
// or, deterministically, in ascending key tile order under a semaphore a
// query tile.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/arch/global.cuh"
#include "rudnn/attention/forward.cuh"

namespace rudnn {
namespace attention {

/// The forward's tensors and attributes (its o read, not written; its lse
/// given), the incoming gradient dO in o's layout, the row terms (indexed
/// as lse), the gradients in q's, k's and v's layouts, and dQ's f32
/// accumulator in q's (for the kernels that add to it).
template <typename T> struct BackwardParams {
  ForwardParams<T> forward;
  const T *d_o;
  SequenceStrides d_o_strides;
  float *row_terms;
  T *dq, *dk, *dv;
  SequenceStrides dq_strides, dk_strides, dv_strides;
  float *dq_accum;
  SequenceStrides dq_accum_strides;
};

/// One block's unit of work: the keys from row0 of key head `head` in
/// entry b, and the query tiles of `Step` rows that see some of them:
/// `count` from tile `first`, over each of the `group` query heads that
/// share the keys.
template <int Step> struct BackwardUnit {
  int b, head, row0;
  Rows queryRows, keyRows;
  KeyBounds bounds;
  int first, count, group;

  __device__ __forceinline__ int steps() const { return count * group; }
  /// The keys' tensor row, and step i's query head and first query within
  /// the entry and in the tensor.
  __device__ __forceinline__ int residentRow() const {
    return keyRows.first + row0;
  }
  __device__ __forceinline__ int stepHead(int i) const {
    return head * group + i / count;
  }
  __device__ __forceinline__ int stepRow0(int i) const {
    return (first + i % count) * Step;
  }
  __device__ __forceinline__ int stepRow(int i) const {
    return queryRows.first + stepRow0(i);
  }
};

/// The unit of KeyRows keys from row0 of key head `head` in entry b.
template <int KeyRows, int Step, bool Causal, typename T>
__device__ __forceinline__ BackwardUnit<Step>
unit_of(const ForwardParams<T> &f, int b, int head, int row0, Rows queryRows,
        Rows keyRows) {
  BackwardUnit<Step> u{
      b,
      head,
      row0,
      queryRows,
      keyRows,
      KeyBounds::of(f, b, Causal, queryRows.count, keyRows.count),
      0,
      0,
      f.heads / f.kv_heads};
  u.bounds.query_tiles(row0, KeyRows, Step, queryRows.count, u.first, u.count);
  return u;
}

/// Calls visit(unit) for each unit of this block, in the same order for
/// every thread that calls it (whole warps): as for_each_block gives them,
/// or, `Persistent`, the units in turn over a grid of any size (each
/// block's in ascending order of (key head, entry, key tile)).
template <int KeyRows, int Step, bool Causal, bool Packed,
          bool Persistent = false, typename T, typename Visit>
__device__ __forceinline__ void for_each_unit(const ForwardParams<T> &f,
                                              Visit visit) {
  constexpr int kRows = KeyRows;
  if constexpr (!Persistent) {
    for_each_block<kRows, Packed, /*ByKeys=*/true>(
        f, f.kv_heads,
        [&](int b, int head, int row0, Rows queryRows, Rows keyRows) {
          visit(unit_of<kRows, Step, Causal>(f, b, head, row0, queryRows,
                                             keyRows));
        });
  } else if constexpr (!Packed) {
    const int tiles = (f.keys + kRows - 1) / kRows;
    const int units = tiles * f.batch * f.kv_heads;
    for (int n = blockIdx.x; n < units; n += gridDim.x) {
      const int head = n / tiles % f.kv_heads, b = n / tiles / f.kv_heads;
      visit(unit_of<kRows, Step, Causal>(f, b, head, n % tiles * kRows,
                                         Rows{0, f.queries}, Rows{0, f.keys}));
    }
  } else {
    for (int head = 0; head < f.kv_heads; ++head)
      for (int tile = blockIdx.x;; tile += gridDim.x) {
        int b = 0, row0 = 0;
        if (!packed_query_tile<kRows>(f.cu_seqlens_k, f.batch, f.keys, tile, b,
                                      row0))
          break;
        visit(unit_of<kRows, Step, Causal>(
            f, b, head, row0, packed_rows(f.cu_seqlens_q, b, f.queries),
            packed_rows(f.cu_seqlens_k, b, f.keys)));
      }
  }
}

/// The semaphore of column block c (of `Blocks`) of dQ's query tile m
/// (`Step` queries of head h in unit u's entry): padded (entry, head,
/// tile), packed (head, tile of the packed rows counted from the entry's
/// first whole tile, plus the entry's index, which keeps the entries'
/// tiles apart).
template <int Blocks, int Step, typename T>
__device__ __forceinline__ int dq_semaphore(const ForwardParams<T> &f,
                                            const BackwardUnit<Step> &u, int h,
                                            int m, int c) {
  const int tiles = (f.queries + Step - 1) / Step;
  const int tile = f.cu_seqlens_q ? h * (tiles + f.batch + 1) +
                                        u.queryRows.first / Step + u.b + m
                                  : (u.b * f.heads + h) * tiles + m;
  return tile * Blocks + c;
}

/// Unit u's key tile's place among the tiles of KeyRows keys that see
/// step i's query tile: the value its semaphore holds when it may add.
template <int KeyRows, int Step>
__device__ __forceinline__ int key_tile_place(const BackwardUnit<Step> &u,
                                              int i) {
  const int rows = u.queryRows.count - u.stepRow0(i);
  int first = 0, count = 0;
  u.bounds.tiles(u.stepRow0(i), rows < Step ? rows : Step, KeyRows, first,
                 count);
  return u.row0 / KeyRows - first;
}

/// Adds a warp tile of dQ (its rows the queries from `query0` of the
/// unit's entry, of `head`; its columns dQ's from `col0`, those below D)
/// to the f32 sum: with reductions, or `Ordered` (its query tile's
/// semaphore held), with plain adds.
template <int D, bool Ordered, typename T, int Step, typename Tile>
__device__ __forceinline__ void
add_to_query_gradients(const BackwardParams<T> &p, const BackwardUnit<Step> &u,
                       int head, int query0, int col0, const Tile &dq) {
  dq.for_each_pair([&](int r, int c, float first, float second) {
    const int query = query0 + r, d = col0 + c;
    if (query >= u.queryRows.count || d >= D)
      return;
    float *to =
        p.dq_accum +
        p.dq_accum_strides.offset(u.b, u.queryRows.first + query, head) + d;
    if constexpr (Ordered) {
      to[0] += first;
      to[1] += second;
    } else {
      arch::reduce_add_pair(to, first, second);
    }
  });
}

} // namespace attention
} // namespace rudnn
