//===- arch/wgmma.cuh - Warpgroup matrix multiply-accumulate (sm_90a) -----===//
//
// wgmma.mma_async: the four warps of a warpgroup (128 threads, warps 4i to
// 4i + 3) compute D(64 x N) += A(64 x 16) B(16 x N) together, A from shared
// memory or from registers, B from shared memory, both shared operands
// named by matrix descriptors. Warp w of the group holds rows 16w..16w+15 of
// D in the accumulator layout of mma.m16n8 repeated over the N / 8 column
// blocks (d[4j + e]: row g + 8 (e / 2), column 8j + 2t + e % 2), and passes
// A's rows 16w.. in mma.m16n8k16's A layout: an attention kernel's scores
// become the next product's operand in registers.
//
// wgmma, wgmma_fence/commit/wait and set_register_budget are .sync.aligned:
// all 128 threads of the warpgroup execute them together, with the same
// descriptors and operands (the emulator refuses anything else).
//
// Shared operands use the 128-byte swizzle: rows of 64 16-bit elements
// (128 bytes), eight rows an atom of 1024 bytes whose 16-byte chunks are
// permuted by chunk ^ (row % 8) on the address bits, as the TMA unit writes
// them. A K-major operand (rows of the M or N index, K contiguous) steps
// its 8-row groups by the descriptor's stride byte offset; an MN-major one
// (rows of K, M or N contiguous) steps its 8-row groups of K likewise and
// its 64-element blocks of N by the leading byte offset. wgmma reads them
// through the async proxy: operands the threads wrote need
// fence_proxy_async_shared() (arch/proxy_fence.cuh) by every writer first.
//
//===----------------------------------------------------------------------===//

#pragma once

#ifdef __RUDNN_EMULATION__
#include "rudnn/arch/emulated_hopper.cuh"
#endif

#include "rudnn/arch/proxy_fence.cuh"

namespace rudnn {
namespace arch {

template <typename T> struct IsHalf { static constexpr bool value = false; };
template <> struct IsHalf<__half> { static constexpr bool value = true; };

/// The shared-window address of a shared-memory pointer: what the
/// swizzles' address bits are bits of.
__device__ __forceinline__ unsigned long long
shared_window_address(const void *pointer) {
#ifdef __RUDNN_EMULATION__
  return emulated::shared_offset(pointer);
#else
  return __cvta_generic_to_shared(pointer);
#endif
}

/// A shared-memory matrix descriptor, 128-byte swizzle: start address,
/// leading and stride byte offsets (all in 16-byte units).
__device__ __forceinline__ unsigned long long
wgmma_descriptor(const void *start, unsigned leading, unsigned stride) {
  const unsigned long long address = shared_window_address(start);
  return (address & 0x3ffff) >> 4 |
         static_cast<unsigned long long>((leading & 0x3ffff) >> 4) << 16 |
         static_cast<unsigned long long>((stride & 0x3ffff) >> 4) << 32 |
         1ull << 62;
}

/// Orders this thread's register writes (accumulators, A fragments) before
/// the wgmma that reads them.
__device__ __forceinline__ void wgmma_fence() {
#ifdef __RUDNN_EMULATION__
  emulated::wgmma_fence();
#elif defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory");
#endif
}

/// Pins `registers` at this point of the program. The fences and waits
/// above order memory, not registers: without this the compiler may move
/// an accumulator's zeroing or an A fragment's conversion past the fence,
/// and ptxas then serializes the wgmma that reads it.
template <int N>
__device__ __forceinline__ void wgmma_fence_operand(float (&registers)[N]) {
#ifndef __RUDNN_EMULATION__
#pragma unroll
  for (int i = 0; i < N; ++i)
    asm volatile("" : "+f"(registers[i])::"memory");
#endif
}
template <int N>
__device__ __forceinline__ void wgmma_fence_operand(unsigned (&registers)[N]) {
#ifndef __RUDNN_EMULATION__
#pragma unroll
  for (int i = 0; i < N; ++i)
    asm volatile("" : "+r"(registers[i])::"memory");
#endif
}

/// Closes the group of wgmma issued since the last commit.
__device__ __forceinline__ void wgmma_commit() {
#ifdef __RUDNN_EMULATION__
  emulated::wgmma_commit();
#elif defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory");
#endif
}

/// Waits until at most `Pending` groups are in flight: their accumulators
/// are then this thread's to read (before, they hold garbage; emulated,
/// poison).
template <int Pending> __device__ __forceinline__ void wgmma_wait() {
#ifdef __RUDNN_EMULATION__
  emulated::wgmma_wait(Pending);
#elif defined(__CUDA_ARCH_FEAT_SM90_ALL)
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(Pending) : "memory");
#endif
}

/// Lowers (Increase false) or raises this warpgroup's register budget.
template <int Registers, bool Increase>
__device__ __forceinline__ void set_register_budget() {
  static_assert(Registers % 8 == 0 && Registers >= 24 && Registers <= 256,
                "setmaxnreg takes a multiple of 8 in [24, 256]");
#ifdef __RUDNN_EMULATION__
  emulated::setmaxnreg(Registers, Increase);
#elif defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if constexpr (Increase)
    asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(Registers));
  else
    asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(Registers));
