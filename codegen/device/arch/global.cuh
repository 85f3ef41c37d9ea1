//===- arch/global.cuh - 16-byte global memory accesses -------------------===//
//
// One 16-byte store (STG.128) the compiler may not split: where it cannot
// prove the address 16-byte aligned through a computed pointer, it emits
// four 4-byte stores for a plain uint4 assignment. The caller guarantees
// the alignment.
//
//===----------------------------------------------------------------------===//

#pragma once

namespace rudnn {
namespace arch {

__device__ __forceinline__ void store_global16(void *to, uint4 value) {
#ifdef __RUDNN_EMULATION__
  *reinterpret_cast<uint4 *>(to) = value;
#else
  asm volatile("st.global.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"l"(to),
               "r"(value.x), "r"(value.y), "r"(value.z), "r"(value.w)
               : "memory");
#endif
}

} // namespace arch
} // namespace rudnn
