//===- kda/walk_wgmma.cuh - The KDA state walk on wgmma (sm_90a) ----------===//
//
// The 16-bit state walk for Hopper: one warpgroup a block carries 16 value
// columns of the state through a sequence's chunks in fp32 wgmma
// accumulators (K rows in 64-row tiles, warp w holding rows 16w.. of each).
// Per chunk the state leaves as a boundary and, rounded and transposed, as
// the K-major B operand of U = U0 − W·S (m64n16k16, W's rows the chunk's
// tokens); U leaves for the workspace and, rounded and transposed, as the
// K-major B operand of S ← e^Γlast ⊙ S + Kdᵀ·U, Kd read MN-major where it
// lies (tokens by features). W, Kd, U0's columns and e^Γlast arrive by
// cp.async into 128-byte swizzled column blocks, the next chunk's copies
// in flight while the current one is computed. Two barriers a chunk: the
// operands' and the rounded state's hand-over, then the updates'.
//
// With `Output` the block also computes its columns of the chunk's output,
// O = scale (Qd·S + B·U), from the same staged state and updates (Qd the
// decayed queries `prepare` keeps in the backward's tiles, B the pairwise
// matrix, both K-major), issued beside the state's update: the forward is
// then `prepare` and this kernel, and no boundary need be kept between
// them (written only where `boundaries` is given).
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/arch/cp_async.cuh"
#include "rudnn/arch/mbarrier.cuh"
#include "rudnn/arch/proxy_fence.cuh"
#include "rudnn/arch/tma.cuh"
#include "rudnn/arch/wgmma.cuh"
#include "rudnn/kda/chunk.cuh"
#include "rudnn/kda/state_rows.cuh"
#include "rudnn/tile/copy.cuh"
#include "rudnn/tile/shared_tile.cuh"
#include "rudnn/tile/warpgroup_gemm.cuh"
#include "rudnn/tile/warpgroup_tile.cuh"

