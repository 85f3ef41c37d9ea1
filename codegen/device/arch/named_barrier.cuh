//===- arch/named_barrier.cuh - Barriers over some warps of a block -------===//
//
// A block has 16 hardware barriers; __syncthreads is barrier 0 over every
// thread. The others (ids 1 to 15) complete when a stated number of threads
// (a multiple of 32, whole warps) have arrived: warpgroups hand work to each
// other through them without stopping the rest of the block, as a producer
// that arrives and goes on while its consumer waits.
//
//===----------------------------------------------------------------------===//

#pragma once

namespace rudnn {
namespace arch {

/// Arrives at barrier `id` (1 to 15) and waits until `threads` threads
/// have arrived there (bar.sync): their earlier memory accesses are then
/// visible to this thread.
__device__ __forceinline__ void named_barrier_sync(unsigned id,
                                                   unsigned threads) {
#ifdef __RUDNN_EMULATION__
  rudnn_emu_named_barrier(id, threads, 1,
                          rudnn_emu_site{"bar.sync", __FILE__, __LINE__});
#else
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
#endif
}

/// Arrives at barrier `id` without waiting (bar.arrive): this thread's
/// earlier memory accesses are visible to the threads that wait there.
__device__ __forceinline__ void named_barrier_arrive(unsigned id,
                                                     unsigned threads) {
#ifdef __RUDNN_EMULATION__
  rudnn_emu_named_barrier(id, threads, 0,
                          rudnn_emu_site{"bar.arrive", __FILE__, __LINE__});
#else
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
#endif
}

} // namespace arch
} // namespace rudnn
