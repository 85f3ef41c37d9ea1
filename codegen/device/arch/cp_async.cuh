//===- arch/cp_async.cuh - Asynchronous global-to-shared copies (sm_80+) --===//

#pragma once

namespace rudnn {
namespace arch {

/// Starts a 16-byte copy; both addresses 16-byte aligned.
__device__ __forceinline__ void cp_async_16(void *shared, const void *global) {
  unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(address),
               "l"(global));
}

/// Closes the group of copies started since the last commit.
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::);
}

/// Waits until at most `Pending` committed groups are still in flight.
template <int Pending> __device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
}

} // namespace arch
} // namespace rudnn
