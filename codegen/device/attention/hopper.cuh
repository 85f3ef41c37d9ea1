//===- attention/hopper.cuh - What the sm_90a attention kernels share -----===//
//
// Tiles in shared memory as TMA writes and wgmma reads them: column blocks
// of 64 elements (128-byte rows, 128-byte swizzle), a tile of R rows being
// `Blocks` such blocks of R x 64 each, 1024-byte aligned. The two products
// every kernel is made of run on a warpgroup's 64 rows: A·Bᵀ with both
// operands such tiles (the head dim contiguous in both), and A·B with A
// from a warp tile's accumulators and B a tile read MN-major (its rows the
// depth).
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/arch/tma.cuh"
#include "rudnn/arch/wgmma.cuh"
#include "rudnn/shared.cuh"
#include "rudnn/tile/warp_tile.cuh"
#include "rudnn/tile/warpgroup_gemm.cuh"
#include "rudnn/tile/warpgroup_tile.cuh"

namespace rudnn {
namespace attention {

using tile::fence_for;
using tile::issue_abt;
using tile::wgmma_accumulators;

/// acc += A·Bᵀ as issue_abt, fencing the warpgroup's registers first.
template <int KBlocks, int ABlock, int BBlock, typename T, typename Acc>
__device__ __forceinline__ void wgmma_abt(Acc &acc, const T (*a)[ABlock],
                                          int aRow, const T (*b)[BBlock]) {
  fence_for(acc);
  issue_abt<KBlocks>(acc, a, aRow, b);
}

/// A warp tile's accumulators (this warp's 16 rows of the warpgroup's 64)
/// rounded to T as wgmma's register A operand, one 16-deep step a row, each
/// pinned where it is written.
template <typename Tile>
__device__ __forceinline__ void
a_operand(const Tile &a, unsigned (&fa)[Tile::kColumns / 16][1][4]) {
#pragma unroll
  for (int k = 0; k < Tile::kColumns / 16; ++k) {
    a.a_fragments(fa[k], 16 * k);
    arch::wgmma_fence_operand(fa[k][0]);
  }
}

/// Issues acc += A·B without fencing: A in registers (a_operand), B a tile
/// whose rows are the depth (16 a row of `fa`) read MN-major, its column
/// blocks the accumulators'.
template <int BBlock, typename T, typename Acc, int Steps>
__device__ __forceinline__ void
issue_ab(Acc &acc, const unsigned (&fa)[Steps][1][4], const T (*b)[BBlock]) {
  constexpr int BRows = BBlock / 64;
  static_assert(Steps * 16 == BRows, "A's columns are B's rows");
#pragma unroll
  for (int k = 0; k < Steps; ++k) {
    // 16 rows: two 1024-byte atoms down each column block, the blocks
    // BRows · 128 bytes apart.
    const unsigned long long db =
        arch::wgmma_descriptor(&b[0][16 * 64 * k], BRows * 128, 1024);
    arch::wgmma_rs<T>(wgmma_accumulators(acc), fa[k][0], db);
  }
}

/// acc += A·B: A the warp tile `a` (its accumulators rounded to T), B as
/// issue_ab. Fences the warpgroup's registers itself: A's fragments are
/// all written before the fence, so no wgmma reads a register written
/// after it (which ptxas would repair by serializing).
template <int BBlock, typename T, typename Acc, typename Tile>
__device__ __forceinline__ void wgmma_ab(Acc &acc, const Tile &a,
                                         const T (*b)[BBlock]) {
  unsigned fa[Tile::kColumns / 16][1][4];
  a_operand(a, fa);
  fence_for(acc);
  issue_ab(acc, fa, b);
}

/// The TMA coordinates of a 64-column block of rows from `row`: padded
/// maps are (dim, time, head, batch), packed ones (dim, row, head).
template <bool Packed>
__device__ __forceinline__ void
load_rows(void *shared, const arch::TensorMap &map, int column, int row,
          int head, int batch, unsigned long long *barrier) {
  if constexpr (Packed) {
    const int coords[3] = {column, row, head};
    arch::tma_load<3>(shared, map, coords, barrier);
  } else {
    const int coords[4] = {column, row, head, batch};
    arch::tma_load<4>(shared, map, coords, barrier);
  }
}

/// Loads `Blocks` column blocks of rows from `row` into `tile`, announced
/// on `barrier`.
template <bool Packed, int Blocks, int Block, typename T>
__device__ __forceinline__ void
load_tile(T (*tile)[Block], const arch::TensorMap &map, int row, int head,
          int batch, unsigned long long *barrier) {
#pragma unroll
  for (int c = 0; c < Blocks; ++c)
    load_rows<Packed>(tile[c], map, 64 * c, row, head, batch, barrier);
}

using tile::aligned_shared;

/// The mbarriers of a block with resident rows and a ring of `Stages` of
/// streamed ones: heads (D wide) and values (E wide) land on barriers of
/// their own, so the first product starts while the values are on their
/// way, and are released apart, so the next heads load while the values
/// are still read; the `empty` ones take an arrival from each of the
/// `ConsumerWarps`.
template <int Stages = 2, int ConsumerWarps = 8> struct HopperBarriers {
  unsigned long long resident_full, resident_empty, heads_full[Stages],
      values_full[Stages], heads_empty[Stages], values_empty[Stages];

  __device__ __forceinline__ void init() {
    arch::mbarrier_init(&resident_full, 1);
    arch::mbarrier_init(&resident_empty, ConsumerWarps);
    for (int stage = 0; stage < Stages; ++stage) {
      arch::mbarrier_init(&heads_full[stage], 1);
      arch::mbarrier_init(&values_full[stage], 1);
      arch::mbarrier_init(&heads_empty[stage], ConsumerWarps);
      arch::mbarrier_init(&values_empty[stage], ConsumerWarps);
    }
  }
};

/// This warp's arrival on `barrier` once every lane is past its waits: a
/// lane left behind would wait for a phase two flips gone.
__device__ __forceinline__ void warp_arrive(unsigned long long *barrier) {
  __syncwarp();
  if (threadIdx.x % 32 == 0)
    arch::mbarrier_arrive(barrier);
}

/// Initialises `barriers`, then runs `produce` on warp 0 (its warpgroup's
/// registers given up) and `consume` on the consumer warpgroups after it:
/// two (a 384-thread block, 240 registers each) or three (512 threads, 160
/// each).
template <typename T, int Stages, int ConsumerWarps, typename Produce,
          typename Consume>
__device__ __forceinline__ void
run_warp_specialized(HopperBarriers<Stages, ConsumerWarps> &barriers,
                     Produce produce, Consume consume) {
  static_assert(ConsumerWarps == 8 || ConsumerWarps == 12,
                "two or three consumer warpgroups");
  static_assert(sizeof(T) == 2, "the Hopper path multiplies 16-bit inputs");
#if !defined(__RUDNN_EMULATION__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
  static_assert(sizeof(T) == 0, "the Hopper path is compiled for sm_90a");
#endif
  if (threadIdx.x == 0)
    barriers.init();
  __syncthreads();
  if (threadIdx.x < 128) {
    arch::set_register_budget<24, false>();
    if (threadIdx.x < 32)
      produce();
  } else {
    arch::set_register_budget<ConsumerWarps == 8 ? 240 : 160, true>();
    consume();
  }
}

} // namespace attention
} // namespace rudnn
