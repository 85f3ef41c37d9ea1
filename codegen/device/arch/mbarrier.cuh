//===- arch/mbarrier.cuh - Shared-memory transaction barriers (sm_90) -----===//
//
// An mbarrier is 8 bytes of shared memory counting arrivals and, for TMA,
// transaction bytes: a phase completes when the expected threads have
// arrived and every byte announced by expect_tx has landed; waiters name the
// phase by its parity. Producer and consumer warps hand pipeline stages to
// each other through them without a block barrier.
//
//===----------------------------------------------------------------------===//

#pragma once

#ifdef __RUDNN_EMULATION__
#include "rudnn/arch/emulated_hopper.cuh"
#endif

namespace rudnn {
namespace arch {

/// Once, by one thread, before any use: `arrivals` arrive each phase. The
/// block must synchronise before other threads (or the TMA unit) use it.
__device__ __forceinline__ void mbarrier_init(unsigned long long *barrier,
                                              unsigned arrivals) {
#ifdef __RUDNN_EMULATION__
  emulated::mbarrier_init(barrier, arrivals);
#elif __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(
                   static_cast<unsigned>(__cvta_generic_to_shared(barrier))),
               "r"(arrivals));
  // The initialisation visible to the asynchronous proxy (TMA).
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::);
#endif
}

/// This thread arrives.
__device__ __forceinline__ void mbarrier_arrive(unsigned long long *barrier) {
#ifdef __RUDNN_EMULATION__
  emulated::mbarrier_arrive(barrier, 0);
#elif __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(
      static_cast<unsigned>(__cvta_generic_to_shared(barrier))));
#endif
}

/// This thread arrives and announces `bytes` the phase must also receive.
__device__ __forceinline__ void
mbarrier_arrive_expect_tx(unsigned long long *barrier, unsigned bytes) {
#ifdef __RUDNN_EMULATION__
  emulated::mbarrier_arrive(barrier, bytes);
#elif __CUDA_ARCH__ >= 900
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(
                   static_cast<unsigned>(__cvta_generic_to_shared(barrier))),
               "r"(bytes));
#endif
}

/// Waits until the phase of parity `parity` has completed.
__device__ __forceinline__ void mbarrier_wait(unsigned long long *barrier,
                                              unsigned parity) {
#ifdef __RUDNN_EMULATION__
  emulated::mbarrier_wait(barrier, parity);
#elif __CUDA_ARCH__ >= 900
  const unsigned address =
      static_cast<unsigned>(__cvta_generic_to_shared(barrier));
  unsigned done = 0;
  while (!done)
    asm volatile("{\n"
                 "  .reg .pred complete;\n"
                 "  mbarrier.try_wait.parity.shared::cta.b64 complete, [%1], "
                 "%2;\n"
                 "  selp.u32 %0, 1, 0, complete;\n"
                 "}\n"
                 : "=r"(done)
                 : "r"(address), "r"(parity)
                 : "memory");
#endif
}

} // namespace arch
} // namespace rudnn
