//===- arch/cp_async.cuh - Asynchronous global-to-shared copies (sm_80+) --===//

#pragma once

#ifdef __RUDNN_EMULATION__
#include "rudnn/arch/emulated.cuh"
#endif

namespace rudnn {
namespace arch {

/// Starts a 16-byte copy; both addresses 16-byte aligned.
__device__ __forceinline__ void cp_async_16(void *shared, const void *global) {
#ifdef __RUDNN_EMULATION__
  // The copy completes before it returns: one of the orders the hardware may
  // take, since only a wait makes the data visible to a correct program.
  emulated::requireAligned(shared, 16, "cp.async: shared address misaligned");
  emulated::requireAligned(global, 16, "cp.async: global address misaligned");
  std::memcpy(shared, global, 16);
#else
  unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(address),
               "l"(global));
#endif
}

/// Closes the group of copies started since the last commit.
__device__ __forceinline__ void cp_async_commit() {
#ifndef __RUDNN_EMULATION__
  // Under emulation every copy is complete already: nothing to group.
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}

/// Waits until at most `Pending` committed groups are still in flight.
template <int Pending> __device__ __forceinline__ void cp_async_wait() {
#ifndef __RUDNN_EMULATION__
  // Under emulation no copy is ever in flight, so no wait is needed.
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
#endif
}

} // namespace arch
} // namespace rudnn
