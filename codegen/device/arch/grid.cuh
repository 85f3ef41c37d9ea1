//===- arch/grid.cuh - Grid-wide barriers of cooperative launches ---------===//
//
// A persistent kernel whose blocks exchange data every step (a recurrence's
// hidden state) meets at a grid barrier. Only a cooperative launch, whose
// blocks are all resident at once, may use it: on the GPU the driver then
// provides the barrier's memory, under emulation every block has its own
// OS thread.
//
//===----------------------------------------------------------------------===//

#pragma once

#ifndef __RUDNN_EMULATION__
#include <cooperative_groups.h>
#endif

namespace rudnn {
namespace arch {

/// Every thread of every block calls it; returns once all have, with the
/// grid's global-memory writes before it visible to all after it.
__device__ __forceinline__ void grid_sync() {
#ifdef __RUDNN_EMULATION__
  __syncthreads();
  if (threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0) {
    __threadfence();
    rudnn_emu_grid_sync();
    __threadfence();
  }
  __syncthreads();
#else
  cooperative_groups::this_grid().sync();
#endif
}

} // namespace arch
} // namespace rudnn
