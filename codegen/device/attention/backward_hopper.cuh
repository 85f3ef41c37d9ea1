//===- attention/backward_hopper.cuh - Attention backward on sm_90a -------===//
//
// backward.cuh's key and query gradients in the Hopper forward's
// organisation: blocks of 128 rows, three warpgroups. The producer's one
// thread TMA-loads the block's resident rows once (the keys and values for
// dK and dV, the queries and dO for dQ) and streams the other side's, 64 a
// step, through a two-stage ring; each consumer warpgroup owns 64 resident
// rows, forms its scores and dP with wgmma from shared memory, P and dS in
// registers as the sm_80 kernels do, and adds their products with wgmma
// taking them from registers. No atomics: the same bits every run.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/attention/backward.cuh"
#include "rudnn/attention/hopper.cuh"

namespace rudnn {
namespace attention {

/// Rows of a block (two consumer warpgroups of 64) and streamed a step.
inline constexpr int kHopperBackwardRows = 128;
inline constexpr int kHopperBackwardStep = 64;

/// A warp's 16 rows of a step's scores or dP.
template <typename T>
using StepTile = tile::WarpTile<T, 16, kHopperBackwardStep>;

/// The block's dynamic shared memory, from a 1024-byte aligned address
/// (hopperAttentionBackwardSharedBytes adds the slack on the host): the
/// resident rows' heads (D wide) and values (E wide), and two stages of the
/// streamed rows' likewise.
template <typename T, int D, int E> struct HopperBackwardShared {
  static constexpr int kDBlocks = (D + 63) / 64, kEBlocks = (E + 63) / 64;
  static constexpr int kRows = kHopperBackwardRows, kStep = kHopperBackwardStep;
  alignas(1024) T heads[kDBlocks][kRows * 64];
  alignas(1024) T values[kEBlocks][kRows * 64];
  alignas(1024) T step_heads[2][kDBlocks][kStep * 64];
  alignas(1024) T step_values[2][kEBlocks][kStep * 64];
  HopperBarriers<> barriers;
};

/// One block's unit of work: 128 resident rows from row0 of entry b (keys
/// of key head `head` when ByKeys, else queries of query head `head`), and
/// the streamed tiles some of them see: `count` from tile `first`, over
/// each of `group` query heads when ByKeys (steps i and i + steps() of a
/// second pass stream the same rows).
template <bool ByKeys> struct BackwardUnit {
  int b, head, row0;
  Rows queryRows, keyRows;
  KeyBounds bounds;
  int first, count, group, kvHead;

  __device__ __forceinline__ int steps() const { return count * group; }
  /// The tensor row and the head of the resident rows, and of step i's.
  __device__ __forceinline__ int residentRow() const {
    return (ByKeys ? keyRows.first : queryRows.first) + row0;
  }
  __device__ __forceinline__ int stepHead(int i) const {
    return ByKeys ? head * group + i % steps() / count : kvHead;
  }
  /// Step i's first streamed row within the entry.
  __device__ __forceinline__ int stepRow0(int i) const {
    return (first + i % count) * kHopperBackwardStep;
  }
  __device__ __forceinline__ int stepRow(int i) const {
    return (ByKeys ? queryRows.first : keyRows.first) + stepRow0(i);
  }
};

/// Calls visit(unit) for each unit of this block, in the same order for the
/// producer and the consumers (a whole warp calls it).
template <bool ByKeys, bool Causal, bool Packed, typename T, typename Visit>
__device__ __forceinline__ void for_each_unit(const ForwardParams<T> &f,
                                              Visit visit) {
  const int group = f.heads / f.kv_heads;
  for_each_block<kHopperBackwardRows, Packed, ByKeys>(
      f, ByKeys ? f.kv_heads : f.heads,
      [&](int b, int head, int row0, Rows queryRows, Rows keyRows) {
        BackwardUnit<ByKeys> u{
            b,
            head,
            row0,
            queryRows,
            keyRows,
            KeyBounds::of(f, b, Causal, queryRows.count, keyRows.count),
            0,
            0,
            ByKeys ? group : 1,
            head / group};
        if constexpr (ByKeys) {
          u.bounds.query_tiles(row0, kHopperBackwardRows, kHopperBackwardStep,
                               queryRows.count, u.first, u.count);
        } else {
          const int rows = queryRows.count - row0;
          u.bounds.tiles(
              row0, rows < kHopperBackwardRows ? rows : kHopperBackwardRows,
              kHopperBackwardStep, u.first, u.count);
        }
        visit(u);
      });
}

/// The producer thread: each unit's resident rows, then its steps' rows
/// `passes` times over, from the maps of the resident heads and values and
/// the streamed ones.
template <bool ByKeys, bool Causal, bool Packed, typename T, int D, int E>
__device__ void
produce_backward(const BackwardParams<T> &p, HopperBackwardShared<T, D, E> &s,
                 const arch::TensorMap &heads_map,
                 const arch::TensorMap &values_map,
                 const arch::TensorMap &step_heads_map,
                 const arch::TensorMap &step_values_map, int passes) {
  using Shared = HopperBackwardShared<T, D, E>;
  constexpr int kD = Shared::kDBlocks, kE = Shared::kEBlocks;
  constexpr unsigned kResidentBytes =
      (kD + kE) * Shared::kRows * 64 * sizeof(T);
  constexpr unsigned kStepHeadBytes = kD * Shared::kStep * 64 * sizeof(T),
                     kStepValueBytes = kE * Shared::kStep * 64 * sizeof(T);
  const bool leader = threadIdx.x == 0;
  int step = 0, units = 0; // steps and units so far
  for_each_unit<ByKeys, Causal, Packed>(
      p.forward, [&](const BackwardUnit<ByKeys> &u) {
        if (leader) {
          if (units > 0) // the consumers are done with the last rows
            arch::mbarrier_wait(&s.barriers.resident_empty, (units - 1) & 1);
          arch::mbarrier_arrive_expect_tx(&s.barriers.resident_full,
                                          kResidentBytes);
          load_tile<Packed, kD>(s.heads, heads_map, u.residentRow(), u.head,
                                u.b, &s.barriers.resident_full);
          load_tile<Packed, kE>(s.values, values_map, u.residentRow(), u.head,
                                u.b, &s.barriers.resident_full);
          for (int i = 0; i < passes * u.steps(); ++i, ++step) {
            const int stage = step & 1;
            if (step >= 2)
              arch::mbarrier_wait(&s.barriers.heads_empty[stage],
                                  ((step >> 1) - 1) & 1);
            arch::mbarrier_arrive_expect_tx(&s.barriers.heads_full[stage],
                                            kStepHeadBytes);
            load_tile<Packed, kD>(s.step_heads[stage], step_heads_map,
                                  u.stepRow(i), u.stepHead(i), u.b,
                                  &s.barriers.heads_full[stage]);
            if (step >= 2)
              arch::mbarrier_wait(&s.barriers.values_empty[stage],
                                  ((step >> 1) - 1) & 1);
            arch::mbarrier_arrive_expect_tx(&s.barriers.values_full[stage],
                                            kStepValueBytes);
            load_tile<Packed, kE>(s.step_values[stage], step_values_map,
                                  u.stepRow(i), u.stepHead(i), u.b,
                                  &s.barriers.values_full[stage]);
          }
        }
        ++units;
      });
}

/// A consumer warp's step i of unit u (its `step`-th overall): waits for
/// the stage, forms its 16 rows of the scores and, if `Gradients`, dP
/// (transposed when ByKeys) with wgmma from shared memory, then P (in
/// `scores`) and scale·dS (in `dp`) as the sm_80 kernels do.
template <bool Gradients, bool ByKeys, typename T, int D, int E>
__device__ __forceinline__ void
step_probabilities(const BackwardParams<T> &p, HopperBackwardShared<T, D, E> &s,
                   const BackwardUnit<ByKeys> &u, int i, int step, int row0,
                   StepTile<T> &scores, StepTile<T> &dp) {
  using Shared = HopperBackwardShared<T, D, E>;
  const int group = threadIdx.x / 128 - 1;
  const int stage = step & 1;
  const unsigned parity = (step >> 1) & 1;
  scores.clear();
  dp.clear();
  arch::mbarrier_wait(&s.barriers.heads_full[stage], parity);
  wgmma_abt<Shared::kDBlocks>(scores, s.heads, 64 * group, s.step_heads[stage]);
  arch::wgmma_commit();
  arch::mbarrier_wait(&s.barriers.values_full[stage], parity);
  if constexpr (Gradients) {
    wgmma_abt<Shared::kEBlocks>(dp, s.values, 64 * group, s.step_values[stage]);
    arch::wgmma_commit();
  }
  arch::wgmma_wait<0>();
  probabilities_and_gradients<ByKeys>(scores, dp, p, u.bounds, u.b,
                                      ByKeys ? u.stepHead(i) : u.head,
                                      u.queryRows, row0, u.stepRow0(i));
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

/// dK and dV: a block per 128 keys of one key head (grid as for_each_block
/// gives it, 384 threads), each step 64 queries of one query head of its
/// group: Sᵀ = K Qᵀ, dPᵀ = V dOᵀ, dV += Pᵀ dO, dK += dSᵀ Q. Past 128
/// columns of dK and dV together (which with Sᵀ and dPᵀ would not stay in
/// registers) dV and dK take a pass over the steps each.
template <typename T, int D, int E, bool Causal, bool Packed>
__device__ void
key_gradients_hopper(const BackwardParams<T> &p, const arch::TensorMap &q_map,
                     const arch::TensorMap &k_map, const arch::TensorMap &v_map,
                     const arch::TensorMap &d_o_map) {
  using Shared = HopperBackwardShared<T, D, E>;
  constexpr bool kSplit = Shared::kDBlocks + Shared::kEBlocks > 2;
  Shared &s = aligned_shared<Shared>();
  run_warp_specialized<T>(
      s.barriers,
      [&] {
        produce_backward<true, Causal, Packed>(p, s, k_map, v_map, q_map,
                                               d_o_map, kSplit ? 2 : 1);
      },
      [&] {
        const int warp = threadIdx.x / 32 % 4, group = threadIdx.x / 128 - 1;
        int step = 0, units = 0;
        for_each_unit<true, Causal, Packed>(
            p.forward, [&](const BackwardUnit<true> &u) {
              const int row0 = u.row0 + 64 * group + 16 * warp; // first key
              const int steps = u.count * u.group;
              tile::WarpTile<T, 16, 64 * Shared::kDBlocks> dk;
              tile::WarpTile<T, 16, 64 * Shared::kEBlocks> dv;
              StepTile<T> scores, dp;
              arch::mbarrier_wait(&s.barriers.resident_full, units & 1);
              dv.clear();
              if constexpr (!kSplit)
                dk.clear();
              for (int i = 0; i < steps; ++i, ++step) {
                step_probabilities<!kSplit>(p, s, u, i, step, row0, scores, dp);
                wgmma_ab(dv, scores, s.step_values[step & 1]); // dV += Pᵀ dO
                if constexpr (!kSplit)
                  wgmma_ab(dk, dp, s.step_heads[step & 1]); // dK += dSᵀ Q
                finish_step(s, step);
              }
              store_gradient_rows<E>(p.dv, p.dv_strides, dv, u.b, u.head, row0,
                                     u.keyRows);
              if constexpr (kSplit) {
                dk.clear();
                for (int i = 0; i < steps; ++i, ++step) {
                  step_probabilities<true>(p, s, u, i, step, row0, scores, dp);
                  wgmma_ab(dk, dp, s.step_heads[step & 1]);
                  finish_step(s, step);
                }
              }
              release_resident(s);
              store_gradient_rows<D>(p.dk, p.dk_strides, dk, u.b, u.head, row0,
                                     u.keyRows);
              ++units;
            });
      });
}

/// dQ: a block per 128 queries of one head, each step 64 of its keys:
/// S = Q Kᵀ, dP = dO Vᵀ, dQ += dS K.
template <typename T, int D, int E, bool Causal, bool Packed>
__device__ void query_gradients_hopper(const BackwardParams<T> &p,
                                       const arch::TensorMap &q_map,
                                       const arch::TensorMap &k_map,
                                       const arch::TensorMap &v_map,
                                       const arch::TensorMap &d_o_map) {
  using Shared = HopperBackwardShared<T, D, E>;
  Shared &s = aligned_shared<Shared>();
  run_warp_specialized<T>(
      s.barriers,
      [&] {
        produce_backward<false, Causal, Packed>(p, s, q_map, d_o_map, k_map,
                                                v_map, 1);
      },
      [&] {
        const int warp = threadIdx.x / 32 % 4, group = threadIdx.x / 128 - 1;
        int step = 0, units = 0;
        for_each_unit<false, Causal, Packed>(
            p.forward, [&](const BackwardUnit<false> &u) {
              const int row0 = u.row0 + 64 * group + 16 * warp; // first query
              tile::WarpTile<T, 16, 64 * Shared::kDBlocks> dq;
              StepTile<T> scores, dp;
              dq.clear();
              arch::mbarrier_wait(&s.barriers.resident_full, units & 1);
              for (int i = 0; i < u.steps(); ++i, ++step) {
                step_probabilities<true>(p, s, u, i, step, row0, scores, dp);
                wgmma_ab(dq, dp, s.step_heads[step & 1]); // dQ += dS K
                finish_step(s, step);
              }
              release_resident(s);
              store_gradient_rows<D>(p.dq, p.dq_strides, dq, u.b, u.head, row0,
                                     u.queryRows);
              ++units;
            });
      });
}

} // namespace attention
} // namespace rudnn
