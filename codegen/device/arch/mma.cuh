//===- arch/mma.cuh - mma.sync m16n8k16 and m16n8k8.tf32 (sm_80+) ---------===//
//
// D = A·B + C on one 16x8x16 tile per warp, fp32 accumulators. Fragment
// layouts follow the PTX ISA (groupID = lane / 4, tig = lane % 4):
//   A (row-major 16x16, 4 regs of 2 halves): a0 (g, 2t..2t+1), a1 (g+8, 2t..),
//     a2 (g, 2t+8..), a3 (g+8, 2t+8..)
//   B (col-major 16x8, 2 regs): b0 (k 2t..2t+1, n g), b1 (k 2t+8.., n g)
//   C/D (16x8 fp32, 4 regs): c0,c1 (g, 2t..2t+1), c2,c3 (g+8, 2t..2t+1)
// The TF32 form is 16x8x8, one 32-bit element a register:
//   A: a0 (g, t), a1 (g+8, t), a2 (g, t+4), a3 (g+8, t+4)
//   B: b0 (k t, n g), b1 (k t+4, n g); C/D as above.
//
//===----------------------------------------------------------------------===//

#pragma once

#ifdef __RUDNN_EMULATION__
#include "rudnn/arch/emulated.cuh"
#endif

// One mma.sync on `d`, `a`, `b`, `c` in scope, with input type TYPE.
#define RUDNN_MMA_M16N8K16(TYPE)                                               \
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." TYPE "." TYPE ".f32 "  \
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "                \
               "{%10, %11, %12, %13};\n"                                       \
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])                \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]),        \
                 "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]))

namespace rudnn {
namespace arch {

__device__ __forceinline__ void mma_m16n8k16_bf16(float (&d)[4],
                                                  const unsigned (&a)[4],
                                                  const unsigned (&b)[2],
                                                  const float (&c)[4]) {
#ifdef __RUDNN_EMULATION__
  emulated::mma_m16n8k16(d, a, b, c, /*bf16=*/true);
#else
  RUDNN_MMA_M16N8K16("bf16");
#endif
}

__device__ __forceinline__ void mma_m16n8k16_f16(float (&d)[4],
                                                 const unsigned (&a)[4],
                                                 const unsigned (&b)[2],
                                                 const float (&c)[4]) {
#ifdef __RUDNN_EMULATION__
  emulated::mma_m16n8k16(d, a, b, c, /*bf16=*/false);
#else
  RUDNN_MMA_M16N8K16("f16");
#endif
}

#undef RUDNN_MMA_M16N8K16

/// An fp32 value rounded to TF32 (10 fraction bits, to nearest, ties away
/// from zero), as the TF32 mma's operand register.
__device__ __forceinline__ unsigned to_tf32(float value) {
#ifdef __RUDNN_EMULATION__
  return emulated::to_tf32(value);
#else
  unsigned bits;
  asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(bits) : "f"(value));
  return bits;
#endif
}

__device__ __forceinline__ void mma_m16n8k8_tf32(float (&d)[4],
                                                 const unsigned (&a)[4],
                                                 const unsigned (&b)[2],
                                                 const float (&c)[4]) {
#ifdef __RUDNN_EMULATION__
  emulated::mma_m16n8k8_tf32(d, a, b, c);
#else
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 "
               "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
               "{%10, %11, %12, %13};\n"
               : "=f"(d[0]), "=f"(d[1]), "=f"(d[2]), "=f"(d[3])
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]),
                 "r"(b[1]), "f"(c[0]), "f"(c[1]), "f"(c[2]), "f"(c[3]));
#endif
}

/// The fragment layouts of mma.m16n8k16 with fp32 accumulation, as data
/// (the PTX ISA's figures): element e of a lane's fragment sits at (row,
/// col) of its operand. A: 8 elements (4 registers of 2), B: 4 (2 of 2),
/// C/D: 4 floats. The lower half of a register holds the smaller index.
struct Mma16816 {
  static constexpr int M = 16, N = 8, K = 16;
  static __device__ __forceinline__ int a_row(int lane, int e) {
    return lane / 4 + 8 * (e / 2 % 2);
  }
  static __device__ __forceinline__ int a_col(int lane, int e) {
    return 2 * (lane % 4) + e % 2 + 8 * (e / 4);
  }
  static __device__ __forceinline__ int b_row(int lane, int e) {
    return 2 * (lane % 4) + e % 2 + 8 * (e / 2);
  }
  static __device__ __forceinline__ int b_col(int lane, int) {
    return lane / 4;
  }
  static __device__ __forceinline__ int c_row(int lane, int e) {
    return lane / 4 + 8 * (e / 2);
  }
  static __device__ __forceinline__ int c_col(int lane, int e) {
    return 2 * (lane % 4) + e % 2;
  }
};

/// The 32 bits of a pair of 16-bit values (memcpy: no aliasing questions for
/// either compiler).
template <typename Pair>
__device__ __forceinline__ unsigned bits_of(Pair pair) {
  static_assert(sizeof(Pair) == 4, "a pair of 16-bit values");
  unsigned bits;
  memcpy(&bits, &pair, sizeof(bits));
  return bits;
}

/// Two bf16 values in one register, `low` in the low half (the element with
/// the smaller index in every fragment).
__device__ __forceinline__ unsigned pack_bf16x2(float low, float high) {
  return bits_of(__floats2bfloat162_rn(low, high));
}

__device__ __forceinline__ unsigned pack_f16x2(float low, float high) {
  return bits_of(__floats2half2_rn(low, high));
}

} // namespace arch
} // namespace rudnn
