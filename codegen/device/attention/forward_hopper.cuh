//===- attention/forward_hopper.cuh - Tiled attention forward on sm_90a ---===//
//
// FlashAttention-3's organisation: a block of 128 queries in two consumer
// warpgroups, or 192 in three (head dims to 64), and a producer
// warpgroup. The producer (warpgroup 0, its registers given up with
// setmaxnreg) has one thread issue TMA loads: the queries once, then each
// key tile's K and V into a ring of stages (three to D = 64, else two),
// announcing their bytes on the stage's `full` mbarriers (one for K, one
// for V, so the scores start while V lands) and waiting on its `empty`
// ones (K's and V's apart) before reuse. Each consumer warpgroup (64 query
// rows) forms its 64 x BK scores with wgmma from shared memory, scales, masks
// and folds them into its online softmax in registers while the P·V of the tile
// before (wgmma taking P from registers) is still in flight, and the
// consumers take turns issuing products (pingpong on named barriers), as
// FlashAttention-3 does. Tiles are 64-element column blocks
// of 128-byte rows, swizzled as both TMA and wgmma read them; head dims
// below a block's 64 are zeros the TMA unit fills in. Key tiles no query
// of the block may see are never loaded. Each consumer warp stages its
// output rows in shared memory and, where o promises 16-byte rows, sends
// them out by TMA stores while the producer loads the next tile.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/arch/named_barrier.cuh"
#include "rudnn/attention/block.cuh"
#include "rudnn/attention/hopper.cuh"
#include "rudnn/shared.cuh"

