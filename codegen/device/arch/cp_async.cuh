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
  // In flight until a wait retires its group: the destination is poison
  // until then (rudnn_emu_async.h).
  emulated::requireAligned(shared, 16, "cp.async: shared address misaligned");
  emulated::requireAligned(global, 16, "cp.async: global address misaligned");
  emulated::requireShared(shared, 16,
                          "cp.async: destination is not shared memory");
  if (rudnn_emu_table()->isShared(global, 16))
    rudnn_emu_trap("cp.async: source is shared memory, not global");
  rudnn_emu_cp_async(shared, global, 16, 16);
#else
  unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(address),
               "l"(global));
#endif
}

/// Starts a 16-byte copy of which only the first `bytes` (0 to 16) are
/// read; the rest of the destination is zero-filled (a tile's edge).
__device__ __forceinline__ void
cp_async_16_zfill(void *shared, const void *global, unsigned bytes) {
#ifdef __RUDNN_EMULATION__
  emulated::requireAligned(shared, 16, "cp.async: shared address misaligned");
  emulated::requireAligned(global, 16, "cp.async: global address misaligned");
  emulated::requireShared(shared, 16,
                          "cp.async: destination is not shared memory");
  if (bytes > 16)
    rudnn_emu_trap("cp.async: source size above the copy size");
  rudnn_emu_cp_async(shared, global, 16, bytes);
#else
  unsigned address = static_cast<unsigned>(__cvta_generic_to_shared(shared));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(address),
               "l"(global), "r"(bytes));
#endif
}

/// Closes the group of copies started since the last commit.
__device__ __forceinline__ void cp_async_commit() {
#ifdef __RUDNN_EMULATION__
  rudnn_emu_cp_async_commit();
#else
  asm volatile("cp.async.commit_group;\n" ::);
#endif
}

/// Waits until at most `Pending` committed groups are still in flight.
template <int Pending> __device__ __forceinline__ void cp_async_wait() {
#ifdef __RUDNN_EMULATION__
  rudnn_emu_cp_async_wait(Pending);
#else
  asm volatile("cp.async.wait_group %0;\n" ::"n"(Pending));
#endif
}

} // namespace arch
} // namespace rudnn
