//===- attention/backward.cuh - Tiled attention backward ------------------===//
//
// The gradients of ⟨dO, O⟩ in three kernels, none with an atomic, so every
// run gives the same bits:
//   row_terms:       D_i = Σ_e dO_ie O_ie, a warp a row;
//   key_gradients:   a block per 64 keys of one key head; for every query
//                    head of its group and every query tile that sees the
//                    keys, in a fixed order (GQA's sums included): Sᵀ = K Qᵀ
//                    and Pᵀ again from the saved lse, dPᵀ = V dOᵀ,
//                    dSᵀ = Pᵀ (dPᵀ − D), dV += Pᵀ dO and dK += dSᵀ Q;
//   query_gradients: a block per 64 queries of one head; for every key tile
//                    it sees, S, P, dP = dO Vᵀ and dS again, dQ += dS K.
// Warps own 16 rows; products run on the warp tiles (tensor cores for
// 16-bit inputs, P and dS fed from the accumulators), operands through
// two-stage cp.async pipelines. A query with no allowed key (lse −inf) has
// P = 0 and contributes nothing; tiles no query sees are skipped.
//
//===----------------------------------------------------------------------===//

#pragma once

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

/// Rows of a backward block: four warps of 16.
inline constexpr int kBackwardRows = 64;

/// Rows a backward block streams a step, `Resident` the smallest that
/// holds below 64 head dims of 64 (then registers and shared memory are
/// plenty): past 128, 32 for 16-bit inputs and 16 for f32, so the resident
/// rows, two stages and an f32 staging tile fit 227 KB.
template <typename T, int D, int E, int Resident>
inline constexpr int kStreamedRows = D <= 64 && E <= 64     ? 64
                                     : D <= 128 && E <= 128 ? Resident
                                     : sizeof(T) == 2       ? 32
                                                            : 16;

/// Queries per tile the key-gradient block loops over: 32 for head dims
/// past 64, so its scores, dP and both gradients' accumulators stay in
/// registers.
template <typename T, int D, int E>
inline constexpr int kKeyGradientQueries = kStreamedRows<T, D, E, 32>;

/// Keys per tile the query-gradient block loops over.
template <typename T, int D, int E>
inline constexpr int kQueryGradientKeys = kStreamedRows<T, D, E, 64>;

/// Whether the key-gradient block takes dV and dK in two passes over the
/// queries (S formed twice), which past 256 columns of dK and dV together
/// would not stay in registers at once.
template <int D, int E>
inline constexpr bool
    kSplitKeyGradients = (D + 15) / 16 * 16 + (E + 15) / 16 * 16 > 256;

/// The row a warp owns in a grid of (ceil(T / 4), B·H) blocks of 128
/// threads: entry b, head h, query i (past the queries in the last block),
/// and the thread's lane.
struct WarpRow {
  int b, h, i, lane;

  template <typename T>
  static __device__ __forceinline__ WarpRow of(const ForwardParams<T> &f) {
    return {static_cast<int>(blockIdx.y) / f.heads,
            static_cast<int>(blockIdx.y) % f.heads,
            static_cast<int>(blockIdx.x * 4 + threadIdx.x / 32),
            static_cast<int>(threadIdx.x % 32)};
  }
};

