//===- attention/backward_hopper.cuh - Attention backward on sm_90a -------===//
//
// FlashAttention-3's organisation of the backward: one pass over each key
// tile, blocks of 128 keys, three warpgroups. The producer's one thread
// TMA-loads the block's keys and values once and streams the queries and
// dO that see them, 64 a step, through a two-stage ring; each consumer
// warpgroup owns 64 keys, forms Sᵀ and dPᵀ with wgmma from shared memory,
// P and dS in registers as the sm_80 kernels do, and adds dV and dK with
// wgmma taking them from registers. dQ's share of each step, dS·K over the
// block's keys, is added to an f32 accumulator in global memory with
// reductions; a small kernel converts it.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/attention/backward.cuh"
#include "rudnn/attention/hopper.cuh"

namespace rudnn {
namespace attention {

/// Keys of a block and queries streamed a step: up to D = E = 128 each
/// consumer warpgroup owns 64 of the block's 128 keys; past that both own
/// the block's 64, each half of dK's and dV's columns (see gradients_wide).
inline constexpr int kHopperBackwardRows = 128;
inline constexpr int kHopperWideBackwardRows = 64;
inline constexpr int kHopperBackwardStep = 64;

/// Whether D or E is past what a warpgroup's registers hold of dK and dV
/// for 64 keys (128 columns each).
template <int D, int E>
inline constexpr bool kWideBackward = D > 128 || E > 128;

/// The Hopper kernel's units: steps of 64 queries.
using HopperUnit = BackwardUnit<kHopperBackwardStep>;

/// A warp's 16 rows of a step's scores or dP.
template <typename T>
using StepTile = tile::WarpTile<T, 16, kHopperBackwardStep>;

/// Two stages of a step's staged Pᵀ (keys by queries), which the wide
/// kernel's warpgroups share; none in the narrow one.
template <typename T, int Elements> struct StagedProbabilities {
  alignas(1024) T probabilities[2][Elements];
};
template <typename T> struct StagedProbabilities<T, 0> {};

/// The block's dynamic shared memory, from a 1024-byte aligned address
/// (hopperAttentionBackwardSharedBytes adds the slack on the host): the
/// keys (D wide) and values (E wide), two stages of the streamed queries
/// and dO likewise, and two of a step's staged dSᵀ and, wide, Pᵀ.
template <typename T, int D, int E>
struct HopperBackwardShared
    : StagedProbabilities<T, kWideBackward<D, E>
                                 ? kHopperWideBackwardRows * kHopperBackwardStep
                                 : 0> {
  static constexpr int kDBlocks = (D + 63) / 64, kEBlocks = (E + 63) / 64;
  static constexpr int kRows = kWideBackward<D, E> ? kHopperWideBackwardRows
                                                   : kHopperBackwardRows,
                       kStep = kHopperBackwardStep;
  alignas(1024) T heads[kDBlocks][kRows * 64];
  alignas(1024) T values[kEBlocks][kRows * 64];
  alignas(1024) T step_heads[2][kDBlocks][kStep * 64];
  alignas(1024) T step_values[2][kEBlocks][kStep * 64];
  alignas(1024) T ds[2][kRows * kStep];
  HopperBarriers<> barriers;
};

/// The producer thread: each unit's keys and values, then its steps'
/// queries and dO, from their tensor maps.
template <bool Causal, bool Packed, bool Persistent, typename T, int D, int E>
__device__ void
produce_backward(const BackwardParams<T> &p, HopperBackwardShared<T, D, E> &s,
                 const arch::TensorMap &k_map, const arch::TensorMap &v_map,
                 const arch::TensorMap &q_map, const arch::TensorMap &d_o_map) {
  using Shared = HopperBackwardShared<T, D, E>;
  constexpr int kD = Shared::kDBlocks, kE = Shared::kEBlocks;
  constexpr unsigned kResidentBytes =
      (kD + kE) * Shared::kRows * 64 * sizeof(T);
  constexpr unsigned kStepHeadBytes = kD * Shared::kStep * 64 * sizeof(T),
                     kStepValueBytes = kE * Shared::kStep * 64 * sizeof(T);
  const bool leader = threadIdx.x == 0;
  int step = 0, units = 0; // steps and units so far
  for_each_unit<Shared::kRows, kHopperBackwardStep, Causal, Packed, Persistent>(
      p.forward, [&](const HopperUnit &u) {
        if (leader) {
          if (units > 0) // the consumers are done with the last keys
            arch::mbarrier_wait(&s.barriers.resident_empty, (units - 1) & 1);
          arch::mbarrier_arrive_expect_tx(&s.barriers.resident_full,
                                          kResidentBytes);
          load_tile<Packed, kD>(s.heads, k_map, u.residentRow(), u.head, u.b,
                                &s.barriers.resident_full);
          load_tile<Packed, kE>(s.values, v_map, u.residentRow(), u.head, u.b,
                                &s.barriers.resident_full);
          for (int i = 0; i < u.steps(); ++i, ++step) {
            const int stage = step & 1;
            if (step >= 2)
              arch::mbarrier_wait(&s.barriers.heads_empty[stage],
                                  ((step >> 1) - 1) & 1);
            arch::mbarrier_arrive_expect_tx(&s.barriers.heads_full[stage],
                                            kStepHeadBytes);
            load_tile<Packed, kD>(s.step_heads[stage], q_map, u.stepRow(i),
                                  u.stepHead(i), u.b,
                                  &s.barriers.heads_full[stage]);
            if (step >= 2)
              arch::mbarrier_wait(&s.barriers.values_empty[stage],
                                  ((step >> 1) - 1) & 1);
            arch::mbarrier_arrive_expect_tx(&s.barriers.values_full[stage],
                                            kStepValueBytes);
            load_tile<Packed, kE>(s.step_values[stage], d_o_map, u.stepRow(i),
                                  u.stepHead(i), u.b,
                                  &s.barriers.values_full[stage]);
          }
        }
        ++units;
      });
}

/// The rows of a step's tile from `row`, as wgmma_abt takes its B.
template <typename T, int Block>
__device__ __forceinline__ const T (*rows_from(const T (*tile)[Block],
                                               int row))[Block] {
  return reinterpret_cast<const T(*)[Block]>(&tile[0][64 * row]);
}

/// A consumer warp's step i of unit u (its `step`-th overall): waits for
/// the stage, forms its 16 rows of Sᵀ and dPᵀ with wgmma from shared
/// memory (its warpgroup's 64 keys from `keys0` of the block against the
/// step's queries from `queries0`, as many as the tiles' columns), then P
/// (in `scores`) and scale·dS (in `dp`) as the sm_80 kernel does.
template <bool Biased, typename T, int D, int E, typename Tile>
__device__ __forceinline__ void
step_probabilities(const BackwardParams<T> &p, HopperBackwardShared<T, D, E> &s,
                   const HopperUnit &u, int i, int step, int keys0,
                   int queries0, Tile &scores, Tile &dp) {
  using Shared = HopperBackwardShared<T, D, E>;
  const int stage = step & 1;
  const unsigned parity = (step >> 1) & 1;
  scores.clear();
  dp.clear();
  arch::mbarrier_wait(&s.barriers.heads_full[stage], parity);
  wgmma_abt<Shared::kDBlocks>(scores, s.heads, keys0,
                              rows_from(s.step_heads[stage], queries0));
  arch::wgmma_commit();
  arch::mbarrier_wait(&s.barriers.values_full[stage], parity);
  wgmma_abt<Shared::kEBlocks>(dp, s.values, keys0,
                              rows_from(s.step_values[stage], queries0));
  arch::wgmma_commit();
  arch::wgmma_wait<0>();
  probabilities_and_gradients<true, Biased>(
      scores, dp, p, u.bounds, u.b, u.stepHead(i), u.queryRows,
      u.row0 + keys0 + 16 * (threadIdx.x / 32 % 4), u.stepRow0(i) + queries0);
}

/// After a step's products were issued: waits for them, then this warp
/// releases the stage.
template <typename T, int D, int E>
__device__ __forceinline__ void finish_step(HopperBackwardShared<T, D, E> &s,
                                            int step) {
  arch::wgmma_commit();
  arch::wgmma_wait<0>();
  warp_arrive(&s.barriers.heads_empty[step & 1]);
  warp_arrive(&s.barriers.values_empty[step & 1]);
}

/// This warp is done with the unit's resident rows.
template <typename T, int D, int E>
__device__ __forceinline__ void
release_resident(HopperBackwardShared<T, D, E> &s) {
  warp_arrive(&s.barriers.resident_empty);
}

/// The barrier both consumer warpgroups meet at once each has written its
/// dSᵀ of a step, and the first of the two each meets alone around its
/// ordered additions to dQ.
inline constexpr unsigned kStagedGradientsBarrier = 1;
inline constexpr unsigned kDeterministicBarrier = 2;

/// Writes this warp's 16 rows of scale·dSᵀ or Pᵀ (keys from `row0` of the
/// block's, columns the step's queries from `col0`) into `staged` (keys by
/// the step's 64 queries, 128-byte swizzled rows) as wgmma reads it, then
/// orders the writes before the async proxy.
template <typename T, typename Tile>
__device__ __forceinline__ void stage_score_gradients(const Tile &dp, T *staged,
                                                      int row0, int col0 = 0) {
  dp.for_each_pair([&](int r, int c, float first, float second) {
    *reinterpret_cast<unsigned *>(&staged[staged_at(row0 + r, col0 + c)]) =
        tile::Mma16<T>::pack(first, second);
  });
  arch::fence_proxy_async_shared();
}

/// This warpgroup's share of dQ for step i of unit u: dS·K over the
/// block's keys (A the staged dSᵀ, B the resident keys, both MN-major)
/// for the 64-column blocks of D that fall to it (the warpgroups take the
/// step's blocks in turn), added to the f32 accumulator with reductions;
/// `Deterministic`, with plain adds once the key tiles before this one
/// that see the query tile have added theirs (its semaphore counts them).
template <bool Deterministic, typename T, int D, int E>
__device__ __forceinline__ void
add_query_gradients(const BackwardParams<T> &p,
                    const HopperBackwardShared<T, D, E> &s, const HopperUnit &u,
                    int i, int step, int *semaphores) {
  using Shared = HopperBackwardShared<T, D, E>;
  const int warp = threadIdx.x / 32 % 4, group = threadIdx.x / 128 - 1;
  const bool leader = threadIdx.x % 128 == 0;
  const T *ds = s.ds[step & 1];
  const int query0 = u.stepRow0(i) + 16 * warp, head = u.stepHead(i);
#pragma unroll
  for (int c = 0; c < Shared::kDBlocks; ++c) {
    if ((step * Shared::kDBlocks + c) % 2 != group)
      continue;
    StepTile<T> dq;
    fence_for(dq);
#pragma unroll
    for (int k = 0; k < Shared::kRows / 16; ++k) {
      // 16 keys: two 1024-byte atoms down dSᵀ and down the keys' block c.
      const unsigned long long da =
          arch::wgmma_descriptor(&ds[16 * 64 * k], Shared::kRows * 128, 1024);
      const unsigned long long db = arch::wgmma_descriptor(
          &s.heads[c][16 * 64 * k], Shared::kRows * 128, 1024);
      arch::wgmma_ss_transposed<T>(wgmma_accumulators(dq), da, db, k > 0);
    }
    arch::wgmma_commit();
    arch::wgmma_wait<0>();
    int *semaphore = nullptr;
    if constexpr (Deterministic) {
      semaphore = &semaphores[dq_semaphore<Shared::kDBlocks>(
          p.forward, u, head, u.stepRow0(i) / kHopperBackwardStep, c)];
      if (leader)
        arch::wait_until_equal(semaphore, key_tile_place<Shared::kRows>(u, i));
      arch::named_barrier_sync(kDeterministicBarrier + group, 128);
    }
    add_to_query_gradients<D, Deterministic>(p, u, head, query0, 64 * c, dq);
    if constexpr (Deterministic) {
      __threadfence();
      arch::named_barrier_sync(kDeterministicBarrier + group, 128);
      if (leader)
        arch::release_increment(semaphore);
    }
  }
}

/// The narrow consumer warpgroups (D, E ≤ 128): each owns 64 of the
/// block's 128 keys, forms Sᵀ and dPᵀ of them against the step's 64
/// queries, and adds Pᵀ dO and dSᵀ Q to dV and dK with P and dS from its
/// registers.
template <typename T, int D, int E, bool Causal, bool Packed,
          bool Deterministic, bool Biased>
__device__ __forceinline__ void consume_narrow(const BackwardParams<T> &p,
                                               HopperBackwardShared<T, D, E> &s,
                                               int *semaphores) {
  using Shared = HopperBackwardShared<T, D, E>;
  const int warp = threadIdx.x / 32 % 4, group = threadIdx.x / 128 - 1;
  int step = 0, units = 0;
  for_each_unit<Shared::kRows, kHopperBackwardStep, Causal, Packed,
                Deterministic>(p.forward, [&](const HopperUnit &u) {
    const int keys0 = 64 * group; // the warpgroup's, in the block
    tile::WarpTile<T, 16, 64 * Shared::kDBlocks> dk;
    tile::WarpTile<T, 16, 64 * Shared::kEBlocks> dv;
    StepTile<T> scores, dp;
    arch::mbarrier_wait(&s.barriers.resident_full, units & 1);
    dv.clear();
    dk.clear();
    for (int i = 0; i < u.steps(); ++i, ++step) {
      step_probabilities<Biased>(p, s, u, i, step, keys0, 0, scores, dp);
      stage_score_gradients(dp, s.ds[step & 1], keys0 + 16 * warp);
      arch::named_barrier_sync(kStagedGradientsBarrier, 256);
      wgmma_ab(dv, scores, s.step_values[step & 1]); // dV += Pᵀ dO
      wgmma_ab(dk, dp, s.step_heads[step & 1]);      // dK += dSᵀ Q
      finish_step(s, step);
      add_query_gradients<Deterministic>(p, s, u, i, step, semaphores);
    }
    release_resident(s);
    // The block's first key of this warp's 16, found again: held over
    // the steps it would take a register.
    const int row0 =
        u.row0 + 64 * (threadIdx.x / 128 - 1) + 16 * (threadIdx.x / 32 % 4);
    store_gradient_rows<E>(p.dv, p.dv_strides, dv, u.b, u.head, row0,
                           u.keyRows);
    store_gradient_rows<D>(p.dk, p.dk_strides, dk, u.b, u.head, row0,
                           u.keyRows);
    ++units;
  });
}

/// Of a gradient `Width` wide, the columns warpgroup `Group` of the wide
/// kernel accumulates: 64-column blocks 2·Group and 2·Group + 1 where
/// they exist.
__host__ __device__ constexpr int wide_columns(int width, int group) {
  const int rest = (width + 63) / 64 * 64 - 128 * group;
  return rest <= 0 ? 0 : rest < 128 ? rest : 128;
}
template <int Width, int Group>
inline constexpr int kWideColumns = wide_columns(Width, Group);

/// acc += A·B over the step's 64 queries, both operands in shared memory:
/// A a staged tile (keys by queries, K-major), B a step tile's column
/// blocks from `b` (queries by columns, MN-major). Fences first.
template <typename T, typename Acc>
__device__ __forceinline__ void wgmma_staged_ab(Acc &acc, const T *a,
                                                const T *b) {
  fence_for(acc);
#pragma unroll
  for (int k = 0; k < kHopperBackwardStep / 16; ++k) {
    // 16 queries: 32 bytes into A's 128-byte rows; two 1024-byte atoms
    // down B's column blocks, the blocks kStep · 128 bytes apart.
    const unsigned long long da = arch::wgmma_descriptor(&a[16 * k], 16, 1024);
    const unsigned long long db = arch::wgmma_descriptor(
        &b[16 * 64 * k], kHopperBackwardStep * 128, 1024);
    arch::wgmma_ss_b_transposed<T>(wgmma_accumulators(acc), da, db);
  }
}

/// The wide consumer warpgroups (D or E past 128), FlashAttention-3's
/// hdim-256 organisation: both cover the block's 64 keys; warpgroup
/// `Group` forms Sᵀ and dPᵀ against the step's queries 32·Group.. and
/// stages P and dS, which both then read whole from shared memory to add
/// Pᵀ dO and dSᵀ Q to their columns of dV and dK (kWideColumns: 128 each
/// at D = E = 256, 64 + 64 accumulators a thread for each).
template <int Group, typename T, int D, int E, bool Causal, bool Packed,
          bool Deterministic, bool Biased>
__device__ __forceinline__ void consume_wide(const BackwardParams<T> &p,
                                             HopperBackwardShared<T, D, E> &s,
                                             int *semaphores) {
  using Shared = HopperBackwardShared<T, D, E>;
  constexpr int kDColumns = kWideColumns<D, Group>,
                kEColumns = kWideColumns<E, Group>;
  const int warp = threadIdx.x / 32 % 4;
  int step = 0, units = 0;
  for_each_unit<Shared::kRows, kHopperBackwardStep, Causal, Packed,
                Deterministic>(p.forward, [&](const HopperUnit &u) {
    tile::WarpTile<T, 16, kDColumns ? kDColumns : 16> dk;
    tile::WarpTile<T, 16, kEColumns ? kEColumns : 16> dv;
    tile::WarpTile<T, 16, kHopperBackwardStep / 2> scores, dp;
    arch::mbarrier_wait(&s.barriers.resident_full, units & 1);
    dv.clear();
    dk.clear();
    for (int i = 0; i < u.steps(); ++i, ++step) {
      const int stage = step & 1;
      step_probabilities<Biased>(p, s, u, i, step, 0, 32 * Group, scores, dp);
      stage_score_gradients(scores, s.probabilities[stage], 16 * warp,
                            32 * Group);
      stage_score_gradients(dp, s.ds[stage], 16 * warp, 32 * Group);
      arch::named_barrier_sync(kStagedGradientsBarrier, 256);
      if constexpr (kEColumns > 0) // dV += Pᵀ dO
        wgmma_staged_ab(dv, s.probabilities[stage],
                        s.step_values[stage][2 * Group]);
      if constexpr (kDColumns > 0) // dK += dSᵀ Q
        wgmma_staged_ab(dk, s.ds[stage], s.step_heads[stage][2 * Group]);
      finish_step(s, step);
      add_query_gradients<Deterministic>(p, s, u, i, step, semaphores);
    }
    release_resident(s);
    const int row0 = u.row0 + 16 * warp;
    if constexpr (kEColumns > 0)
      store_gradient_rows<E - 128 * Group>(p.dv + 128 * Group, p.dv_strides, dv,
                                           u.b, u.head, row0, u.keyRows);
    if constexpr (kDColumns > 0)
      store_gradient_rows<D - 128 * Group>(p.dk + 128 * Group, p.dk_strides, dk,
                                           u.b, u.head, row0, u.keyRows);
    ++units;
  });
}

/// The gradients in one pass over each key tile: a block per 128 keys of
/// one key head (64 past D = E = 128; grid as for_each_block gives it, 384
/// threads), each step 64 queries of one query head of its group. The
/// consumers (consume_narrow, consume_wide) form Sᵀ = K Qᵀ and dPᵀ = V dOᵀ
/// once, add Pᵀ dO to dV and dSᵀ Q to dK in registers (128 accumulators a
/// thread at most), and stage dSᵀ; once both warpgroups have, dS K is added
/// to dQ's f32 accumulator (zeroed before the launch; a second kernel
/// converts it). `Deterministic`: a cooperative grid of any size takes the
/// units in turn, and each query tile's shares of dQ are added in
/// ascending key tile order, counted by `semaphores` (zeroed before the
/// launch; dq_semaphore's index).
template <typename T, int D, int E, bool Causal, bool Packed,
          bool Deterministic = false, bool Biased = false>
__device__ void
gradients_hopper(const BackwardParams<T> &p, const arch::TensorMap &q_map,
                 const arch::TensorMap &k_map, const arch::TensorMap &v_map,
                 const arch::TensorMap &d_o_map, int *semaphores = nullptr) {
  using Shared = HopperBackwardShared<T, D, E>;
  static_assert(D <= 256 && E <= 256,
                "half of dK's and dV's columns a warpgroup, up to 256 each");
  Shared &s = aligned_shared<Shared>();
  run_warp_specialized<T>(
      s.barriers,
      [&] {
        produce_backward<Causal, Packed, Deterministic>(p, s, k_map, v_map,
                                                        q_map, d_o_map);
      },
      [&] {
        if constexpr (!kWideBackward<D, E>)
          consume_narrow<T, D, E, Causal, Packed, Deterministic, Biased>(
              p, s, semaphores);
        else if (threadIdx.x < 256)
          consume_wide<0, T, D, E, Causal, Packed, Deterministic, Biased>(
              p, s, semaphores);
        else
          consume_wide<1, T, D, E, Causal, Packed, Deterministic, Biased>(
              p, s, semaphores);
      });
}

} // namespace attention
} // namespace rudnn
