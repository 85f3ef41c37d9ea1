//===- tile/gemm.cuh - One block's tile of a GEMM -------------------------===//
//
// A 64 x 64 tile of C = Σ_k A(m, k)·B(k, n) for a block of four warps (32 x
// 32 each), the depth 32 a stage of a two-stage cp.async pipeline into
// swizzled shared tiles read by ldmatrix (fp32 on FMA, or with `Tf32` on
// tensor cores, rounded to TF32). Either operand may
// be stored with the depth along its rows or across them: A as [m][k] or
// [k][m], B as [n][k] or [k][n]; the caller gathers each stage's rows, so
// one building block serves products over gathered, strided or
// time-shifted rows alike.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/tile/copy.cuh"
#include "rudnn/tile/pipeline.cuh"
#include "rudnn/tile/shared_tile.cuh"
#include "rudnn/tile/warp_tile.cuh"

namespace rudnn {
namespace tile {

template <typename T, ALayout LayoutA, BLayout LayoutB, bool Tf32 = false>
struct BlockGemm {
  static constexpr int kRows = 64, kCols = 64, kDepth = 32, kThreads = 128;
  /// A stage of each operand: kDepth deep, stored as its layout says.
  using ATile = SharedTile<T, LayoutA == ALayout::MK ? kRows : kDepth,
                           LayoutA == ALayout::MK ? kDepth : kRows>;
  using BTile = SharedTile<T, LayoutB == BLayout::NK ? kCols : kDepth,
                           LayoutB == BLayout::NK ? kDepth : kCols>;
  using Product = WarpTile<T, 32, 32, Tf32>;

  /// The warp's rows and columns of the block's tile.
  static __device__ __forceinline__ int warp_row() {
    return threadIdx.x / 32 / 2 * 32;
  }
  static __device__ __forceinline__ int warp_col() {
    return threadIdx.x / 32 % 2 * 32;
  }

  /// product += the block tile over `steps` stages: issue_a(tile, step) and
  /// issue_b(tile, step) start copying stage `step`'s operands into `tile`
  /// (without committing). Block-collective; ends on a barrier.
  template <typename IssueA, typename IssueB>
  static __device__ __forceinline__ void run(Product &product, int steps,
                                             IssueA issue_a, IssueB issue_b) {
    __shared__ __align__(16) T a_tiles[2][ATile::kElements];
    __shared__ __align__(16) T b_tiles[2][BTile::kElements];
    two_stage_pipeline(
        steps,
        [&](int step, int stage) {
          issue_a(ATile{a_tiles[stage]}, step);
          issue_b(BTile{b_tiles[stage]}, step);
        },
        [&](int, int stage) {
#pragma unroll
          for (int k = 0; k < kDepth; k += 16)
            product.template mma<LayoutB, LayoutA>(
                ATile{a_tiles[stage]}, warp_row(), BTile{b_tiles[stage]},
                warp_col(), k);
        });
  }
};

} // namespace tile
} // namespace rudnn