/// D_i = Σ_e dO_ie O_ie of every (entry, head, query): grid (ceil(T / 4),
/// B·H), 128 threads, a warp a row, read 16 bytes a lane where both rows
/// are whole 16-byte chunks (element by element otherwise). Packed batches
/// are one entry of all T rows (grid (ceil(T / 4), H)): the row terms need
/// no offsets.
template <typename T, int E>
__device__ void row_terms(const BackwardParams<T> &p) {
  const ForwardParams<T> &f = p.forward;
  const WarpRow row = WarpRow::of(f);
  if (row.i >= f.queries)
    return;
  const int b = row.b, h = row.h, i = row.i, lane = row.lane;
  const T *o = f.o + f.o_strides.offset(b, i, h);
  const T *d_o = p.d_o + p.d_o_strides.offset(b, i, h);
  constexpr int kVector = Vector16<T>::kCount;
  float sum = 0.f;
  if (E % kVector == 0 && rows_aligned16(o, 0) && rows_aligned16(d_o, 0)) {
    for (int e = lane * kVector; e < E; e += 32 * kVector) {
      float x[kVector], y[kVector];
      load_vector16(o + e, x);
      load_vector16(d_o + e, y);
#pragma unroll
      for (int n = 0; n < kVector; ++n)
        sum += x[n] * y[n];
    }
  } else {
    for (int e = lane; e < E; e += 32)
      sum += to_float(o[e]) * to_float(d_o[e]);
  }
  sum = warp_sum(sum);
  if (lane == 0)
    p.row_terms[b * f.lse_batch + h * f.lse_head + i] = sum;
}

/// dQ rounded to T from its f32 accumulator, in the row terms' grid: a
/// warp a row, 16 bytes of dQ a lane where both rows are whole 16-byte
/// chunks (element by element otherwise).
template <typename T, int D>
__device__ void convert_query_gradients(const BackwardParams<T> &p) {
  const WarpRow row = WarpRow::of(p.forward);
  if (row.i >= p.forward.queries)
    return;
  const int lane = row.lane;
  const float *from =
      p.dq_accum + p.dq_accum_strides.offset(row.b, row.i, row.h);
  T *to = p.dq + p.dq_strides.offset(row.b, row.i, row.h);
  constexpr int kVector = Vector16<T>::kCount;
  if (D % kVector == 0 && rows_aligned16(to, 0) && rows_aligned16(from, 0)) {
    for (int d = lane * kVector; d < D; d += 32 * kVector) {
      float x[kVector];
#pragma unroll
      for (int n = 0; n < kVector; n += 4)
        load_vector16(from + d + n, *reinterpret_cast<float(*)[4]>(&x[n]));
      store_vector16(to + d, x);
    }
  } else {
    for (int d = lane; d < D; d += 32)
      to[d] = from_float<T>(from[d]);
  }
}

/// The element-wise middle of both gradient kernels, in place: from the
/// dot products x (`scores`) and dP (`dp`) of a warp's tile, P = exp(s −
/// lse_i) where allowed (0 else; s the scaled, soft-capped score) into
/// `scores` and scale·dS = scale·P (dP − D_i)·s'(x) into `dp`. Tile rows
/// and columns are queries and keys from (row0, col0) of the entry's
/// `queries`, or keys and queries when `Transposed`.
template <bool Transposed, typename Tile, typename T>
__device__ __forceinline__ void
probabilities_and_gradients(Tile &scores, Tile &dp, const BackwardParams<T> &p,
                            const KeyBounds &bounds, int b, int h, Rows queries,
                            int row0, int col0) {
  const ForwardParams<T> &f = p.forward;
  // The warp's 16 rows against the tile's columns.
  const bool masked = Transposed
                          ? bounds.crosses(col0, Tile::kColumns, row0, 16)
                          : bounds.crosses(row0, 16, col0, Tile::kColumns);
  const long long base = b * f.lse_batch + h * f.lse_head + queries.first;
  const float inf = __int_as_float(0x7f800000);
  // A query-row tile's lane holds rows g and g + 8: their lse and D_i are
  // read once. A transposed tile's holds 16 queries (columns 8n' + 2t and
  // 8n' + 2t + 1): they are read where used, through L1, which leaves their
  // 32 registers to the Hopper kernel's accumulators.
  constexpr int kQueries = Transposed ? 1 : 2;
  const int lane = threadIdx.x % 32;
  float lses[kQueries], terms[kQueries];
  auto read = [&](int i, float &lse, float &term) {
    lse = i < queries.count ? f.lse[base + i] : -inf;
    term = i < queries.count ? p.row_terms[base + i] : 0.f;
  };
  if constexpr (!Transposed) {
#pragma unroll
    for (int n = 0; n < kQueries; ++n)
      read(row0 + lane / 4 + 8 * n, lses[n], terms[n]);
  }
  auto one = [&](int r, int c, float &x, float &d) {
    const int i = Transposed ? col0 + c : row0 + r,
              j = Transposed ? row0 + r : col0 + c;
    float s = x * f.scale, slope = 1.f;
    if (f.softcap > 0.f) {
      const float t = tanhf(s / f.softcap);
      s = f.softcap * t;
      slope = 1.f - t * t;
    }
    float lse, term;
    if constexpr (Transposed) {
      read(i, lse, term);
    } else {
      lse = lses[Tile::lane_row(r)];
      term = terms[Tile::lane_row(r)];
    }
    const bool live = lse != -inf && (!masked || bounds.allows(i, j));
    const float probability = live ? arch::ex2_approx((s - lse) * kLog2e) : 0.f;
    d = live ? probability * (d - term) * slope * f.scale : 0.f;
    x = probability;
  };
  scores.update_pairs_with(
      dp, [&](int r, int c, float &x0, float &x1, float &d0, float &d1) {
        one(r, c, x0, d0);
        one(r, c + 1, x1, d1);
      });
}

