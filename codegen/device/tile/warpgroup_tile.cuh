//===- tile/warpgroup_tile.cuh - Warp tiles as wgmma accumulators ---------===//
//
// A warp tile of 16 rows holds, in mma.m16n8's accumulator layout, exactly
// what one warp of a warpgroup holds of an m64nNk16's accumulators: its 16
// of the 64 rows by the N columns. Kernels keep their wgmma results in warp
// tiles, so the tile layer's epilogues (pairs, fragments) serve them too.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/arch/wgmma.cuh"
#include "rudnn/tile/warp_tile.cuh"

namespace rudnn {
namespace tile {

/// A warp tile's accumulators (this warp's 16 of the warpgroup's 64 rows)
/// as one m64nNk16 holds them, N the tile's columns.
template <typename Tile>
__device__ __forceinline__ float (
    &wgmma_accumulators(Tile &tile))[Tile::kColumns / 2] {
  static_assert(Tile::kRows == 16, "a warp's share of a warpgroup's rows");
  return *reinterpret_cast<float(*)[Tile::kColumns / 2]>(&tile.acc[0][0][0]);
}

/// The accumulators pinned where they stand, then the warpgroup's fence:
/// every register a wgmma issued next reads is written before it.
template <typename Acc> __device__ __forceinline__ void fence_for(Acc &acc) {
  arch::wgmma_fence_operand(wgmma_accumulators(acc));
  arch::wgmma_fence();
}

/// Issues acc (+)= A·Bᵀ over 64·KBlocks depths without fencing: A the 64
/// rows from `aRow` of a tile, B the first N rows of another (N = the
/// accumulators' columns), both K-major (each tile's column blocks of
/// `…Block` elements), one m64nNk16 a 16-deep step; the first step adds
/// to acc only when `accumulate` (else acc's registers are not read).
template <int KBlocks, int ABlock, int BBlock, typename T, typename Acc>
__device__ __forceinline__ void issue_abt(Acc &acc, const T (*a)[ABlock],
                                          int aRow, const T (*b)[BBlock],
                                          bool accumulate = true) {
#pragma unroll
  for (int k = 0; k < 4 * KBlocks; ++k) {
    // 16 columns of the depth: 32 bytes into a 128-byte row.
    const unsigned long long da =
        arch::wgmma_descriptor(&a[k / 4][64 * aRow + 16 * (k % 4)], 16, 1024);
    const unsigned long long db =
        arch::wgmma_descriptor(&b[k / 4][16 * (k % 4)], 16, 1024);
    arch::wgmma_ss<T>(wgmma_accumulators(acc), da, db, accumulate || k > 0);
  }
}

} // namespace tile
} // namespace rudnn