namespace rudnn {
namespace kda {

/// Value columns one block of the wgmma walk carries (its m64nNk16's N).
constexpr int kWgmmaWalkColumns = 16;

/// The 64-row tiles of a state's K rows (K rounded up to 64: the m64 of
/// the products that read it).
template <int K> constexpr int kStateTiles = (K + 63) / 64;

/// The state (or its gradient) one warpgroup carries through a walk: its
/// block's 16 value columns of a [K][V] state in fp32 wgmma accumulators,
/// warp w holding rows 64m + 16w.. of each 64-row tile m.
template <int K, int V, typename TIn> struct WalkState {
  static constexpr int kBlocks = kStateTiles<K>;
  tile::WarpTile<TIn, 16, kWgmmaWalkColumns> tiles[kBlocks];

  static __device__ __forceinline__ int first_row(int m) {
    return 64 * m + 16 * (threadIdx.x / 32);
  }
  /// From an fp32 state at the block's first column (null: zeros).
  __device__ __forceinline__ void load(const float *from, int width) {
#pragma unroll
    for (int m = 0; m < kBlocks; ++m)
      load_state_rows<K, V>(tiles[m], from, first_row(m), width);
  }
  /// Out to a state at the block's first column (none when null).
  template <typename T>
  __device__ __forceinline__ void store(T *to, int width) const {
    if (to)
#pragma unroll
      for (int m = 0; m < kBlocks; ++m)
        store_state_rows<K, V>(tiles[m], to, first_row(m), width);
  }
  /// Rounded and transposed into `staged`: the K-major B operand.
  template <typename StateT>
  __device__ __forceinline__ void stage(const StateT &staged) const {
#pragma unroll
    for (int m = 0; m < kBlocks; ++m)
      stage_state_columns(tiles[m], staged, first_row(m));
  }
  /// e^Γlast ⊙ S, fenced for the products that accumulate into it.
  template <typename Last>
  __device__ __forceinline__ void decay(const Last &last) {
#pragma unroll
    for (int m = 0; m < kBlocks; ++m) {
      decay_rows(tiles[m], last, first_row(m));
      arch::wgmma_fence_operand(tile::wgmma_accumulators(tiles[m]));
    }
  }
  /// After the products' wait: their results are the registers'.
  __device__ __forceinline__ void fence() {
#pragma unroll
    for (int m = 0; m < kBlocks; ++m)
      arch::wgmma_fence_operand(tile::wgmma_accumulators(tiles[m]));
  }
};

/// The wgmma walk's dynamic shared memory, from a 1024-byte aligned
/// address (the host adds the slack): two stages of a chunk's operands (W
/// with 64 rows, as the m64 product takes them, zeros past the chunk; Kd;
/// U0's 16 columns; e^Γlast), and the rounded state and updates
/// transposed, [16][K'] and [16][C], K' = K rounded up to 64.
template <int K, int C, typename TIn> struct WgmmaWalkShared {
  static constexpr int kBlocks = kStateTiles<K>, kStateRows = 64 * kBlocks;
  static_assert(C % 16 == 0 && C <= 64, "the chunk's tokens: one m64 of U");
  using Weights = tile::ColumnBlocks<TIn, 64, kBlocks>; // W [64][K']
  using Keys = tile::ColumnBlocks<TIn, C, kBlocks>;     // Kd [C][K']
  using Updates0 = tile::SharedTile<TIn, C, kWgmmaWalkColumns>;
  using Last = tile::SharedTile<float, 1, kStateRows>;
  using StateT = tile::ColumnBlocks<TIn, kWgmmaWalkColumns, kBlocks>;
  using UpdatesT = tile::ColumnBlocks<TIn, kWgmmaWalkColumns, 1>; // [16][C]
  using Pairwise = tile::ColumnBlocks<TIn, 64, 1>;                // B [64][C]
  struct Stage {
    alignas(1024) TIn w[Weights::kElements];
    alignas(1024) TIn kd[Keys::kElements];
    alignas(16) TIn u0[Updates0::kElements];
    alignas(16) float last[Last::kElements];
    unsigned long long loaded; // the stage's TMA boxes (WorkspaceRows)
  };
  /// The output's operands of a chunk: Qd [64][K'] and B, zeros past it.
  struct OutputStage {
    alignas(1024) TIn qd[Weights::kElements];
    alignas(1024) TIn pairwise[Pairwise::kElements];
  };
  Stage stages[2];
  alignas(1024) TIn state[StateT::kElements];
  alignas(1024) TIn updates[UpdatesT::kElements];
};

/// The fused walk's: the walk's, two stages of the output's operands, and
/// a second staged state: the output's Qd·S still reads a chunk's while
/// the next chunk's is staged (odd chunks use this one).
template <int K, int C, typename TIn>
struct WgmmaWalkOutputShared : WgmmaWalkShared<K, C, TIn> {
  using Walk = WgmmaWalkShared<K, C, TIn>;
  typename Walk::OutputStage outputs[2];
  alignas(1024) TIn state_odd[Walk::StateT::kElements];
};

/// The workspace as rows of K elements of TIn, for TMA: a chunk's W and Kd
/// and its decayed queries each start on a row when both tiles' sizes are
/// whole rows (`kFits`), and `prepare` leaves zeros in their rows past a
/// tail chunk's tokens, so a box of C rows is what the tensor cores take.
/// The host's map (kdaWorkspaceRowsMap): extents {K, kRows, 1}, 128-byte
/// swizzle, boxes of 64 features by C rows.
template <int K, int V, int C, typename TIn> struct WorkspaceRows {
  static constexpr long long kRowBytes = K * (long long)sizeof(TIn);
  static constexpr bool kFits =
      sizeof(TIn) == 2 && K >= 64 && K % 8 == 0 &&
      ChunkTiles<K, V, C, TIn>::kFloats * 4 % kRowBytes == 0 &&
      BackwardTiles<K, V, C, TIn>::kFloats * 4 % kRowBytes == 0;

  /// The row `operand` (inside `workspace`) starts on.
  static __device__ __forceinline__ int row(const float *workspace,
                                            const TIn *operand) {
    return static_cast<int>((reinterpret_cast<const char *>(operand) -
                             reinterpret_cast<const char *>(workspace)) /
                            kRowBytes);
  }

  /// Issues the boxes of a chunk's C rows from `row` into `blocks` (column
  /// blocks of 64 features), their bytes announced on `barrier` by the
  /// caller.
  template <typename Blocks>
  static __device__ __forceinline__ void
  load(const Blocks &blocks, const arch::TensorMap &map, int row,
       unsigned long long *barrier) {
#pragma unroll
    for (int b = 0; b < Blocks::kCols / 64; ++b) {
      const int coords[3] = {64 * b, row, 0};
      arch::tma_load<3>(blocks.block(b), map, coords, barrier);
    }
  }

  /// The bytes `load` brings into `Blocks`.
  template <typename Blocks>
  static __device__ __forceinline__ constexpr unsigned bytes() {
    return Blocks::kCols / 64 * C * 128;
  }
};

/// rows x cols of a row-major source (pitch in elements) into column
/// blocks, zeros beyond: one cp.async a 16-byte chunk.
template <tile::Alignment Align, typename Blocks>
__device__ __forceinline__ void
load_blocks_async(const Blocks &blocks, const typename Blocks::Element *source,
                  long long pitch, int rows, int cols) {
  using Block = typename Blocks::Block;
  for (int b = 0; b < Blocks::kCols / 64; ++b)
    tile::load_tile_async<Align>(Block{blocks.block(b)}, source + 64 * b, pitch,
                                 rows, cols - 64 * b);
}

/// Issues acc (+)= A·S over the state's K' rows: A [64][K'] and the staged
/// state [16][K'] K-major in column blocks (tile::issue_abt).
template <typename Acc, typename T, typename StateT>
__device__ __forceinline__ void
multiply_by_state(Acc &acc, const T *a, const StateT &stateT, bool accumulate) {
  using ABlock = T[64 * 64];
  using BBlock = T[StateT::Block::kElements];
  tile::issue_abt<StateT::kCols / 64>(
      acc, reinterpret_cast<const ABlock *>(a), 0,
      reinterpret_cast<const BBlock *>(stateT.data), accumulate);
}

/// Issues acc (+)= Aᵀ·R over the chunk's C tokens: A [C][64·…] MN-major
/// in column blocks from `a` (the block of acc's 64 rows), R the staged
/// [16][C] rows K-major.
template <int C, typename T, typename Acc, typename RowsT>
__device__ __forceinline__ void
multiply_transposed(Acc &acc, const T *a, const RowsT &rows, bool accumulate) {
#pragma unroll
  for (int k = 0; k < C / 16; ++k)
    // 16 tokens: two 1024-byte atoms down the column block.
    arch::wgmma_ss_a_transposed<T>(
        tile::wgmma_accumulators(acc),
        arch::wgmma_descriptor(a + 16 * 64 * k, C * 128, 1024),
        arch::wgmma_descriptor(rows.block(0) + 16 * k, 16, 1024),
        accumulate || k > 0);
}

/// Issues out = Qd·S + B·U for the chunk's tokens (m64n16: Qd's rows past
/// the chunk are zeros), S and U the staged, transposed operands of the
/// walk's own products; the caller fences, commits and waits.
template <int C, typename Out, typename Stage, typename StateT,
          typename UpdatesT>
__device__ __forceinline__ void issue_output(Out &out, const Stage &stage,
                                             const StateT &stateT,
                                             const UpdatesT &updatesT) {
  multiply_by_state(out, stage.qd, stateT, /*accumulate=*/false);
#pragma unroll
  for (int k = 0; k < C / 16; ++k)
    arch::wgmma_ss<typename StateT::Element>(
        tile::wgmma_accumulators(out),
        arch::wgmma_descriptor(&stage.pairwise[16 * k], 16, 1024),
        arch::wgmma_descriptor(updatesT.block(0) + 16 * k, 16, 1024));
}

/// The wgmma walk: grid (WalkAt's, ceil(V / 16)), one warpgroup, dynamic
/// shared memory sizeof(WgmmaWalkShared) + 1024 (with `Output`,
/// sizeof(WgmmaWalkOutputShared) + 1024). With `Tma`, W, Kd and Qd arrive
/// by TMA through `rows` (WorkspaceRows' map), the rest by cp.async.
template <int K, int V, int C, bool Output, bool Tma, typename TIn,
          typename TGate, typename TBeta>
__device__ void propagate_wgmma(const ForwardParams<TIn, TGate, TBeta> &p,
                                const WalkAt &walk,
                                const arch::TensorMap *rows) {
  using Rows = WorkspaceRows<K, V, C, TIn>;
  static_assert(!Tma || Rows::kFits, "the tiles as whole rows of K");
  using Tiles = ChunkTiles<K, V, C, TIn>;
  using Saved = BackwardTiles<K, V, C, TIn>;
  using Shared = typename Select<Output, WgmmaWalkOutputShared<K, C, TIn>,
                                 WgmmaWalkShared<K, C, TIn>>::Type;
  constexpr int VB = kWgmmaWalkColumns, kBlocks = Shared::kBlocks;
  constexpr tile::Alignment align = Tiles::kAlignment;
  Shared &shared = tile::aligned_shared<Shared>();
  const typename Shared::UpdatesT updatesT{shared.updates};
  const int v0 = blockIdx.y * VB;
  const int width = V - v0 < VB ? V - v0 : VB;
  const long long stateBase = (long long)walk.state * K * V + v0;
  const int warp = threadIdx.x / 32;

  WalkState<K, V, TIn> state;
  state.load(p.initial_state ? p.initial_state + stateBase : nullptr, width);

  if constexpr (Tma) {
    // Rows C.. of the 64-row tiles are never loaded (a box brings C, the
    // m64 product reads 64); the barriers are ready before the first box
    // is issued.
    for (int stage = 0; stage < 2; ++stage) {
      tile::clear_rows_from(typename Shared::Weights{shared.stages[stage].w},
                            C);
      if constexpr (Output)
        tile::clear_rows_from(
            typename Shared::Weights{shared.outputs[stage].qd}, C);
      if (threadIdx.x == 0)
        arch::mbarrier_init(&shared.stages[stage].loaded, 1);
    }
    __syncthreads();
  }

  auto issue = [&](int j, int stage) {
    const int L = walk.tokens<C>(j);
    const float *tiles =
        Tiles::at(p.workspace, walk.first + j, walk.column, walk.columns);
    const TIn *operands = Tiles::operands(tiles);
    [[maybe_unused]] const TIn *saved =
        Saved::at(p.workspace, walk.first + j, walk.column, walk.columns,
                  chunk_slots<C>(p));
    typename Shared::Stage &to = shared.stages[stage];
    const typename Shared::Weights w{to.w};
    const typename Shared::Keys kd{to.kd};
    if constexpr (Tma) {
      if (threadIdx.x == 0) {
        unsigned bytes = Rows::template bytes<typename Shared::Weights>() +
                         Rows::template bytes<typename Shared::Keys>();
        if constexpr (Output)
          bytes += Rows::template bytes<typename Shared::Weights>();
        arch::mbarrier_arrive_expect_tx(&to.loaded, bytes);
        Rows::load(w, *rows, Rows::row(p.workspace, operands + Tiles::kW),
                   &to.loaded);
        Rows::load(kd, *rows, Rows::row(p.workspace, operands + Tiles::kKd),
                   &to.loaded);
        if constexpr (Output)
          Rows::load(typename Shared::Weights{shared.outputs[stage].qd}, *rows,
                     Rows::row(p.workspace, saved + Saved::kQd), &to.loaded);
      }
    } else {
      load_blocks_async<align>(w, operands + Tiles::kW, K, L, K);
      load_blocks_async<align>(kd, operands + Tiles::kKd, K, L, K);
      if constexpr (Output)
        load_blocks_async<align>(
            typename Shared::Weights{shared.outputs[stage].qd},
            saved + Saved::kQd, K, L, K);
    }
    tile::load_tile_async<align>(typename Shared::Updates0{to.u0},
                                 operands + Tiles::kU + v0, V, L, width);
    tile::load_tile_async<align>(typename Shared::Last{to.last},
                                 tiles + Tiles::kLast, K, 1, K);
    if constexpr (Output)
      load_blocks_async<align>(
          typename Shared::Pairwise{shared.outputs[stage].pairwise},
          operands + Tiles::kB, C, L, L);
    arch::cp_async_commit();
  };

  if (walk.chunks > 0)
    issue(0, 0);
  for (int j = 0; j < walk.chunks; ++j) {
    const int L = walk.tokens<C>(j), slot = walk.first + j;
    const typename Shared::Stage &from = shared.stages[j % 2];
    TIn *updates = Tiles::operands(Tiles::at(p.workspace, slot, walk.column,
                                             walk.columns)) +
                   Tiles::kU + v0;
    // The walk's products wait for their operands before the next chunk
    // stages its state; the output's wait at the chunk's end.
    typename Shared::StateT stateT{shared.state};
    if constexpr (Output)
      if (j % 2)
        stateT.data = shared.state_odd;
    TIn *boundary =
        p.boundaries
            ? p.boundaries +
                  ((long long)slot * walk.columns + walk.column) * K * V + v0
            : nullptr;
    state.store(boundary, width);
    state.stage(stateT);
    if constexpr (Tma)
      arch::mbarrier_wait(&shared.stages[j % 2].loaded, j / 2 % 2);
    arch::cp_async_wait<0>();
    arch::fence_proxy_async_shared();
    // The chunk's operands and the rounded state are in place for the
    // async proxy; every thread is done with the other stage's buffers.
    __syncthreads();

    // U = U0 − W·S over the depth K' (W's rows past the chunk are zeros);
    // the next chunk's copies are issued while the tensor cores run it.
    tile::WarpTile<TIn, 16, VB> product;
    tile::fence_for(product);
    multiply_by_state(product, from.w, stateT, /*accumulate=*/false);
    arch::wgmma_commit();
    if (j + 1 < walk.chunks)
      issue(j + 1, (j + 1) % 2);
    arch::wgmma_wait<0>();
    arch::wgmma_fence_operand(tile::wgmma_accumulators(product));
    const typename Shared::Updates0 u0{const_cast<TIn *>(from.u0)};
    product.for_each_pair([&](int r, int c, float x0, float x1) {
      const int i = 16 * warp + r;
      if (i >= C)
        return; // rows of the m64 past the chunk size
      const float first = to_float(u0(i, c)) - x0,
                  second = to_float(u0(i, c + 1)) - x1;
      updatesT(c, i) = from_float<TIn>(first);
      updatesT(c + 1, i) = from_float<TIn>(second);
      if (i < L && c < width)
        tile::store_pair(updates + (long long)i * V + c, first, second,
                         c + 1 < width);
    });
    arch::fence_proxy_async_shared();
    __syncthreads(); // the rounded updates are in place

    // S ← e^Γlast ⊙ S + Kdᵀ·U over the chunk's C tokens (zeros past L).
    state.decay(typename Shared::Last{const_cast<float *>(from.last)});
    tile::WarpTile<TIn, 16, VB> out;
    if constexpr (Output)
      arch::wgmma_fence_operand(tile::wgmma_accumulators(out));
    arch::wgmma_fence();
#pragma unroll
    for (int m = 0; m < kBlocks; ++m)
      multiply_transposed<C>(state.tiles[m],
                             from.kd + m * Shared::Keys::Block::kElements,
                             updatesT, /*accumulate=*/true);
    if constexpr (Output)
      issue_output<C>(out, shared.outputs[j % 2], stateT, updatesT);
    arch::wgmma_commit();
    arch::wgmma_wait<0>();
    state.fence();
    if constexpr (Output) {
      arch::wgmma_fence_operand(tile::wgmma_accumulators(out));
      const int t0 = walk.t0 + j * C;
      out.for_each_pair([&](int r, int c, float x0, float x1) {
        const int i = 16 * warp + r;
        if (i < L && c < width)
          tile::store_pair(p.output +
                               p.output_strides.offset(walk.b, t0 + i, walk.h) +
                               v0 + c,
                           p.scale * x0, p.scale * x1, c + 1 < width);
      });
    }
  }

  state.store(p.final_state ? p.final_state + stateBase : nullptr, width);
}

} // namespace kda
} // namespace rudnn