/// The f32 staging tile of `Columns` in a block's shared memory (16-bit
/// inputs need none: their operands stay in registers).
template <typename T, int Columns, typename Shared>
__device__ __forceinline__ auto staging_of(Shared *shared) {
  if constexpr (sizeof(T) == 4)
    return typename ProbabilityTile<T, Columns>::Tile{shared->p};
  else
    return 0;
}

/// acc += A · B(0.., 0..) over A's depths, A this warp's 16-row tile of
/// accumulators: from registers for 16-bit inputs, through this warp's
/// rows of the shared `staging` tile for f32.
template <typename Acc, typename Tile, typename Operand, typename Staging>
__device__ __forceinline__ void
add_product(Acc &acc, const Tile &a, const Operand &b, const Staging &staging) {
  using T = typename Operand::Element;
  const int warp = threadIdx.x / 32;
  if constexpr (sizeof(T) == 2) {
#pragma unroll
    for (int k0 = 0; k0 < Tile::kColumns; k0 += 16) {
      unsigned fa[1][4];
      a.a_fragments(fa, k0);
      acc.template mma_registers<tile::BLayout::KN>(fa, b, 0, k0);
    }
  } else {
    a.for_each_pair([&](int r, int c, float first, float second) {
      tile::store_pair(staging, 16 * warp + r, c, first, second);
    });
    __syncwarp();
#pragma unroll
    for (int k0 = 0; k0 < Tile::kColumns; k0 += 16)
      acc.template mma<tile::BLayout::KN>(staging, 16 * warp, k0, b, 0, k0);
    __syncwarp(); // the staging rows are the next product's
  }
}

/// Stores a warp's 16 gradient rows from `row0` of the entry's `rows`
/// (columns below `Width`) at `to` + strides.offset(b, row, head).
template <int Width, typename T, typename Acc>
__device__ __forceinline__ void
store_gradient_rows(T *to, const SequenceStrides &strides, const Acc &acc,
                    int b, int head, int row0, Rows rows) {
  acc.for_each_pair([&](int r, int c, float first, float second) {
    if (row0 + r < rows.count && c < Width)
      tile::store_pair(to + strides.offset(b, rows.first + row0 + r, head) + c,
                       first, second, c + 1 < Width);
  });
}

/// The key-gradient block's shared memory: its keys and values, two stages
/// of BQ queries and dO, and for f32 the staging of Pᵀ and dSᵀ.
template <typename T, int D, int E, int BQ = kKeyGradientQueries<T, D, E>>
struct KeyGradientShared : ProbabilityTile<T, BQ> {
  static constexpr int kD = (D + 15) / 16 * 16, kE = (E + 15) / 16 * 16;
  static constexpr int kQueries = BQ;
  using Heads = tile::SharedTile<T, kBackwardRows, kD>;
  using Values = tile::SharedTile<T, kBackwardRows, kE>;
  using QueryHeads = tile::SharedTile<T, BQ, kD>;
  using QueryValues = tile::SharedTile<T, BQ, kE>;
  alignas(16) T k[Heads::kElements];
  alignas(16) T v[Values::kElements];
  alignas(16) T q[2][QueryHeads::kElements];
  alignas(16) T d_o[2][QueryValues::kElements];
};

