//===- arch/proxy_fence.cuh - Threads' writes seen by the async proxy -----===//
//
// wgmma and TMA stores read shared memory through the async proxy, which
// does not see the threads' (generic-proxy) writes until each writer fences
// them: write, fence_proxy_async_shared(), then the barrier that orders the
// writers before the issuing thread.
//
//===----------------------------------------------------------------------===//

#pragma once

#ifdef __RUDNN_EMULATION__
#include "rudnn/arch/emulated_hopper.cuh"
#endif

namespace rudnn {
namespace arch {

/// fence.proxy.async.shared::cta: this thread's earlier writes to shared
/// memory are seen by the async-proxy operations issued after it.
__device__ __forceinline__ void fence_proxy_async_shared() {
#ifdef __RUDNN_EMULATION__
  emulated::fence_proxy_async_shared();
#elif __CUDA_ARCH__ >= 900
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
}

} // namespace arch
} // namespace rudnn
