//===- arch/tma.cuh - Tensor Memory Accelerator tile loads (sm_90) --------===//
//
// One thread asks the TMA unit for a box of a tensor described by a tensor
// map (built on the host through the driver, passed as a __grid_constant__
// kernel parameter); the box lands in shared memory, swizzled as the map
// says, elements outside the tensor read as zeros, and its bytes complete a
// transaction on an mbarrier.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/arch/mbarrier.cuh"

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

} // namespace arch
} // namespace rudnn
