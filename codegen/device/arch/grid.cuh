//===- arch/grid.cuh - Grid-wide barriers of cooperative launches ---------===//
//
// A persistent kernel whose blocks exchange data every step (a recurrence's
// hidden state) meets at a grid barrier. Only a cooperative launch, whose
// blocks are all resident at once, may use it. On the GPU the barrier is
// one word of global memory: each barrier adds 2^31 to it in total (the
// first block 2^31 − (blocks − 1), every other block 1), so its top bit
// flips exactly when the last block arrives, whatever multiple of 2^31 it
// held before. Under emulation every block has its own OS thread and the
// executor provides the barrier.
//
//===----------------------------------------------------------------------===//

#pragma once

namespace rudnn {
namespace arch {

/// Every thread of every block calls it; returns once all have, with the
/// grid's global-memory writes before it visible to all after it.
/// `barrier` holds 0 (or any multiple of 2^31) before the first call of
/// the launch; the kernel owns it until the launch ends.
__device__ __forceinline__ void grid_sync(unsigned *barrier) {
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
#ifdef __RUDNN_EMULATION__
    (void)barrier;
    __threadfence();
    rudnn_emu_grid_sync();
    __threadfence();
#else
    const unsigned blocks = gridDim.x * gridDim.y * gridDim.z;
    const bool first = blockIdx.x == 0 && blockIdx.y == 0 && blockIdx.z == 0;
    const unsigned add = first ? 0x80000000u - (blocks - 1) : 1u;
    unsigned before, now;
    // Release: the block's writes (ordered before by the block barrier)
    // reach the others; acquire: theirs reach this block.
    asm volatile("atom.add.release.gpu.u32 %0, [%1], %2;"
                 : "=r"(before)
                 : "l"(barrier), "r"(add)
                 : "memory");
    do {
      asm volatile("ld.acquire.gpu.u32 %0, [%1];"
                   : "=r"(now)
                   : "l"(barrier)
                   : "memory");
    } while (((before ^ now) & 0x80000000u) == 0);
#endif
  }
  __syncthreads();
}

} // namespace arch
} // namespace rudnn
