//===- tile/warpgroup_gemm.cuh - One block's GEMM tile on wgmma (sm_90a) --===//
//
// A 128 x 128 tile of C = Σ_k A(m, k)·B(n, k) for a block of two
// warpgroups, each taking 64 rows by m64n128k16 (fp32: m64n128k8 in TF32).
// Both operands are stored K-major in shared tiles of 128-byte rows (64
// 16-bit or 32 fp32 elements deep, the 128-byte swizzle wgmma reads),
// filled by cp.async from rows the caller gathers, as the
// tile layer's other GEMMs are; kStages buffers keep three stages' copies
// in flight while the tensor cores take a fourth. cp.async writes through
// the generic proxy: each thread fences its copies for the async proxy
// before the barrier that hands the stage to wgmma.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/arch/cp_async.cuh"
#include "rudnn/arch/proxy_fence.cuh"
#include "rudnn/arch/wgmma.cuh"
#include "rudnn/shared.cuh"
#include "rudnn/tile/shared_tile.cuh"

namespace rudnn {
namespace tile {

/// The dynamic shared memory as a `Shared` from a 1024-byte aligned
/// address (the host adds the slack): wgmma and TMA read the swizzle from
/// address bits.
template <typename Shared> __device__ __forceinline__ Shared &aligned_shared() {
  RUDNN_DYNAMIC_SHARED(unsigned char, raw);
  return *arch::swizzle_aligned<Shared>(raw);
}

template <typename T> struct WarpgroupGemm {
  static constexpr int kRows = 128, kCols = 128, kThreads = 256;
  /// A stage's depth: one 128-byte row; an instruction's: 32 bytes of it.
  static constexpr int kDepth = 128 / sizeof(T),
                       kInstructionDepth = 32 / sizeof(T);
  static constexpr int kStages = 5;
  using ATile = SharedTile<T, kRows, kDepth>;
  using BTile = SharedTile<T, kCols, kDepth>;
  static_assert(ATile::kChunks == 8 && ATile::kSwizzled,
                "rows of 128 bytes: the 128-byte swizzle");

  /// The stages' tiles, each 1024-byte aligned (aligned_shared).
  struct Shared {
    T a[kStages][ATile::kElements];
    T b[kStages][BTile::kElements];
  };
  /// Dynamic shared memory a block asks for: the stages and the slack
  /// that aligns them.
  static constexpr int kSharedBytes = sizeof(Shared) + 1024;

  /// This thread's accumulators: its warp's 16 rows of its warpgroup's 64
  /// by the 128 columns, as m64n128 leaves them.
  struct Product {
    float d[kCols / 2];

    __device__ __forceinline__ void clear() {
#pragma unroll
      for (int i = 0; i < kCols / 2; ++i)
        d[i] = 0.0f;
    }

    /// Visits the tile as runs of four columns, visit(r, c, v) with v the
    /// values at (r, c .. c + 3), c a multiple of 4: lanes 2i and 2i + 1
    /// trade the halves of their column pairs (one shuffle a value), so
    /// each run is stored as one 16-byte vector. Warp-collective.
    template <typename Visit>
    __device__ __forceinline__ void for_each_quad(Visit visit) const {
      const int lane = threadIdx.x % 32, odd = lane % 2;
      const int row = 64 * (threadIdx.x / 128) + 16 * (threadIdx.x / 32 % 4) +
                      lane / 4 + 8 * odd;
#pragma unroll
      for (int j = 0; j < kCols / 8; ++j) {
        // Even lanes keep row g and send row g + 8; odd lanes the reverse.
        const float *mine = &d[4 * j];
        const float send0 = odd ? mine[0] : mine[2],
                    send1 = odd ? mine[1] : mine[3];
        const float got0 = __shfl_xor_sync(0xffffffffu, send0, 1),
                    got1 = __shfl_xor_sync(0xffffffffu, send1, 1);
        const float v[4] = {odd ? got0 : mine[0], odd ? got1 : mine[1],
                            odd ? mine[2] : got0, odd ? mine[3] : got1};
        visit(row, 8 * j + 2 * (lane % 4 - odd), v);
      }
    }
  };

  /// product += one instruction's depth of the A and B descriptors name.
  static __device__ __forceinline__ void
  multiply(Product &product, unsigned long long a, unsigned long long b) {
    if constexpr (sizeof(T) == 4)
      arch::wgmma_ss_tf32(product.d, a, b);
    else
      arch::wgmma_ss<T>(product.d, a, b);
  }

  /// product += the block tile over `steps` stages: issue_a(tile, step)
  /// and issue_b(tile, step) start copying stage `step`'s operands into
  /// `tile` (without committing). Block-collective; ends on a barrier,
  /// the buffers free for the next tile.
  template <typename IssueA, typename IssueB>
  static __device__ __forceinline__ void run(Product &product, Shared &shared,
                                             int steps, IssueA issue_a,
                                             IssueB issue_b) {
    constexpr int kAhead = kStages - 2; // stages in flight
    auto issue = [&](int step) {
      if (step < steps) {
        issue_a(ATile{shared.a[step % kStages]}, step);
        issue_b(BTile{shared.b[step % kStages]}, step);
      }
      arch::cp_async_commit(); // empty past the end: keeps the count
    };
    for (int step = 0; step < kAhead; ++step)
      issue(step);
    const int first_row = 64 * (threadIdx.x / 128); // the warpgroup's
    for (int step = 0; step < steps; ++step) {
      arch::cp_async_wait<kAhead - 1>();
      arch::fence_proxy_async_shared();
      // Every thread's copies of this stage have landed, and every
      // warpgroup has retired the products two stages back: their
      // buffers take the copies kAhead stages on.
      __syncthreads();
      issue(step + kAhead);
      const T *a = shared.a[step % kStages], *b = shared.b[step % kStages];
      arch::wgmma_fence_operand(product.d);
      arch::wgmma_fence();
#pragma unroll
      for (int k = 0; k < kDepth / kInstructionDepth; ++k)
        // An instruction's depth: 32 bytes into each 128-byte row.
        multiply(product,
                 arch::wgmma_descriptor(
                     &a[kDepth * first_row + kInstructionDepth * k], 16, 1024),
                 arch::wgmma_descriptor(&b[kInstructionDepth * k], 16, 1024));
      arch::wgmma_commit();
      arch::wgmma_wait<1>();
    }
    arch::wgmma_wait<0>();
    arch::wgmma_fence_operand(product.d);
    __syncthreads();
  }
};

} // namespace tile
} // namespace rudnn