namespace rudnn {
namespace attention {

/// A block's tiles for head dims D and E: `Queries` rows, 64 a consumer
/// warpgroup (two, or three where head dims are at most 64, at 160
/// registers a thread). Keys per tile: 128 while a consumer's scores and
/// accumulators fit its registers (two groups, head dims to 128), else 64
/// (three groups' masked forms spill with 128; hopperAttentionBlockKeys).
/// Stages of the K and V ring: three where they fit the shared memory
/// (head dims to 64), else two. Each consumer warp stages its output 64
/// columns at a time in buffers used in turn: two where a row has more
/// than 64 columns, so one is written while the store of the other still
/// reads it.
template <int D, int E, int Queries = 128> struct HopperTiles {
  static_assert(Queries == 128 || (Queries == 192 && D <= 64 && E <= 64),
                "two consumer warpgroups, or three to head dims of 64");
  static constexpr int kD = D, kE = E, kBlockQueries = Queries;
  static constexpr int kConsumers = Queries / 64,
                       kConsumerWarps = 4 * kConsumers,
                       kThreads = 128 * (kConsumers + 1);
  static constexpr int kKeys =
      Queries == 128 && D <= 128 && E <= 128 ? 128 : 64;
  static constexpr int kDBlocks = (D + 63) / 64, kEBlocks = (E + 63) / 64;
  static constexpr int kStages = D <= 64 && E <= 64 ? 3 : 2;
  static constexpr int kOutputBuffers = kEBlocks > 1 ? 2 : 1;
};

/// The block's dynamic shared memory, from a 1024-byte aligned address
/// (hopperAttentionSharedBytes adds the slack on the host).
template <typename T, typename Tiles> struct HopperShared {
  static constexpr int kBK = Tiles::kKeys;
  alignas(1024) T q[Tiles::kDBlocks][Tiles::kBlockQueries * 64];
  alignas(1024) T k[Tiles::kStages][Tiles::kDBlocks][kBK * 64];
  alignas(1024) T v[Tiles::kStages][Tiles::kEBlocks][kBK * 64];
  // Each consumer warp's epilogue, 1024-byte aligned as TMA's swizzle is.
  alignas(
      1024) T out_stage[Tiles::kConsumerWarps][Tiles::kOutputBuffers][16 * 64];
  // Resident: the queries; streamed: K and V.
  HopperBarriers<Tiles::kStages, Tiles::kConsumerWarps> barriers;
  // A packed batch's tile the queries belong to (for_each_query_tile).
  int claimed;
};

/// One block's unit of work: a tile of queries from q0 of entry b, head h.
struct QueryTile {
  int b, h, q0;
  Rows queryRows, keyRows;
};

/// The keys a tile of BQ queries may see, and the tiles of BK of them the
/// block loads (the producer and the consumers agree on them).
template <bool Causal, int BQ, int BK> struct TileKeys {
  KeyBounds bounds;
  int first, count;

  template <typename T>
  __device__ __forceinline__ TileKeys(const ForwardParams<T> &p,
                                      const QueryTile &t)
      : bounds(
            KeyBounds::of(p, t.b, Causal, t.queryRows.count, t.keyRows.count)) {
    const int rows = t.queryRows.count - t.q0;
    bounds.tiles(t.q0, rows < BQ ? rows : BQ, BK, first, count);
  }
};

/// Packed query tile `linear` (heads fastest, then each entry's tiles,
/// causal ones heaviest first: an entry's last tile sees the most keys);
/// false past the last. Warp-collective: the entry is found in the
/// offsets on the device.
template <int BQ, bool Causal, typename T>
__device__ __forceinline__ bool packed_tile_of(const ForwardParams<T> &p,
                                               int linear, QueryTile &t) {
  int b = 0, q0 = 0;
  if (!packed_query_tile<BQ>(p.cu_seqlens_q, p.batch, p.queries,
                             linear / p.heads, b, q0))
    return false;
  const Rows queryRows = packed_rows(p.cu_seqlens_q, b, p.queries);
  if (Causal)
    q0 = (queryRows.count - 1) / BQ * BQ - q0;
  t = QueryTile{b, linear % p.heads, q0, queryRows,
                packed_rows(p.cu_seqlens_k, b, p.keys)};
  return true;
}

/// Calls work(tile) for each query tile this block takes, in the same
/// order for the producer (`Producer`, warp 0) and the consumers. Padded
/// batches number their tiles linearly and block x of a grid of n takes
/// x, x + n, …: one tile each on a grid of them all, several on a
/// persistent grid of one block an SM, whose producer then loads a tile's
/// queries and keys under the epilogue of the tile before. They number a
/// head's tiles together (blocks running at once share its keys in L2),
/// causal ones the heaviest first: every (entry, head)'s last tile, then
/// the one before, … (longest processing time first). Packed batches,
/// whose tiles' work only the offsets on the device know, hand them out
/// at run time: the producer's first lane claims the next from `counter`
/// (zeroed at each call) and passes it to the consumers in `s.claimed`,
/// written before the queries' barrier is armed and read once it
/// completes, so a block that drew light tiles takes more and the grid
/// finishes together. Past the last tile the producer arrives on that
/// barrier without loading, and the consumers stop.
template <int BQ, bool Causal, bool Packed, bool Producer, typename T,
          typename Shared, typename Work>
__device__ __forceinline__ void for_each_query_tile(const ForwardParams<T> &p,
                                                    Shared &s, int *counter,
                                                    Work work) {
  if constexpr (!Packed) {
    const int first = static_cast<int>(blockIdx.x + blockIdx.y * gridDim.x),
              step = static_cast<int>(gridDim.x * gridDim.y);
    const int tiles = (p.queries + BQ - 1) / BQ, pairs = p.batch * p.heads;
    for (int linear = first; linear < tiles * pairs; linear += step) {
      const int tile = Causal ? tiles - 1 - linear / pairs : linear % tiles,
                pair = Causal ? linear % pairs : linear / tiles;
      work(QueryTile{pair / p.heads, pair % p.heads, tile * BQ,
                     Rows{0, p.queries}, Rows{0, p.keys}});
    }
  } else if constexpr (Producer) {
    const bool leader = threadIdx.x == 0;
    for (int tiles = 0;; ++tiles) {
      int linear = leader ? atomicAdd(counter, 1) : 0;
      linear = __shfl_sync(0xffffffffu, linear, 0);
      QueryTile t;
      const bool found = packed_tile_of<BQ, Causal>(p, linear, t);
      if (leader) {
        if (tiles > 0) // the consumers are done with the last tile
          arch::mbarrier_wait(&s.barriers.resident_empty, (tiles - 1) & 1);
        s.claimed = linear;
        if (!found)
          arch::mbarrier_arrive(&s.barriers.resident_full);
      }
      if (!found)
        return;
      work(t);
    }
  } else {
    for (int tiles = 0;; ++tiles) {
      arch::mbarrier_wait(&s.barriers.resident_full, tiles & 1);
      QueryTile t;
      if (!packed_tile_of<BQ, Causal>(p, s.claimed, t))
        return;
      work(t);
    }
  }
}

/// The producer thread: the queries of each tile, then its key tiles.
template <typename T, typename Tiles, bool Causal, bool Packed>
__device__ void produce(const ForwardParams<T> &p, HopperShared<T, Tiles> &s,
                        const arch::TensorMap &q_map,
                        const arch::TensorMap &k_map,
                        const arch::TensorMap &v_map, int *tile_counter) {
  constexpr int kBQ = Tiles::kBlockQueries, kBK = Tiles::kKeys;
  constexpr unsigned kQueryBytes = Tiles::kDBlocks * kBQ * 64 * sizeof(T);
  constexpr unsigned kKeyBytes = Tiles::kDBlocks * kBK * 64 * sizeof(T),
                     kValueBytes = Tiles::kEBlocks * kBK * 64 * sizeof(T);
  const bool leader = threadIdx.x == 0;
  int step = 0, tiles = 0; // key tiles and query tiles so far
  auto load = [&](const QueryTile &t) {
    const TileKeys<Causal, kBQ, kBK> keys(p, t);
    const int first = keys.first, count = keys.count;
    const int hk = t.h / (p.heads / p.kv_heads);
    if (leader) {
      if (tiles > 0) // the consumers are done with the last queries
        arch::mbarrier_wait(&s.barriers.resident_empty, (tiles - 1) & 1);
      arch::mbarrier_arrive_expect_tx(&s.barriers.resident_full, kQueryBytes);
      load_tile<Packed, Tiles::kDBlocks>(s.q, q_map, t.queryRows.first + t.q0,
                                         t.h, t.b, &s.barriers.resident_full);
      for (int i = 0; i < count; ++i, ++step) {
        constexpr int kStages = Tiles::kStages;
        const int stage = step % kStages, j0 = (first + i) * kBK;
        // The phase in which the consumers released this stage's last use.
        const unsigned released = (step / kStages - 1) & 1;
        if (step >= kStages)
          arch::mbarrier_wait(&s.barriers.heads_empty[stage], released);
        arch::mbarrier_arrive_expect_tx(&s.barriers.heads_full[stage],
                                        kKeyBytes);
        load_tile<Packed, Tiles::kDBlocks>(s.k[stage], k_map,
                                           t.keyRows.first + j0, hk, t.b,
                                           &s.barriers.heads_full[stage]);
        if (step >= kStages)
          arch::mbarrier_wait(&s.barriers.values_empty[stage], released);
        arch::mbarrier_arrive_expect_tx(&s.barriers.values_full[stage],
                                        kValueBytes);
        load_tile<Packed, Tiles::kEBlocks>(s.v[stage], v_map,
                                           t.keyRows.first + j0, hk, t.b,
                                           &s.barriers.values_full[stage]);
      }
    }
    ++tiles;
  };
  for_each_query_tile<kBQ, Causal, Packed, true>(p, s, tile_counter, load);
}

/// The consumer warpgroups take turns issuing their products
/// (FlashAttention-3's pingpong, round robin where there are three): each
/// waits for its turn on its own named barrier and, once its products are
/// issued, hands the turn to the next on the next one's, so one
/// warpgroup's softmax runs under the others' products. All issue the same
/// number of times (they walk the same key tiles); the first starts (the
/// last hands it its first turn), and takes the last turn handed to it at
/// the end, so every barrier completes. A barrier counts the two
/// warpgroups it joins.
template <int Groups> struct ProductTurns {
  static constexpr unsigned kFirstBarrier = 1, kThreads = 256;
  unsigned group; // 0 … Groups − 1

  __device__ __forceinline__ void begin() const {
    if (group == Groups - 1)
      arch::named_barrier_arrive(kFirstBarrier, kThreads);
  }
  __device__ __forceinline__ void take() const {
    arch::named_barrier_sync(kFirstBarrier + group, kThreads);
  }
  __device__ __forceinline__ void hand_over() const {
    arch::named_barrier_arrive(kFirstBarrier + (group + 1) % Groups, kThreads);
  }
  __device__ __forceinline__ void end() const {
    if (group == 0)
      take();
  }
};

/// A consumer warp's epilogue through TMA stores (a padded o promising
/// 16-byte rows): 64 columns at a time, the warp stages its 16 normalized
/// rows in the next of its buffers, fences them for the async proxy, and
/// its first lane stores the box (rows past T dropped by the unit) and
/// moves on; a buffer is rewritten only once the store before has read
/// it. `stores` counts the warp's stores so far; the caller waits for the
/// last ones before the block exits.
template <int E, typename T, typename Tile, int Buffers>
__device__ __forceinline__ void
store_rows_tma(const ForwardParams<T> &p, const Tile &out,
               OnlineSoftmax<16> &softmax, const QueryTile &t, int row0,
               T (&stage)[Buffers][16 * 64], int &stores,
               const arch::TensorMap &o_map) {
  if (row0 >= t.queryRows.count)
    return;
  float normalize[OnlineSoftmax<16>::kRows], lse[OnlineSoftmax<16>::kRows];
  softmax.finish(normalize, lse);
  const bool leader = threadIdx.x % 32 == 0;
#pragma unroll
  for (int c0 = 0; c0 < E; c0 += 64, ++stores) {
    T *buffer = stage[stores % Buffers];
    if (leader)
      arch::tma_store_wait<Buffers - 1>();
    __syncwarp();
    stage_columns(out, normalize, c0, buffer);
    arch::fence_proxy_async_shared();
    __syncwarp();
    if (leader) {
      const int coords[4] = {c0, row0, t.h, t.b};
      arch::tma_store<4>(o_map, coords, buffer);
      arch::tma_store_commit();
    }
  }
  store_lse(p, lse, t.b, t.h, row0, t.queryRows);
}

/// A consumer warpgroup's 64 rows of each query tile. The products of
/// neighbouring key tiles overlap: the scores of tile i are issued with
/// P·V of tile i − 1 behind them, and the softmax of tile i runs while
/// P·V is still in flight (its wait keeps one group pending); only the
/// rescaling of the output waits for it. Each tile's keys are released as
/// soon as its scores are formed, its values once P·V has read them.
template <typename T, typename Tiles, bool Causal, bool Capped, bool Biased,
          bool Packed, tile::Alignment Out>
__device__ void consume(const ForwardParams<T> &p, HopperShared<T, Tiles> &s,
                        const arch::TensorMap *o_map) {
  constexpr int E = Tiles::kE, kBQ = Tiles::kBlockQueries;
  // Padded outputs promising 16-byte rows go out through TMA stores.
  constexpr bool kStoreByTma = Out == tile::Alignment::Aligned && !Packed;
  constexpr int kBK = Tiles::kKeys, kE = 64 * Tiles::kEBlocks;
  const int group = threadIdx.x / 128 - 1, warp = threadIdx.x / 32 % 4;
  const ScoreScale<Capped, Biased> scale = ScoreScale<Capped, Biased>::of(p);
  const ProductTurns<Tiles::kConsumers> turns{static_cast<unsigned>(group)};
  turns.begin();
  int step = 0, tiles = 0, stores = 0;
  for_each_query_tile<kBQ, Causal, Packed, false>(
      p, s, nullptr, [&](const QueryTile &t) {
        const TileKeys<Causal, kBQ, kBK> keys(p, t);
        const KeyBounds &bounds = keys.bounds;
        const int first = keys.first, count = keys.count;
        const int row0 =
            t.q0 + 64 * group + 16 * warp; // this warp's first query

        tile::WarpTile<T, 16, kE> out;
        out.clear();
        OnlineSoftmax<16> softmax;
        softmax.clear(scale.toLog2);
        tile::WarpTile<T, 16, kBK> scores;
        unsigned probabilities[kBK / 16][1][4]; // P of the tile before, as A
        // Key tile i's stage and its phase there.
        auto stage = [&](int i) { return (step + i) % Tiles::kStages; };
        auto parity = [&](int i) {
          return unsigned((step + i) / Tiles::kStages & 1);
        };
        // Waits for tile i's keys or values to land. Before the fence: what
        // the compiler places between a fence and its wgmma (a spin loop here)
        // may move the registers the wgmma reads.
        auto await_keys = [&](int i) {
          arch::mbarrier_wait(&s.barriers.heads_full[stage(i)], parity(i));
        };
        auto await_values = [&](int i) {
          arch::mbarrier_wait(&s.barriers.values_full[stage(i)], parity(i));
        };
        // Issues tile i's scores, or out += P·V of tile i (after the fence).
        auto issue_scores = [&](int i) {
          issue_abt<Tiles::kDBlocks>(scores, s.q, 64 * group, s.k[stage(i)],
                                     /*accumulate=*/false);
          arch::wgmma_commit();
        };
        auto issue_values = [&](int i) {
          issue_ab(out, probabilities, s.v[stage(i)]);
          arch::wgmma_commit();
        };
        // Once tile i's scores are formed: its keys released, the scores
        // scaled, masked and folded into the softmax.
        auto take_scores = [&](int i,
                               float(&rescale)[OnlineSoftmax<16>::kRows]) {
          warp_arrive(&s.barriers.heads_empty[stage(i)]);
          scale.apply(scores, bounds, row0, 16, (first + i) * kBK, kBK,
                      scale.bias_step(alibi_slope<Biased>(p, t.b, t.h)));
          softmax.update(scores, rescale);
        };
        float rescale[OnlineSoftmax<16>::kRows];
        arch::mbarrier_wait(&s.barriers.resident_full, tiles & 1);
        if (count > 0) {
          await_keys(0);
          turns.take();
          fence_for(scores);
          issue_scores(0);
          turns.hand_over();
          arch::wgmma_wait<0>();
          take_scores(0, rescale); // nothing to rescale yet
          a_operand(scores, probabilities);
        }
        for (int i = 1; i < count; ++i) {
          await_keys(i);
          await_values(i - 1);
          turns.take();
          arch::wgmma_fence_operand(wgmma_accumulators(scores));
          fence_for(out);
          issue_scores(i);
          issue_values(i - 1);
          turns.hand_over();
          arch::wgmma_wait<1>(); // the scores; P·V runs on
          take_scores(i, rescale);
          arch::wgmma_wait<0>();
          warp_arrive(&s.barriers.values_empty[stage(i - 1)]);
          rescale_rows(out, rescale);
          a_operand(scores, probabilities);
        }
        if (count > 0) {
          await_values(count - 1);
          turns.take();
          fence_for(out);
          issue_values(count - 1);
          turns.hand_over();
          arch::wgmma_wait<0>();
          warp_arrive(&s.barriers.values_empty[stage(count - 1)]);
        }
        step += count;
        warp_arrive(&s.barriers.resident_empty); // done with the queries
        auto &staging = s.out_stage[threadIdx.x / 32 - 4];
        if constexpr (kStoreByTma)
          store_rows_tma<E>(p, out, softmax, t, row0, staging, stores, *o_map);
        else
          store_rows_staged<E, Out>(p, out, softmax, t.b, t.h, row0,
                                    t.queryRows, staging[0]);
        ++tiles;
      });
  turns.end();
  if (kStoreByTma && threadIdx.x % 32 == 0)
    arch::tma_store_wait<0>(); // the stages stay until read
}

/// Padded batches: grid (ceil(T / BQ), B·H), or a persistent grid of any
/// size; packed: any grid, its blocks claiming tiles from `tile_counter`
/// (an int zeroed at each call). HopperTiles' threads for `Queries` rows a
/// block; q, k and v through their tensor maps (16-byte aligned rows). An
/// o promising 16-byte rows (`Out` Aligned) is stored without an
/// element-wise path: padded ones through `o_map` (boxes of 64 columns by
/// 16 rows), packed ones by 16-byte stores.
template <typename T, int D, int E, int Queries, bool Causal, bool Capped,
          bool Biased, bool Packed,
          tile::Alignment Out = tile::Alignment::Checked>
__device__ void
forward_hopper(const ForwardParams<T> &p, const arch::TensorMap &q_map,
               const arch::TensorMap &k_map, const arch::TensorMap &v_map,
               const arch::TensorMap *o_map = nullptr,
               int *tile_counter = nullptr) {
  using Tiles = HopperTiles<D, E, Queries>;
  HopperShared<T, Tiles> &s = aligned_shared<HopperShared<T, Tiles>>();
  run_warp_specialized<T>(
      s.barriers,
      [&] {
        produce<T, Tiles, Causal, Packed>(p, s, q_map, k_map, v_map,
                                          tile_counter);
      },
      [&] {
        consume<T, Tiles, Causal, Capped, Biased, Packed, Out>(p, s, o_map);
      });
}

} // namespace attention
} // namespace rudnn
