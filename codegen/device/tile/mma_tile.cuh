//===- tile/mma_tile.cuh - One warp's 16x8 tile of a product --------------===//
//
// D(16x8) += A(16 x depth) · B(depth x 8) with fp32 accumulation. 16-bit
// operands go to tensor cores, one m16n8k16 step per 16 of depth; fp32
// operands take the same accumulator fragment on FMA, keeping full
// precision. The operands come through callables a(i, k) and b(k, j)
// returning fp32 in tile coordinates (0 outside the matrices), so one block
// serves tiles of global, shared or workspace memory and every tail, and a
// kernel's products are written once for every input type. Warp-collective:
// all 32 lanes call it together.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/arch/mma.cuh"
#include "rudnn/tensor.cuh"

namespace rudnn {
namespace tile {

/// The mma and register packing of a 16-bit element type.
template <typename T> struct Mma16;

template <> struct Mma16<__nv_bfloat16> {
  static __device__ __forceinline__ unsigned pack(float low, float high) {
    return arch::pack_bf16x2(low, high);
  }
  static __device__ __forceinline__ void
  mma(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
    arch::mma_m16n8k16_bf16(d, a, b, d);
  }
};

template <> struct Mma16<__half> {
  static __device__ __forceinline__ unsigned pack(float low, float high) {
    return arch::pack_f16x2(low, high);
  }
  static __device__ __forceinline__ void
  mma(float (&d)[4], const unsigned (&a)[4], const unsigned (&b)[2]) {
    arch::mma_m16n8k16_f16(d, a, b, d);
  }
};

/// Row and column, in the 16x8 tile, of accumulator register r of this lane
/// (the PTX ISA's C/D fragment layout).
__device__ __forceinline__ int accumulator_row(int r) {
  return (threadIdx.x % 32) / 4 + 8 * (r / 2);
}
__device__ __forceinline__ int accumulator_col(int r) {
  return 2 * (threadIdx.x % 4) + r % 2;
}

/// acc += A(0:16, 0:depth) · B(0:depth, 0:8). 16-bit T: fragments per the
/// PTX ISA, A regs (g, 2t..), (g+8, 2t..), (g, 2t+8..), (g+8, 2t+8..); B regs
/// (k 2t.., n g), (k 2t+8.., n g); g = lane / 4, t = lane % 4. The callables
/// see depth indices up to the next multiple of 16 (0 beyond `depth`).
/// float T: each lane's four accumulators on FMA over exactly `depth`.
template <typename T, typename LoadA, typename LoadB>
__device__ __forceinline__ void mma_accumulate(float (&acc)[4], int depth,
                                               LoadA a, LoadB b) {
  const int lane = threadIdx.x % 32, g = lane / 4, t2 = 2 * (lane % 4);
  if constexpr (sizeof(T) == 4) {
    for (int k = 0; k < depth; ++k) {
      const float a0 = a(g, k), a1 = a(g + 8, k);
      const float b0 = b(k, t2), b1 = b(k, t2 + 1);
      acc[0] += a0 * b0;
      acc[1] += a0 * b1;
      acc[2] += a1 * b0;
      acc[3] += a1 * b1;
    }
  } else {
    for (int k0 = 0; k0 < depth; k0 += 16) {
      const unsigned fa[4] = {
          Mma16<T>::pack(a(g, k0 + t2), a(g, k0 + t2 + 1)),
          Mma16<T>::pack(a(g + 8, k0 + t2), a(g + 8, k0 + t2 + 1)),
          Mma16<T>::pack(a(g, k0 + t2 + 8), a(g, k0 + t2 + 9)),
          Mma16<T>::pack(a(g + 8, k0 + t2 + 8), a(g + 8, k0 + t2 + 9))};
      const unsigned fb[2] = {
          Mma16<T>::pack(b(k0 + t2, g), b(k0 + t2 + 1, g)),
          Mma16<T>::pack(b(k0 + t2 + 8, g), b(k0 + t2 + 9, g))};
      Mma16<T>::mma(acc, fa, fb);
    }
  }
}

/// accX[n] += X·B_n and accY[n] += Y·B_n for the first `tiles` of N
/// column tiles, B_n B's columns 8n..8n+7: two products sharing B, and
/// every tile sharing A. a(i, k) returns both A elements (X's as .x, Y's
/// as .y) and b(k, j) B's element at column j across the tiles, so what
/// the products share (a decay factor of A's rows or of B's columns) is
/// computed once, and each fragment is formed once. Otherwise as
/// mma_accumulate.
template <typename T, int N, typename LoadPairA, typename LoadB>
__device__ __forceinline__ void
mma_accumulate_pair_tiles(float (&accX)[N][4], float (&accY)[N][4], int tiles,
                          int depth, LoadPairA a, LoadB b) {
  const int lane = threadIdx.x % 32, g = lane / 4, t2 = 2 * (lane % 4);
  if constexpr (sizeof(T) == 4) {
    for (int k = 0; k < depth; ++k) {
      const float2 a0 = a(g, k), a1 = a(g + 8, k);
#pragma unroll
      for (int n = 0; n < N; ++n)
        if (n < tiles) {
          const float b0 = b(k, 8 * n + t2), b1 = b(k, 8 * n + t2 + 1);
          accX[n][0] += a0.x * b0, accY[n][0] += a0.y * b0;
          accX[n][1] += a0.x * b1, accY[n][1] += a0.y * b1;
          accX[n][2] += a1.x * b0, accY[n][2] += a1.y * b0;
          accX[n][3] += a1.x * b1, accY[n][3] += a1.y * b1;
        }
    }
  } else {
    for (int k0 = 0; k0 < depth; k0 += 16) {
      // Per the A fragment layout: (g, 2t..), (g+8, 2t..), (g, 2t+8..),
      // (g+8, 2t+8..), two elements each.
      float2 e[8];
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        const int i = g + 8 * (r % 2), k = k0 + t2 + 8 * (r / 2);
        e[2 * r] = a(i, k);
        e[2 * r + 1] = a(i, k + 1);
      }
      unsigned fx[4], fy[4];
#pragma unroll
      for (int r = 0; r < 4; ++r) {
        fx[r] = Mma16<T>::pack(e[2 * r].x, e[2 * r + 1].x);
        fy[r] = Mma16<T>::pack(e[2 * r].y, e[2 * r + 1].y);
      }
#pragma unroll
      for (int n = 0; n < N; ++n)
        if (n < tiles) {
          const int j = 8 * n + g;
          const unsigned fb[2] = {
              Mma16<T>::pack(b(k0 + t2, j), b(k0 + t2 + 1, j)),
              Mma16<T>::pack(b(k0 + t2 + 8, j), b(k0 + t2 + 9, j))};
          Mma16<T>::mma(accX[n], fx, fb);
          Mma16<T>::mma(accY[n], fy, fb);
        }
    }
  }
}

/// accX += X·B and accY += Y·B, two products sharing B: one column tile of
/// mma_accumulate_pair_tiles.
template <typename T, typename LoadPairA, typename LoadB>
__device__ __forceinline__ void mma_accumulate_pair(float (&accX)[4],
                                                    float (&accY)[4], int depth,
                                                    LoadPairA a, LoadB b) {
  mma_accumulate_pair_tiles<T, 1>(reinterpret_cast<float(&)[1][4]>(accX),
                                  reinterpret_cast<float(&)[1][4]>(accY), 1,
                                  depth, a, b);
}

/// Operand views for mma_accumulate of a matrix m(r, c) (any callable) of
/// rows × cols, 0 outside it: its rows from i0 or its columns from i0 (mᵀ)
/// as A; its columns from j0 or its rows from j0 (mᵀ) as B.
template <typename M>
__device__ __forceinline__ auto a_rows(M m, int rows, int cols, int i0) {
  return [=](int i, int k) {
    return i0 + i < rows && k < cols ? m(i0 + i, k) : 0.f;
  };
}
template <typename M>
__device__ __forceinline__ auto a_transposed(M m, int rows, int cols, int i0) {
  return [=](int i, int k) {
    return k < rows && i0 + i < cols ? m(k, i0 + i) : 0.f;
  };
}
template <typename M>
__device__ __forceinline__ auto b_columns(M m, int rows, int cols, int j0) {
  return [=](int k, int j) {
    return k < rows && j0 + j < cols ? m(k, j0 + j) : 0.f;
  };
}
template <typename M>
__device__ __forceinline__ auto b_transposed(M m, int rows, int cols, int j0) {
  return [=](int k, int j) {
    return j0 + j < rows && k < cols ? m(j0 + j, k) : 0.f;
  };
}

/// m(r, c) = data[r · pitch + c], in fp32.
template <typename T>
__device__ __forceinline__ auto row_major(const T *data, int pitch) {
  return [=](int r, int c) { return to_float(data[r * pitch + c]); };
}

/// Walks the 16x8 tiles of a rows x cols result, one warp per tile in turn:
/// compute(acc, i0, j0) fills the warp's fragment of the tile at (i0, j0)
/// (with mma_accumulate), then store(i, j, value) runs for each of its
/// elements inside the result. Warp-collective; block size a multiple of 32.
template <typename Compute, typename Store>
__device__ __forceinline__ void
for_each_warp_tile(int rows, int cols, Compute compute, Store store) {
  const int colTiles = (cols + 7) / 8, tiles = (rows + 15) / 16 * colTiles;
  for (int t = threadIdx.x / 32; t < tiles; t += blockDim.x / 32) {
    const int i0 = t / colTiles * 16, j0 = t % colTiles * 8;
    float acc[4] = {0.f, 0.f, 0.f, 0.f};
    compute(acc, i0, j0);
    for (int r = 0; r < 4; ++r) {
      const int i = i0 + accumulator_row(r), j = j0 + accumulator_col(r);
      if (i < rows && j < cols)
        store(i, j, acc[r]);
    }
  }
}

} // namespace tile
} // namespace rudnn