/// dV (if `Values`) and dK (if `Keys`) of 64 keys from j0 of key head g in
/// entry b, whose queries and keys are `queryRows` and `keyRows` of the
/// tensors: one pass over the query tiles that see them.
template <typename T, int D, int E, bool Causal, tile::Alignment Views,
          bool Values, bool Keys>
__device__ void key_pass(const BackwardParams<T> &p, int b, int g, int j0,
                         Rows queryRows, Rows keyRows) {
  using Shared = KeyGradientShared<T, D, E>;
  constexpr int BQ = Shared::kQueries;
  RUDNN_DYNAMIC_SHARED(Shared, shared);
  const ForwardParams<T> &f = p.forward;
  const int warp = threadIdx.x / 32, group = f.heads / f.kv_heads;
  const int queryCount = queryRows.count;
  const KeyBounds bounds =
      KeyBounds::of(f, b, Causal, queryCount, keyRows.count);
  int firstTile, tiles;
  bounds.query_tiles(j0, kBackwardRows, BQ, queryCount, firstTile, tiles);
  const int keyCount = bounds.length - j0 < kBackwardRows
                           ? (bounds.length > j0 ? bounds.length - j0 : 0)
                           : kBackwardRows;
  const int k0 = keyRows.first + j0; // the block's first key row
  const typename Shared::Heads keys{shared->k};
  const typename Shared::Values values{shared->v};
  const auto staging = staging_of<T, BQ>(shared);
  tile::WarpTile<T, 16, Shared::kD> dk;
  tile::WarpTile<T, 16, Shared::kE> dv;
  dk.clear();
  dv.clear();
  // Steps run over the group's heads, each over its query tiles.
  auto head = [&](int step) { return g * group + step / tiles; };
  auto first = [&](int step) { return (firstTile + step % tiles) * BQ; };
  tile::two_stage_pipeline(
      tiles * group,
      [&](int step, int stage) {
        if (step == 0) {
          tile::load_tile_async<Views>(keys, f.k + f.k_strides.offset(b, k0, g),
                                       f.k_strides.time, keyCount, D);
          if constexpr (Keys) // dV needs no dP, so no V
            tile::load_tile_async<Views>(values,
                                         f.v + f.v_strides.offset(b, k0, g),
                                         f.v_strides.time, keyCount, E);
        }
        const int h = head(step), i0 = first(step);
        const int rows = queryCount - i0 < BQ ? queryCount - i0 : BQ;
        const int row = queryRows.first + i0;
        tile::load_tile_async<Views>(
            typename Shared::QueryHeads{shared->q[stage]},
            f.q + f.q_strides.offset(b, row, h), f.q_strides.time, rows, D);
        tile::load_tile_async<Views>(
            typename Shared::QueryValues{shared->d_o[stage]},
            p.d_o + p.d_o_strides.offset(b, row, h), p.d_o_strides.time, rows,
            E);
      },
      [&](int step, int stage) {
        const typename Shared::QueryHeads queries{shared->q[stage]};
        const typename Shared::QueryValues d_o{shared->d_o[stage]};
        tile::WarpTile<T, 16, BQ> scores, dp;
        scores.clear();
        dp.clear();
#pragma unroll
        for (int c = 0; c < Shared::kD; c += 16) // Sᵀ = K Qᵀ
          scores.template mma<tile::BLayout::NK>(keys, 16 * warp, queries, 0,
                                                 c);
        if constexpr (Keys) {
#pragma unroll
          for (int c = 0; c < Shared::kE; c += 16) // dPᵀ = V dOᵀ
            dp.template mma<tile::BLayout::NK>(values, 16 * warp, d_o, 0, c);
        }
        probabilities_and_gradients<true>(scores, dp, p, bounds, b, head(step),
                                          queryRows, j0 + 16 * warp,
                                          first(step));
        if constexpr (Values)
          add_product(dv, scores, d_o, staging); // dV += Pᵀ dO
        if constexpr (Keys)
          add_product(dk, dp, queries, staging); // dK += scale·dSᵀ Q
      });
  if constexpr (Keys)
    store_gradient_rows<D>(p.dk, p.dk_strides, dk, b, g, j0 + 16 * warp,
                           keyRows);
  if constexpr (Values)
    store_gradient_rows<E>(p.dv, p.dv_strides, dv, b, g, j0 + 16 * warp,
                           keyRows);
}

