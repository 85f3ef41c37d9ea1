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
// fp32 operands multiply in TF32 (m64nNk8), both from shared memory,
// K-major.
//
// Shared operands use the 128-byte swizzle: rows of 64 16-bit elements
// (or 32 fp32, 128 bytes), eight rows an atom of 1024 bytes whose 16-byte
// chunks are permuted by chunk ^ (row % 8) on the address bits, as the TMA
// unit writes them. A K-major operand (rows of the M or N index, K contiguous)
// steps its 8-row groups by the descriptor's stride byte offset; an MN-major
// one (rows of K, M or N contiguous) steps its 8-row groups of K likewise and
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

/// `raw` (shared memory) moved up to the next 1024-byte boundary of the
/// shared window, as `T *`: 128-byte swizzled tiles start there, since
/// wgmma and TMA read the swizzle from address bits.
template <typename T = unsigned char>
__device__ __forceinline__ T *swizzle_aligned(unsigned char *raw) {
  return reinterpret_cast<T *>(
      raw + (1024 - shared_window_address(raw) % 1024) % 1024);
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

// The inline assembly of every m64nNk16 shape, N = 16g (g = 1 … 16), from
// one table: the accumulators are operands %0 to %8g-1 ("+f"(d[i])), eight
// a row (RUDNN_WGMMA_G<row>), and the inputs that follow them take the
// numbers of the next row (RUDNN_WGMMA_G<g>). NVCC's inline PTX has no
// named operands, so each shape's numbers are spelled out here, once.
// clang-format off
#define RUDNN_WGMMA_G0 0, 1, 2, 3, 4, 5, 6, 7
#define RUDNN_WGMMA_G1 8, 9, 10, 11, 12, 13, 14, 15
#define RUDNN_WGMMA_G2 16, 17, 18, 19, 20, 21, 22, 23
#define RUDNN_WGMMA_G3 24, 25, 26, 27, 28, 29, 30, 31
#define RUDNN_WGMMA_G4 32, 33, 34, 35, 36, 37, 38, 39
#define RUDNN_WGMMA_G5 40, 41, 42, 43, 44, 45, 46, 47
#define RUDNN_WGMMA_G6 48, 49, 50, 51, 52, 53, 54, 55
#define RUDNN_WGMMA_G7 56, 57, 58, 59, 60, 61, 62, 63
#define RUDNN_WGMMA_G8 64, 65, 66, 67, 68, 69, 70, 71
#define RUDNN_WGMMA_G9 72, 73, 74, 75, 76, 77, 78, 79
#define RUDNN_WGMMA_G10 80, 81, 82, 83, 84, 85, 86, 87
#define RUDNN_WGMMA_G11 88, 89, 90, 91, 92, 93, 94, 95
#define RUDNN_WGMMA_G12 96, 97, 98, 99, 100, 101, 102, 103
#define RUDNN_WGMMA_G13 104, 105, 106, 107, 108, 109, 110, 111
#define RUDNN_WGMMA_G14 112, 113, 114, 115, 116, 117, 118, 119
#define RUDNN_WGMMA_G15 120, 121, 122, 123, 124, 125, 126, 127
#define RUDNN_WGMMA_G16 128, 129, 130, 131, 132, 133, 134, 135
#define RUDNN_WGMMA_STR(x) #x
#define RUDNN_WGMMA_PLACE(x) "%" RUDNN_WGMMA_STR(x)
#define RUDNN_WGMMA_PLACES_(a, b, c, d, e, f, g, h)                            \
  RUDNN_WGMMA_PLACE(a) ", " RUDNN_WGMMA_PLACE(b) ", " RUDNN_WGMMA_PLACE(c)     \
  ", " RUDNN_WGMMA_PLACE(d) ", " RUDNN_WGMMA_PLACE(e) ", "                     \
  RUDNN_WGMMA_PLACE(f) ", " RUDNN_WGMMA_PLACE(g) ", " RUDNN_WGMMA_PLACE(h)
#define RUDNN_WGMMA_PLACES(row) RUDNN_WGMMA_PLACES_(row)
#define RUDNN_WGMMA_OPERANDS_(a, b, c, d, e, f, g, h)                          \
  "+f"(d_[a]), "+f"(d_[b]), "+f"(d_[c]), "+f"(d_[d]), "+f"(d_[e]),            \
      "+f"(d_[f]), "+f"(d_[g]), "+f"(d_[h])
#define RUDNN_WGMMA_OPERANDS(row) RUDNN_WGMMA_OPERANDS_(row)
// The i-th input after the accumulators of shape g.
#define RUDNN_WGMMA_IN0(a, ...) RUDNN_WGMMA_PLACE(a)
#define RUDNN_WGMMA_IN1(a, b, ...) RUDNN_WGMMA_PLACE(b)
#define RUDNN_WGMMA_IN2(a, b, c, ...) RUDNN_WGMMA_PLACE(c)
#define RUDNN_WGMMA_IN3(a, b, c, d, ...) RUDNN_WGMMA_PLACE(d)
#define RUDNN_WGMMA_IN4(a, b, c, d, e, ...) RUDNN_WGMMA_PLACE(e)
#define RUDNN_WGMMA_IN5(a, b, c, d, e, f, ...) RUDNN_WGMMA_PLACE(f)
#define RUDNN_WGMMA_IN(i, row) RUDNN_WGMMA_IN##i(row)
// Accumulator places and operands of the first g rows.
#define RUDNN_WGMMA_D1 RUDNN_WGMMA_PLACES(RUDNN_WGMMA_G0)
#define RUDNN_WGMMA_D2 RUDNN_WGMMA_D1 ", " RUDNN_WGMMA_PLACES(RUDNN_WGMMA_G1)
#define RUDNN_WGMMA_D3 RUDNN_WGMMA_D2 ", " RUDNN_WGMMA_PLACES(RUDNN_WGMMA_G2)
#define RUDNN_WGMMA_D4 RUDNN_WGMMA_D3 ", " RUDNN_WGMMA_PLACES(RUDNN_WGMMA_G3)
#define RUDNN_WGMMA_D5 RUDNN_WGMMA_D4 ", " RUDNN_WGMMA_PLACES(RUDNN_WGMMA_G4)
#define RUDNN_WGMMA_D6 RUDNN_WGMMA_D5 ", " RUDNN_WGMMA_PLACES(RUDNN_WGMMA_G5)
#define RUDNN_WGMMA_D7 RUDNN_WGMMA_D6 ", " RUDNN_WGMMA_PLACES(RUDNN_WGMMA_G6)
#define RUDNN_WGMMA_D8 RUDNN_WGMMA_D7 ", " RUDNN_WGMMA_PLACES(RUDNN_WGMMA_G7)
#define RUDNN_WGMMA_D9 RUDNN_WGMMA_D8 ", " RUDNN_WGMMA_PLACES(RUDNN_WGMMA_G8)
#define RUDNN_WGMMA_D10 RUDNN_WGMMA_D9 ", " RUDNN_WGMMA_PLACES(RUDNN_WGMMA_G9)
#define RUDNN_WGMMA_D11 RUDNN_WGMMA_D10 ", " RUDNN_WGMMA_PLACES(RUDNN_WGMMA_G10)
#define RUDNN_WGMMA_D12 RUDNN_WGMMA_D11 ", " RUDNN_WGMMA_PLACES(RUDNN_WGMMA_G11)
#define RUDNN_WGMMA_D13 RUDNN_WGMMA_D12 ", " RUDNN_WGMMA_PLACES(RUDNN_WGMMA_G12)
#define RUDNN_WGMMA_D14 RUDNN_WGMMA_D13 ", " RUDNN_WGMMA_PLACES(RUDNN_WGMMA_G13)
#define RUDNN_WGMMA_D15 RUDNN_WGMMA_D14 ", " RUDNN_WGMMA_PLACES(RUDNN_WGMMA_G14)
#define RUDNN_WGMMA_D16 RUDNN_WGMMA_D15 ", " RUDNN_WGMMA_PLACES(RUDNN_WGMMA_G15)
#define RUDNN_WGMMA_O1 RUDNN_WGMMA_OPERANDS(RUDNN_WGMMA_G0)
#define RUDNN_WGMMA_O2 RUDNN_WGMMA_O1, RUDNN_WGMMA_OPERANDS(RUDNN_WGMMA_G1)
#define RUDNN_WGMMA_O3 RUDNN_WGMMA_O2, RUDNN_WGMMA_OPERANDS(RUDNN_WGMMA_G2)
#define RUDNN_WGMMA_O4 RUDNN_WGMMA_O3, RUDNN_WGMMA_OPERANDS(RUDNN_WGMMA_G3)
#define RUDNN_WGMMA_O5 RUDNN_WGMMA_O4, RUDNN_WGMMA_OPERANDS(RUDNN_WGMMA_G4)
#define RUDNN_WGMMA_O6 RUDNN_WGMMA_O5, RUDNN_WGMMA_OPERANDS(RUDNN_WGMMA_G5)
#define RUDNN_WGMMA_O7 RUDNN_WGMMA_O6, RUDNN_WGMMA_OPERANDS(RUDNN_WGMMA_G6)
#define RUDNN_WGMMA_O8 RUDNN_WGMMA_O7, RUDNN_WGMMA_OPERANDS(RUDNN_WGMMA_G7)
#define RUDNN_WGMMA_O9 RUDNN_WGMMA_O8, RUDNN_WGMMA_OPERANDS(RUDNN_WGMMA_G8)
#define RUDNN_WGMMA_O10 RUDNN_WGMMA_O9, RUDNN_WGMMA_OPERANDS(RUDNN_WGMMA_G9)
#define RUDNN_WGMMA_O11 RUDNN_WGMMA_O10, RUDNN_WGMMA_OPERANDS(RUDNN_WGMMA_G10)
#define RUDNN_WGMMA_O12 RUDNN_WGMMA_O11, RUDNN_WGMMA_OPERANDS(RUDNN_WGMMA_G11)
#define RUDNN_WGMMA_O13 RUDNN_WGMMA_O12, RUDNN_WGMMA_OPERANDS(RUDNN_WGMMA_G12)
#define RUDNN_WGMMA_O14 RUDNN_WGMMA_O13, RUDNN_WGMMA_OPERANDS(RUDNN_WGMMA_G13)
#define RUDNN_WGMMA_O15 RUDNN_WGMMA_O14, RUDNN_WGMMA_OPERANDS(RUDNN_WGMMA_G14)
#define RUDNN_WGMMA_O16 RUDNN_WGMMA_O15, RUDNN_WGMMA_OPERANDS(RUDNN_WGMMA_G15)
#define RUDNN_WGMMA_EACH_SHAPE(CASE) \
  CASE(1, 16) \
  CASE(2, 32) \
  CASE(3, 48) \
  CASE(4, 64) \
  CASE(5, 80) \
  CASE(6, 96) \
  CASE(7, 112) \
  CASE(8, 128) \
  CASE(9, 144) \
  CASE(10, 160) \
  CASE(11, 176) \
  CASE(12, 192) \
  CASE(13, 208) \
  CASE(14, 224) \
  CASE(15, 240) \
  CASE(16, 256)

// One wgmma of shape g (N = n), accumulating into d_ when `accumulate` is
// set (scale-d): A and B from descriptors, both K-major (SS), both
// MN-major (SST), A K-major and B MN-major (SSB) or the reverse (SSA); or A
// from registers and B MN-major (RS).
#define RUDNN_WGMMA_INPUT(i, g) RUDNN_WGMMA_IN(i, RUDNN_WGMMA_G##g)
#define RUDNN_WGMMA_SHARED_ASM(g, n, TYPE, TRANSPOSES)                         \
  asm volatile(                                                                \
      "{\n.reg .pred p;\nsetp.ne.b32 p, " RUDNN_WGMMA_INPUT(2, g) ", 0;\n"     \
      "wgmma.mma_async.sync.aligned.m64n" #n "k16.f32." TYPE "." TYPE " {"     \
      RUDNN_WGMMA_D##g "}, " RUDNN_WGMMA_INPUT(0, g) ", "                      \
      RUDNN_WGMMA_INPUT(1, g) ", p, 1, 1, " TRANSPOSES ";\n}\n"                \
      : RUDNN_WGMMA_O##g                                                       \
      : "l"(a), "l"(b), "r"(static_cast<unsigned>(accumulate)))
#define RUDNN_WGMMA_SS_ASM(g, n, TYPE) RUDNN_WGMMA_SHARED_ASM(g, n, TYPE, "0, 0")
#define RUDNN_WGMMA_SST_ASM(g, n, TYPE) RUDNN_WGMMA_SHARED_ASM(g, n, TYPE, "1, 1")
#define RUDNN_WGMMA_SSB_ASM(g, n, TYPE) RUDNN_WGMMA_SHARED_ASM(g, n, TYPE, "0, 1")
#define RUDNN_WGMMA_SSA_ASM(g, n, TYPE) RUDNN_WGMMA_SHARED_ASM(g, n, TYPE, "1, 0")
#define RUDNN_WGMMA_TF32_ASM(g, n)                                             \
  asm volatile(                                                                \
      "{\n.reg .pred p;\nsetp.ne.b32 p, " RUDNN_WGMMA_INPUT(2, g) ", 0;\n"     \
      "wgmma.mma_async.sync.aligned.m64n" #n "k8.f32.tf32.tf32 {"              \
      RUDNN_WGMMA_D##g "}, " RUDNN_WGMMA_INPUT(0, g) ", "                      \
      RUDNN_WGMMA_INPUT(1, g) ", p, 1, 1;\n}\n"                                \
      : RUDNN_WGMMA_O##g                                                       \
      : "l"(a), "l"(b), "r"(static_cast<unsigned>(accumulate)))
#define RUDNN_WGMMA_RS_ASM(g, n, TYPE)                                         \
  asm volatile(                                                                \
      "{\n.reg .pred p;\nsetp.ne.b32 p, " RUDNN_WGMMA_INPUT(5, g) ", 0;\n"     \
      "wgmma.mma_async.sync.aligned.m64n" #n "k16.f32." TYPE "." TYPE " {"     \
      RUDNN_WGMMA_D##g "}, {" RUDNN_WGMMA_INPUT(0, g) ", "                     \
      RUDNN_WGMMA_INPUT(1, g) ", " RUDNN_WGMMA_INPUT(2, g) ", "                \
      RUDNN_WGMMA_INPUT(3, g) "}, " RUDNN_WGMMA_INPUT(4, g)                    \
      ", p, 1, 1, 1;\n}\n"                                                     \
      : RUDNN_WGMMA_O##g                                                       \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b),                    \
        "r"(static_cast<unsigned>(accumulate)))
#define RUDNN_WGMMA_CASE(FORM, g, n)                                           \
  if constexpr (Count == 8 * g) {                                              \
    if constexpr (IsHalf<T>::value)                                            \
      RUDNN_WGMMA_##FORM##_ASM(g, n, "f16");                                   \
    else                                                                       \
      RUDNN_WGMMA_##FORM##_ASM(g, n, "bf16");                                  \
  }
#define RUDNN_WGMMA_SS_CASE(g, n) RUDNN_WGMMA_CASE(SS, g, n)
#define RUDNN_WGMMA_SST_CASE(g, n) RUDNN_WGMMA_CASE(SST, g, n)
#define RUDNN_WGMMA_SSB_CASE(g, n) RUDNN_WGMMA_CASE(SSB, g, n)
#define RUDNN_WGMMA_SSA_CASE(g, n) RUDNN_WGMMA_CASE(SSA, g, n)
#define RUDNN_WGMMA_RS_CASE(g, n) RUDNN_WGMMA_CASE(RS, g, n)
#define RUDNN_WGMMA_TF32_CASE(g, n)                                            \
  if constexpr (Count == 8 * g) {                                              \
    RUDNN_WGMMA_TF32_ASM(g, n);                                                \
  }
// clang-format on

#ifdef __RUDNN_EMULATION__
/// What the emulated tensor cores read 16-bit operands of type T as.
template <typename T> constexpr emulated::WgmmaInput wgmma_input() {
  return IsHalf<T>::value ? emulated::WgmmaInput::F16
                          : emulated::WgmmaInput::Bf16;
}
#endif

/// The accumulator counts of m64nNk16 with fp32 results: N / 2 a thread.
template <int Count>
constexpr bool kIsWgmmaAccumulatorCount =
    Count % 8 == 0 && Count >= 8 && Count <= 128;

/// d(64 x N) += A B (d = A B when `accumulate` is false), N = 2 x the
/// accumulators `d` holds (16 to 256 in steps of 16); A and B from shared
/// memory, each K-major or, where `TransposedA`/`TransposedB`, MN-major
/// (16-bit inputs take either layout for either operand).
template <bool TransposedA, bool TransposedB, typename T, int Count>
__device__ __forceinline__ void
wgmma_shared(float (&d_)[Count], unsigned long long a, unsigned long long b,
             bool accumulate) {
  static_assert(kIsWgmmaAccumulatorCount<Count>,
                "m64nNk16: N = 2 x the accumulators, 16 to 256 in steps of 16");
#ifdef __RUDNN_EMULATION__
  emulated::wgmma(d_, Count, nullptr, a, b, TransposedA, TransposedB,
                  wgmma_input<T>(), accumulate);
#elif defined(__CUDA_ARCH_FEAT_SM90_ALL)
  if constexpr (TransposedA && TransposedB) {
    RUDNN_WGMMA_EACH_SHAPE(RUDNN_WGMMA_SST_CASE)
  } else if constexpr (TransposedA) {
    RUDNN_WGMMA_EACH_SHAPE(RUDNN_WGMMA_SSA_CASE)
  } else if constexpr (TransposedB) {
    RUDNN_WGMMA_EACH_SHAPE(RUDNN_WGMMA_SSB_CASE)
  } else {
    RUDNN_WGMMA_EACH_SHAPE(RUDNN_WGMMA_SS_CASE)
  }
#endif
}

/// A K-major and B K-major (QKᵀ: the queries' rows and the keys' rows,
/// the head dim contiguous in both).
template <typename T, int Count>
__device__ __forceinline__ void
wgmma_ss(float (&d_)[Count], unsigned long long a, unsigned long long b,
         bool accumulate = true) {
  wgmma_shared<false, false, T>(d_, a, b, accumulate);
}

/// A and B both MN-major (dS·K from dSᵀ: the keys' rows are the depth of
/// both).
template <typename T, int Count>
__device__ __forceinline__ void
wgmma_ss_transposed(float (&d_)[Count], unsigned long long a,
                    unsigned long long b, bool accumulate = true) {
  wgmma_shared<true, true, T>(d_, a, b, accumulate);
}

/// A K-major and B MN-major (Pᵀ·dO with Pᵀ staged keys by queries: the
/// queries are A's contiguous depth and B's rows).
template <typename T, int Count>
__device__ __forceinline__ void
wgmma_ss_b_transposed(float (&d_)[Count], unsigned long long a,
                      unsigned long long b, bool accumulate = true) {
  wgmma_shared<false, true, T>(d_, a, b, accumulate);
}

/// A MN-major and B K-major (Kᵀ·U with K staged tokens by features and U
/// staged transposed: the tokens are A's rows and B's contiguous depth).
template <typename T, int Count>
__device__ __forceinline__ void
wgmma_ss_a_transposed(float (&d_)[Count], unsigned long long a,
                      unsigned long long b, bool accumulate = true) {
  wgmma_shared<true, false, T>(d_, a, b, accumulate);
}

/// d(64 x N) += A B in TF32 (m64nNk8): A and B fp32 in shared memory,
/// both K-major (the one form TF32 takes), 8 deep: 32 bytes of each
/// 128-byte row, as k16 reads of 16-bit rows. The tensor cores read each
/// operand's top 19 bits.
template <int Count>
__device__ __forceinline__ void
wgmma_ss_tf32(float (&d_)[Count], unsigned long long a, unsigned long long b,
              bool accumulate = true) {
  static_assert(kIsWgmmaAccumulatorCount<Count>,
                "m64nNk8: N = 2 x the accumulators, 16 to 256 in steps of 16");
#ifdef __RUDNN_EMULATION__
  emulated::wgmma(d_, Count, nullptr, a, b, false, false,
                  emulated::WgmmaInput::Tf32, accumulate);
#elif defined(__CUDA_ARCH_FEAT_SM90_ALL)
  RUDNN_WGMMA_EACH_SHAPE(RUDNN_WGMMA_TF32_CASE)
#endif
}

/// d(64 x N) += A B as wgmma_ss, A's rows 16w.. in this warp's registers
/// (mma A layout), B MN-major in shared memory (PV: the values' rows are
/// the depth, the value dim contiguous).
template <typename T, int Count>
__device__ __forceinline__ void
wgmma_rs(float (&d_)[Count], const unsigned (&a)[4], unsigned long long b,
         bool accumulate = true) {
  static_assert(kIsWgmmaAccumulatorCount<Count>,
                "m64nNk16: N = 2 x the accumulators, 16 to 256 in steps of 16");
#ifdef __RUDNN_EMULATION__
  emulated::wgmma(d_, Count, a, 0, b, /*transposedA=*/false,
                  /*transposedB=*/true, wgmma_input<T>(), accumulate);
#elif defined(__CUDA_ARCH_FEAT_SM90_ALL)
  RUDNN_WGMMA_EACH_SHAPE(RUDNN_WGMMA_RS_CASE)
#endif
}

} // namespace arch
} // namespace rudnn
