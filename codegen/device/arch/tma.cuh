//===- arch/tma.cuh - Tensor Memory Accelerator boxes (sm_90) -------------===//
//
// One thread asks the TMA unit for a box of a tensor described by a tensor
// map (built on the host through the driver, passed as a __grid_constant__
// kernel parameter); the box lands in shared memory, swizzled as the map
// says, elements outside the tensor read as zeros, and its bytes complete a
// transaction on an mbarrier. A store sends a box of shared memory back,
// elements outside the tensor dropped; its thread commits stores in bulk
// groups and waits until they have read their shared sources. Both are
// async-proxy operations: threads' writes to shared memory a store reads
// need fence_proxy_async_shared() first.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/arch/mbarrier.cuh"
#include "rudnn/arch/proxy_fence.cuh"

namespace rudnn {
namespace arch {

/// The 128 opaque bytes of a CUtensorMap.
struct alignas(64) TensorMap {
  unsigned long long words[16];
};

/// Loads the box at `coords` (innermost dim first) of `map` into `shared`
/// (aligned to the swizzle's 1024 bytes), completing its bytes on
/// `barrier`. Rank 3 or 4.
template <int Rank>
__device__ __forceinline__ void tma_load(void *shared, const TensorMap &map,
                                         const int (&coords)[Rank],
                                         unsigned long long *barrier) {
  static_assert(Rank == 3 || Rank == 4, "tensor maps of rank 3 or 4");
#ifdef __RUDNN_EMULATION__
  emulated::tma_load(shared, &map, coords, Rank, barrier);
#elif __CUDA_ARCH__ >= 900
  const unsigned destination =
      static_cast<unsigned>(__cvta_generic_to_shared(shared));
  const unsigned done =
      static_cast<unsigned>(__cvta_generic_to_shared(barrier));
  if constexpr (Rank == 3)
    asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::"
                 "complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(
                     destination),
                 "l"(&map), "r"(coords[0]), "r"(coords[1]), "r"(coords[2]),
                 "r"(done)
                 : "memory");
  else
    asm volatile(
        "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::"
        "complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], [%6];\n" ::"r"(
            destination),
        "l"(&map), "r"(coords[0]), "r"(coords[1]), "r"(coords[2]),
        "r"(coords[3]), "r"(done)
        : "memory");
#endif
}

/// Stores the box at `coords` (innermost dim first) of `map` from `shared`
/// (laid out as a load of the same box would leave it). Rank 3 or 4.
template <int Rank>
__device__ __forceinline__ void
tma_store(const TensorMap &map, const int (&coords)[Rank], const void *shared) {
  static_assert(Rank == 3 || Rank == 4, "tensor maps of rank 3 or 4");
#ifdef __RUDNN_EMULATION__
  emulated::tma_store(&map, coords, Rank, shared);
#elif __CUDA_ARCH__ >= 900
  const unsigned source =
      static_cast<unsigned>(__cvta_generic_to_shared(shared));
  if constexpr (Rank == 3)
    asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group "
                 "[%0, {%1, %2, %3}], [%4];\n" ::"l"(&map),
                 "r"(coords[0]), "r"(coords[1]), "r"(coords[2]), "r"(source)
                 : "memory");
  else
    asm volatile("cp.async.bulk.tensor.4d.global.shared::cta.bulk_group "
                 "[%0, {%1, %2, %3, %4}], [%5];\n" ::"l"(&map),
                 "r"(coords[0]), "r"(coords[1]), "r"(coords[2]), "r"(coords[3]),
                 "r"(source)
                 : "memory");
#endif
}

/// The stores this thread issued since its last commit form a bulk group.
__device__ __forceinline__ void tma_store_commit() {
#ifdef __RUDNN_EMULATION__
  emulated::tma_store_commit();
#elif __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
#endif
}

/// Waits until all but the `Pending` most recent of this thread's bulk
/// groups have read their shared sources, which may then change. Their
/// global writes are seen by the next kernel.
template <int Pending> __device__ __forceinline__ void tma_store_wait() {
#ifdef __RUDNN_EMULATION__
  emulated::tma_store_wait(Pending);
#elif __CUDA_ARCH__ >= 900
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(Pending) : "memory");
#endif
}

} // namespace arch
} // namespace rudnn