/// dK and dV of 64 keys from j0 of key head g in entry b: in one pass, or
/// in two (dV, then dK) where their accumulators would not fit together.
template <typename T, int D, int E, bool Causal, tile::Alignment Views>
__device__ void key_block(const BackwardParams<T> &p, int b, int g, int j0,
                          Rows queryRows, Rows keyRows) {
  if constexpr (kSplitKeyGradients<D, E>) {
    key_pass<T, D, E, Causal, Views, true, false>(p, b, g, j0, queryRows,
                                                  keyRows);
    __syncthreads(); // the shared tiles are the second pass's
    key_pass<T, D, E, Causal, Views, false, true>(p, b, g, j0, queryRows,
                                                  keyRows);
  } else {
    key_pass<T, D, E, Causal, Views, true, true>(p, b, g, j0, queryRows,
                                                 keyRows);
  }
}

/// `block(b, head, row0, queryRows, keyRows)` for each 64-row tile of the
/// grid: of keys per key head (ByKeys), or of queries per head.
template <bool ByKeys, bool Packed, typename T, typename Block>
__device__ void for_each_gradient_block(const BackwardParams<T> &p,
                                        Block block) {
  for_each_block<kBackwardRows, Packed, ByKeys>(
      p.forward, ByKeys ? p.forward.kv_heads : p.forward.heads,
      [&](int b, int head, int row0, Rows queryRows, Rows keyRows) {
        block(b, head, row0, queryRows, keyRows);
        if constexpr (Packed) // the shared tiles are the next tile's
          __syncthreads();
      });
}

/// dK and dV: a block per 64 keys of one key head (see for_each_block),
/// 128 threads.
template <typename T, int D, int E, bool Causal, bool Packed = false,
          tile::Alignment Views = tile::Alignment::Checked>
__device__ void key_gradients(const BackwardParams<T> &p) {
  for_each_gradient_block</*ByKeys=*/true, Packed>(
      p, [&](int b, int head, int row0, Rows queryRows, Rows keyRows) {
        key_block<T, D, E, Causal, Views>(p, b, head, row0, queryRows, keyRows);
      });
}

/// The query-gradient block's shared memory: its queries and dO, two
/// stages of BK keys and values, and for f32 the staging of dS.
template <typename T, int D, int E, int BK = kQueryGradientKeys<T, D, E>>
struct QueryGradientShared : ProbabilityTile<T, BK> {
  static constexpr int kD = (D + 15) / 16 * 16, kE = (E + 15) / 16 * 16;
  static constexpr int kKeys = BK;
  using Heads = tile::SharedTile<T, kBackwardRows, kD>;
  using Values = tile::SharedTile<T, kBackwardRows, kE>;
  using KeyHeads = tile::SharedTile<T, BK, kD>;
  using KeyValues = tile::SharedTile<T, BK, kE>;
  alignas(16) T q[Heads::kElements];
  alignas(16) T d_o[Values::kElements];
  alignas(16) T k[2][KeyHeads::kElements];
  alignas(16) T v[2][KeyValues::kElements];
};