#endif
}

// The 32 accumulators of m64n64 with fp32 results: operands %0 to %31.
#define RUDNN_WGMMA_D32                                                        \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, "    \
  "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, "     \
  "%30, %31}"
#define RUDNN_WGMMA_D32_OPERANDS                                               \
  "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]),      \
      "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]),             \
      "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),         \
      "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]),         \
      "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]),         \
      "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]),         \
      "+f"(d[31])

// One wgmma, its accumulators scaled by 1 (accumulated into): A and B
// from descriptors (neither transposed), or A from registers and B
// transposed (MN-major).
#define RUDNN_WGMMA_SS(TYPE)                                                   \
  asm volatile("{\n.reg .pred accumulate;\nsetp.ne.b32 accumulate, %34, 0;\n"  \
               "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE     \
               " " RUDNN_WGMMA_D32 ", %32, %33, accumulate, 1, 1, 0, 0;\n}\n"  \
               : RUDNN_WGMMA_D32_OPERANDS                                      \
               : "l"(a), "l"(b), "r"(1))
#define RUDNN_WGMMA_RS(TYPE)                                                   \
  asm volatile("{\n.reg .pred accumulate;\nsetp.ne.b32 accumulate, %37, 0;\n"  \
               "wgmma.mma_async.sync.aligned.m64n64k16.f32." TYPE "." TYPE     \
               " " RUDNN_WGMMA_D32 ", {%32, %33, %34, %35}, %36, accumulate, " \
               "1, 1, 1;\n}\n"                                                 \
               : RUDNN_WGMMA_D32_OPERANDS                                      \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(1))

/// d(64 x 64) += A B, A K-major and B K-major in shared memory (QK^T: the
/// queries' rows and the keys' rows, the head dim contiguous in both).
template <typename T>
__device__ __forceinline__ void
wgmma_m64n64k16_ss(float (&d)[32], unsigned long long a, unsigned long long b) {
#ifdef __RUDNN_EMULATION__
  emulated::wgmma_m64n64k16(d, nullptr, a, b, /*transposedB=*/false,
                            !IsHalf<T>::value);
#elif defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if constexpr (IsHalf<T>::value)
    RUDNN_WGMMA_SS("f16");
  else
    RUDNN_WGMMA_SS("bf16");
#endif
}

/// d(64 x 64) += A B, A's rows 16w.. in this warp's registers (mma A
/// layout), B MN-major in shared memory (PV: the values' rows are the
/// depth, the value dim contiguous).
template <typename T>
__device__ __forceinline__ void wgmma_m64n64k16_rs(float (&d)[32],
                                                   const unsigned (&a)[4],
                                                   unsigned long long b) {
#ifdef __RUDNN_EMULATION__
  emulated::wgmma_m64n64k16(d, a, 0, b, /*transposedB=*/true,
                            !IsHalf<T>::value);
#elif defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if constexpr (IsHalf<T>::value)
    RUDNN_WGMMA_RS("f16");
  else
    RUDNN_WGMMA_RS("bf16");
#endif
}

#undef RUDNN_WGMMA_SS
#undef RUDNN_WGMMA_RS
#undef RUDNN_WGMMA_D32
#undef RUDNN_WGMMA_D32_OPERANDS

} // namespace arch
} // namespace rudnn
