//===- attention/backward.cuh - Tiled attention backward ------------------===//
//
// The gradients of ⟨dO, O⟩ on sm_80, in three kernels:
//   row_terms:  D_i = Σ_e dO_ie O_ie, a warp a row;
//   gradients:  one pass over each key tile: a block per 128 or 64 keys of
//               one key head walks, for every query head of its group, the
//               query tiles that see the keys: Sᵀ = K Qᵀ and Pᵀ again from
//               the saved lse, dPᵀ = V dOᵀ, dSᵀ = Pᵀ (dPᵀ − D), dV += Pᵀ dO
//               and dK += dSᵀ Q in registers, and dS K added to dQ's f32
//               sum (with reductions, or in a fixed order);
//   convert_query_gradients: dQ rounded from its sum, a warp a row.
// Warps own 16 keys; products run on the warp tiles (tensor cores for
// 16-bit inputs, P and dS fed from the accumulators), operands through a
// two-stage cp.async pipeline. A query with no allowed key (lse −inf) has
// P = 0 and contributes nothing; tiles no query sees are skipped.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/attention/backward_units.cuh"

namespace rudnn {
namespace attention {

/// Queries a step of the sm_80 kernel: 64 below head dims of 64; 32 up
/// to 128, so its scores, dP and both gradients' accumulators stay in
/// registers; past that 32 for 16-bit inputs and 16 for f32, so the
/// resident rows, two stages and the staged tiles fit 227 KB.
template <typename T, int D, int E>
inline constexpr int kGradientStep = D <= 64 && E <= 64     ? 64
                                     : D <= 128 && E <= 128 ? 32
                                     : sizeof(T) == 2       ? 32
                                                            : 16;

/// Whether the sm_80 kernel takes dV, then dK, in two passes over the
/// queries (S formed twice), which past 256 columns of dK and dV together
/// would not stay in a warp's registers at once (attentionGradientSplit
/// on the host).
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
/// lse_i) where allowed (0 else; s the scaled, soft-capped, ALiBi-biased
/// score) into
/// `scores` and scale·dS = scale·P (dP − D_i)·s'(x) into `dp`. Tile rows
/// and columns are queries and keys from (row0, col0) of the entry's
/// `queries`, or keys and queries when `Transposed`. `Biased`: with
/// ALiBi's bias (a kernel without it holds no code for it).
template <bool Transposed, bool Biased, typename Tile, typename T>
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
  // ALiBi's slope (0 without it): the bias −bias·|i + off − j|.
  const float bias = alibi_slope<Biased>(f, b, h);
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
    if constexpr (Biased)
      s -= bias * fabsf(static_cast<float>(i + bounds.offset - j));
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

/// The f32 staging tile of a block's shared memory (16-bit inputs need
/// none: their operands stay in registers).
template <typename T, typename Shared>
__device__ __forceinline__ auto staging_of(Shared *shared) {
  if constexpr (sizeof(T) == 4)
    return shared->staged_gradients();
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

/// Of a dQ tile `Width` wide, the column width a warp's share takes: the
/// widest of 64, 32 and 16 that divides it into at least `Warps` shares
/// over the step's `Step` queries (16 at the least).
__host__ __device__ constexpr int query_gradient_columns(int width, int step,
                                                         int warps) {
  for (int w = 64; w > 16; w /= 2)
    if (width % w == 0 && step / 16 * (width / w) >= warps)
      return w;
  return 16;
}

/// The sm_80 block's staged scale·dSᵀ (its keys by the step's queries),
/// which dQ's product reads whole: a tile of its own for 16-bit inputs;
/// f32 leaves it in the products' staging tile.
template <typename T, int Keys, int Step> struct StagedScoreGradients {
  using Tile = tile::SharedTile<T, Keys, Step>;
  alignas(16) T ds[Tile::kElements];
  __device__ __forceinline__ Tile staged_gradients() { return Tile{ds}; }
};
template <int Keys, int Step>
struct StagedScoreGradients<float, Keys, Step>
    : ProbabilityTile<float, Step, Keys> {
  using Tile = tile::SharedTile<float, Keys, Step>;
  __device__ __forceinline__ Tile staged_gradients() { return Tile{this->p}; }
};

/// The sm_80 block's shared memory: its keys and values, two stages of a
/// step's queries and dO, and the staged dSᵀ.
template <typename T, int D, int E, int Keys, int Step = kGradientStep<T, D, E>>
struct GradientShared : StagedScoreGradients<T, Keys, Step> {
  static constexpr int kD = (D + 15) / 16 * 16, kE = (E + 15) / 16 * 16;
  static constexpr int kKeys = Keys, kStep = Step;
  using Heads = tile::SharedTile<T, Keys, kD>;
  using Values = tile::SharedTile<T, Keys, kE>;
  using StepHeads = tile::SharedTile<T, Step, kD>;
  using StepValues = tile::SharedTile<T, Step, kE>;
  alignas(16) T k[Heads::kElements];
  alignas(16) T v[Values::kElements];
  alignas(16) T q[2][StepHeads::kElements];
  alignas(16) T d_o[2][StepValues::kElements];
};

/// Adds step i's dS·K over the block's keys to dQ's f32 sum: the step's
/// queries by D in 16-row tiles the warps take in turn, A the staged dSᵀ
/// (read transposed), B the resident keys; `Deterministic`, once the key
/// tiles before this one that see the query tile have added theirs (its
/// semaphore counts them). Block-collective; starts on a barrier (dSᵀ is
/// staged), ends on one when deterministic.
template <bool Deterministic, int D, typename Shared, typename T, int Step>
__device__ __forceinline__ void
add_step_query_gradients(const BackwardParams<T> &p,
                         const BackwardUnit<Step> &u, int i, Shared *shared,
                         int *semaphores) {
  constexpr int kWarps = Shared::kKeys / 16;
  constexpr int kWidth = query_gradient_columns(Shared::kD, Step, kWarps);
  constexpr int kRowTiles = Step / 16, kTiles = kRowTiles * Shared::kD / kWidth;
  const int head = u.stepHead(i);
  int *semaphore = nullptr;
  if constexpr (Deterministic) {
    semaphore = &semaphores[dq_semaphore<1>(p.forward, u, head,
                                            u.stepRow0(i) / Step, 0)];
    if (threadIdx.x == 0)
      arch::wait_until_equal(semaphore, key_tile_place<Shared::kKeys>(u, i));
  }
  __syncthreads();
  const auto ds = shared->staged_gradients();
  const typename Shared::Heads keys{shared->k};
  for (int n = threadIdx.x / 32; n < kTiles; n += kWarps) {
    const int row0 = 16 * (n % kRowTiles), col0 = kWidth * (n / kRowTiles);
    tile::WarpTile<T, 16, kWidth> dq;
    dq.clear();
#pragma unroll
    for (int k0 = 0; k0 < Shared::kKeys; k0 += 16)
      dq.template mma<tile::BLayout::KN, tile::ALayout::KM>(ds, row0, k0, keys,
                                                            col0, k0);
    add_to_query_gradients<D, Deterministic>(p, u, head, u.stepRow0(i) + row0,
                                             col0, dq);
  }
  if constexpr (Deterministic) {
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0)
      arch::release_increment(semaphore);
  }
}

/// One pass of unit u's block over the query tiles that see its keys (a
/// step each, over each query head of the group in turn): Sᵀ = K Qᵀ and
/// Pᵀ again from the saved lse, then dV += Pᵀ dO (if `Values`); dPᵀ = V
/// dOᵀ and scale·dSᵀ, then dK += dSᵀ Q and dQ's share dS K (if
/// `KeyGradients`). A warp owns 16 of the keys.
template <typename T, int D, int E, int Keys, bool Causal, bool Biased,
          tile::Alignment Views, bool Deterministic, bool Values,
          bool KeyGradients, int Step>
__device__ void gradient_pass(const BackwardParams<T> &p,
                              const BackwardUnit<Step> &u, int *semaphores) {
  using Shared = GradientShared<T, D, E, Keys>;
  static_assert(Shared::kStep == Step, "the unit's steps are the block's");
  RUDNN_DYNAMIC_SHARED(Shared, shared);
  const ForwardParams<T> &f = p.forward;
  const int warp = threadIdx.x / 32;
  const int left = u.bounds.length - u.row0;
  const int keyCount = left < Keys ? (left > 0 ? left : 0) : Keys;
  const typename Shared::Heads keys{shared->k};
  const typename Shared::Values values{shared->v};
  const auto staging = staging_of<T>(shared);
  tile::WarpTile<T, 16, Shared::kD> dk;
  tile::WarpTile<T, 16, Shared::kE> dv;
  dk.clear();
  dv.clear();
  tile::two_stage_pipeline(
      u.steps(),
      [&](int i, int stage) {
        if (i == 0) {
          tile::load_tile_async<Views>(
              keys, f.k + f.k_strides.offset(u.b, u.residentRow(), u.head),
              f.k_strides.time, keyCount, D);
          if constexpr (KeyGradients) // dV needs no dP, so no V
            tile::load_tile_async<Views>(
                values, f.v + f.v_strides.offset(u.b, u.residentRow(), u.head),
                f.v_strides.time, keyCount, E);
        }
        const int h = u.stepHead(i), row = u.stepRow(i);
        const int rest = u.queryRows.count - u.stepRow0(i);
        const int rows = rest < Step ? rest : Step;
        tile::load_tile_async<Views>(
            typename Shared::StepHeads{shared->q[stage]},
            f.q + f.q_strides.offset(u.b, row, h), f.q_strides.time, rows, D);
        tile::load_tile_async<Views>(
            typename Shared::StepValues{shared->d_o[stage]},
            p.d_o + p.d_o_strides.offset(u.b, row, h), p.d_o_strides.time, rows,
            E);
      },
      [&](int i, int stage) {
        const typename Shared::StepHeads queries{shared->q[stage]};
        const typename Shared::StepValues d_o{shared->d_o[stage]};
        tile::WarpTile<T, 16, Step> scores, dp;
        scores.clear();
        dp.clear();
#pragma unroll
        for (int c = 0; c < Shared::kD; c += 16) // Sᵀ = K Qᵀ
          scores.template mma<tile::BLayout::NK>(keys, 16 * warp, queries, 0,
                                                 c);
        if constexpr (KeyGradients) {
#pragma unroll
          for (int c = 0; c < Shared::kE; c += 16) // dPᵀ = V dOᵀ
            dp.template mma<tile::BLayout::NK>(values, 16 * warp, d_o, 0, c);
        }
        probabilities_and_gradients<true, Biased>(
            scores, dp, p, u.bounds, u.b, u.stepHead(i), u.queryRows,
            u.row0 + 16 * warp, u.stepRow0(i));
        if constexpr (Values)
          add_product(dv, scores, d_o, staging); // dV += Pᵀ dO
        if constexpr (KeyGradients) {
          add_product(dk, dp, queries, staging); // dK += scale·dSᵀ Q
          if constexpr (sizeof(T) == 2) {        // f32's is staged already
            const auto staged = shared->staged_gradients();
            dp.for_each_pair([&](int r, int c, float first, float second) {
              tile::store_pair(staged, 16 * warp + r, c, first, second);
            });
          }
          add_step_query_gradients<Deterministic, D>(p, u, i, shared,
                                                     semaphores);
        }
      });
  const int row0 = u.row0 + 16 * warp;
  if constexpr (KeyGradients)
    store_gradient_rows<D>(p.dk, p.dk_strides, dk, u.b, u.head, row0,
                           u.keyRows);
  if constexpr (Values)
    store_gradient_rows<E>(p.dv, p.dv_strides, dv, u.b, u.head, row0,
                           u.keyRows);
}

/// The gradients in one pass over each key tile on sm_80 (FlashAttention-
/// 2's organisation): a block of 2·Keys threads per `Keys` keys (128 or
/// 64) of one key head, grid as for_each_block gives it, walks the query
/// tiles that see them, forms S and dP once (twice for S where dK and dV
/// do not fit a warp's registers together, kSplitKeyGradients), keeps dK
/// and dV in registers, and adds dS K to dQ's f32 sum (zeroed before the
/// launch; a second kernel converts it) with reductions. `Deterministic`:
/// a cooperative grid of any size takes the units in turn, and each query
/// tile's shares are added in ascending key tile order, counted by
/// `semaphores` (zeroed before the launch; dq_semaphore's index).
template <typename T, int D, int E, int Keys, bool Causal, bool Packed = false,
          tile::Alignment Views = tile::Alignment::Checked,
          bool Deterministic = false, bool Biased = false>
__device__ void gradients(const BackwardParams<T> &p,
                          int *semaphores = nullptr) {
  constexpr int Step = kGradientStep<T, D, E>;
  for_each_unit<Keys, Step, Causal, Packed, Deterministic>(
      p.forward, [&](const BackwardUnit<Step> &u) {
        if constexpr (kSplitKeyGradients<D, E>) {
          gradient_pass<T, D, E, Keys, Causal, Biased, Views, Deterministic,
                        true, false>(p, u, semaphores);
          gradient_pass<T, D, E, Keys, Causal, Biased, Views, Deterministic,
                        false, true>(p, u, semaphores);
        } else {
          gradient_pass<T, D, E, Keys, Causal, Biased, Views, Deterministic,
                        true, true>(p, u, semaphores);
        }
      });
}

} // namespace attention
} // namespace rudnn