/// dQ of 64 queries from q0 of head h in entry b, whose queries and keys
/// are `queryRows` and `keyRows` of the tensors.
template <typename T, int D, int E, bool Causal, tile::Alignment Views>
__device__ void query_block(const BackwardParams<T> &p, int b, int h, int q0,
                            Rows queryRows, Rows keyRows) {
  using Shared = QueryGradientShared<T, D, E>;
  constexpr int BK = Shared::kKeys;
  RUDNN_DYNAMIC_SHARED(Shared, shared);
  const ForwardParams<T> &f = p.forward;
  const int warp = threadIdx.x / 32;
  const int hk = h / (f.heads / f.kv_heads);
  const int queryCount = queryRows.count;
  const KeyBounds bounds =
      KeyBounds::of(f, b, Causal, queryCount, keyRows.count);
  const int blockRows =
      queryCount - q0 < kBackwardRows ? queryCount - q0 : kBackwardRows;
  const int row = queryRows.first + q0; // the block's first query row
  int firstTile, tiles;
  bounds.tiles(q0, blockRows, BK, firstTile, tiles);
  const typename Shared::Heads queries{shared->q};
  const typename Shared::Values d_o{shared->d_o};
  const auto staging = staging_of<T, BK>(shared);
  tile::WarpTile<T, 16, Shared::kD> dq;
  dq.clear();
  tile::two_stage_pipeline(
      tiles,
      [&](int step, int stage) {
        if (step == 0) {
          tile::load_tile_async<Views>(queries,
                                       f.q + f.q_strides.offset(b, row, h),
                                       f.q_strides.time, blockRows, D);
          tile::load_tile_async<Views>(d_o,
                                       p.d_o + p.d_o_strides.offset(b, row, h),
                                       p.d_o_strides.time, blockRows, E);
        }
        const int j0 = (firstTile + step) * BK;
        const int rows = bounds.length - j0 < BK ? bounds.length - j0 : BK;
        const int key = keyRows.first + j0;
        tile::load_tile_async<Views>(
            typename Shared::KeyHeads{shared->k[stage]},
            f.k + f.k_strides.offset(b, key, hk), f.k_strides.time, rows, D);
        tile::load_tile_async<Views>(
            typename Shared::KeyValues{shared->v[stage]},
            f.v + f.v_strides.offset(b, key, hk), f.v_strides.time, rows, E);
      },
      [&](int step, int stage) {
        const typename Shared::KeyHeads keys{shared->k[stage]};
        const typename Shared::KeyValues values{shared->v[stage]};
        const int j0 = (firstTile + step) * BK;
        tile::WarpTile<T, 16, BK> scores, dp;
        scores.clear();
        dp.clear();
#pragma unroll
        for (int c = 0; c < Shared::kD; c += 16) // S = Q Kᵀ
          scores.template mma<tile::BLayout::NK>(queries, 16 * warp, keys, 0,
                                                 c);
#pragma unroll
        for (int c = 0; c < Shared::kE; c += 16) // dP = dO Vᵀ
          dp.template mma<tile::BLayout::NK>(d_o, 16 * warp, values, 0, c);
        probabilities_and_gradients<false>(scores, dp, p, bounds, b, h,
                                           queryRows, q0 + 16 * warp, j0);
        add_product(dq, dp, keys, staging); // dQ += scale·dS K
      });
  store_gradient_rows<D>(p.dq, p.dq_strides, dq, b, h, q0 + 16 * warp,
                         queryRows);
}

/// dQ: a block per 64 queries of one head (see for_each_block), 128
/// threads.
template <typename T, int D, int E, bool Causal, bool Packed = false,
          tile::Alignment Views = tile::Alignment::Checked>
__device__ void query_gradients(const BackwardParams<T> &p) {
  for_each_gradient_block</*ByKeys=*/false, Packed>(
      p, [&](int b, int head, int row0, Rows queryRows, Rows keyRows) {
        query_block<T, D, E, Causal, Views>(p, b, head, row0, queryRows,
                                            keyRows);
      });
}

} // namespace attention
} // namespace rudnn
