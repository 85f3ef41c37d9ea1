//===- arch/global.cuh - Global memory accesses the compiler must keep ----===//
//
// One 16-byte store (STG.128) the compiler may not split: where it cannot
// prove the address 16-byte aligned through a computed pointer, it emits
// four 4-byte stores for a plain uint4 assignment. The caller guarantees
// the alignment. A pair of f32 reductions, one 8-byte RED on sm_90. And
// the two halves of a semaphore between blocks: a wait for a value with
// acquire semantics, an increment with release semantics; and an arrival
// that tells the last of several blocks it is the last.
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

/// to[0] += first, to[1] += second, each atomically (no value returned):
/// one vector reduction on sm_90, to 8-byte aligned; two elsewhere.
__device__ __forceinline__ void reduce_add_pair(float *to, float first,
                                                float second) {
#if !defined(__RUDNN_EMULATION__) && __CUDA_ARCH__ >= 900
  atomicAdd(reinterpret_cast<float2 *>(to), make_float2(first, second));
#else
  atomicAdd(to, first);
  atomicAdd(to + 1, second);
#endif
}

/// Waits until *flag holds `value` (acquire, GPU scope): what the blocks
/// that released it wrote before is then visible to this thread.
__device__ __forceinline__ void wait_until_equal(const int *flag, int value) {
#ifdef __RUDNN_EMULATION__
  while (atomicAdd(const_cast<int *>(flag), 0) != value) {
  }
  __threadfence();
#else
  int seen;
  do
    asm volatile("ld.acquire.gpu.global.b32 %0, [%1];\n"
                 : "=r"(seen)
                 : "l"(flag)
                 : "memory");
  while (seen != value);
#endif
}

/// Adds one to *flag (release, GPU scope): this thread's earlier writes,
/// and those its block made visible to it, reach whoever acquires it.
__device__ __forceinline__ void release_increment(int *flag) {
#ifdef __RUDNN_EMULATION__
  __threadfence();
  atomicAdd(flag, 1);
#else
  asm volatile("red.release.gpu.global.add.s32 [%0], 1;\n" ::"l"(flag)
               : "memory");
#endif
}

/// Adds one to *flag (acquire and release, GPU scope) and returns what it
/// held: the arrival that finds every other one in sees what they wrote
/// before theirs.
__device__ __forceinline__ int arrive(int *flag) {
#ifdef __RUDNN_EMULATION__
  __threadfence();
  const int before = atomicAdd(flag, 1);
  __threadfence();
  return before;
#else
  int before;
  asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], 1;\n"
               : "=r"(before)
               : "l"(flag)
               : "memory");
  return before;
#endif
}

} // namespace arch
} // namespace rudnn
