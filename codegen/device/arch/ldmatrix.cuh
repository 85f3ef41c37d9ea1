//===- arch/ldmatrix.cuh - ldmatrix 8x8 b16 tiles from shared memory ------===//
//
// Each lane passes the address of one 16-byte row: lanes 0-7 address tile 0,
// 8-15 tile 1, and so on for the .x2/.x4 forms. Register i of every lane then
// holds two elements of tile i: row lane / 4, columns 2 * (lane % 4) + {0, 1}
// (rows and columns swapped with .trans).
//
//===----------------------------------------------------------------------===//

#pragma once

#ifdef __RUDNN_EMULATION__
#include "rudnn/arch/emulated.cuh"
#endif

namespace rudnn {
namespace arch {

__device__ __forceinline__ unsigned shared_address(const void *pointer) {
  return static_cast<unsigned>(__cvta_generic_to_shared(pointer));
}

__device__ __forceinline__ void ldmatrix_x1(unsigned (&r)[1], const void *row) {
#ifdef __RUDNN_EMULATION__
  emulated::ldmatrix<1, false>(r, row);
#else
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%0}, [%1];\n"
               : "=r"(r[0])
               : "r"(shared_address(row)));
#endif
}

__device__ __forceinline__ void ldmatrix_x2(unsigned (&r)[2], const void *row) {
#ifdef __RUDNN_EMULATION__
  emulated::ldmatrix<2, false>(r, row);
#else
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%0, %1}, [%2];\n"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(shared_address(row)));
#endif
}

__device__ __forceinline__ void ldmatrix_x4(unsigned (&r)[4], const void *row) {
#ifdef __RUDNN_EMULATION__
  emulated::ldmatrix<4, false>(r, row);
#else
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
      : "r"(shared_address(row)));
#endif
}

__device__ __forceinline__ void ldmatrix_x1_trans(unsigned (&r)[1],
                                                  const void *row) {
#ifdef __RUDNN_EMULATION__
  emulated::ldmatrix<1, true>(r, row);
#else
  asm volatile("ldmatrix.sync.aligned.m8n8.x1.trans.shared.b16 {%0}, [%1];\n"
               : "=r"(r[0])
               : "r"(shared_address(row)));
#endif
}

__device__ __forceinline__ void ldmatrix_x2_trans(unsigned (&r)[2],
                                                  const void *row) {
#ifdef __RUDNN_EMULATION__
  emulated::ldmatrix<2, true>(r, row);
#else
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];\n"
      : "=r"(r[0]), "=r"(r[1])
      : "r"(shared_address(row)));
#endif
}

__device__ __forceinline__ void ldmatrix_x4_trans(unsigned (&r)[4],
                                                  const void *row) {
#ifdef __RUDNN_EMULATION__
  emulated::ldmatrix<4, true>(r, row);
#else
  asm volatile(
      "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
      : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
      : "r"(shared_address(row)));
#endif
}

} // namespace arch
} // namespace rudnn
