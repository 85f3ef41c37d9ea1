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

} // namespace tile
} // namespace rudnn
