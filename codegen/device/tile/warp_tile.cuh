//===- tile/warp_tile.cuh - One warp's block of a product on tensor cores -===//
//
// A warp's WM x WN block of D += A·B in fp32: WM/16 x WN/8 mma tiles, each
// its own accumulator, so the 16-deep steps of different tiles overlap. A
// step loads each A fragment once for all WN columns and each pair of B
// fragments once for all WM rows, from shared tiles through ldmatrix. Tiles
// of fp32 take the same steps on FMA, or with `Tf32` on tensor cores (two
// m16n8k8 halves, operands rounded to TF32), into the same accumulator
// layout, so a kernel's products are written once for every input type.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/arch/mma.cuh"
#include "rudnn/tile/fragment.cuh"
#include "rudnn/tile/mma_tile.cuh"

namespace rudnn {
namespace tile {

template <typename T>
__device__ __forceinline__ void mma16(float (&d)[4], const unsigned (&a)[4],
                                      unsigned b0, unsigned b1);
template <>
__device__ __forceinline__ void mma16<__nv_bfloat16>(float (&d)[4],
                                                     const unsigned (&a)[4],
                                                     unsigned b0, unsigned b1) {
  const unsigned b[2] = {b0, b1};
  arch::mma_m16n8k16_bf16(d, a, b, d);
}
template <>
__device__ __forceinline__ void
mma16<__half>(float (&d)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  const unsigned b[2] = {b0, b1};
  arch::mma_m16n8k16_f16(d, a, b, d);
}

template <typename T, int WM, int WN, bool Tf32 = false> struct WarpTile {
  static_assert(WM % 16 == 0 && WN % 16 == 0,
                "warp tiles are whole 16x16 steps");
  using Atom = arch::Mma16816;
  float acc[WM / 16][WN / 8][4];
  static constexpr int kAccumulators = WM / 16 * (WN / 8) * 4;
  static constexpr int kRows = WM, kColumns = WN;

  __device__ __forceinline__ void clear() {
#pragma unroll
    for (int e = 0; e < kAccumulators; ++e)
      (&acc[0][0][0])[e] = 0.f;
  }

  /// acc += factor · other.acc, element by element.
  __device__ __forceinline__ void add_scaled(const WarpTile &other,
                                             float factor) {
#pragma unroll
    for (int e = 0; e < kAccumulators; ++e)
      (&acc[0][0][0])[e] += factor * (&other.acc[0][0][0])[e];
  }

  /// acc += A(m0.., k0..k0+15) · B(k0..k0+15, n0..), the tiles' origins.
  template <BLayout LayoutB, ALayout LayoutA = ALayout::MK, typename TileA,
            typename TileB>
  __device__ __forceinline__ void mma(const TileA &a, int m0, const TileB &b,
                                      int n0, int k0) {
    mma<LayoutB, LayoutA>(a, m0, k0, b, n0, k0);
  }

  /// acc += A(m0.., ka..ka+15) · B(kb..kb+15, n0..): the same 16-deep step
  /// where A's tile spans more of the depth than B's (a whole operand
  /// against one pipeline stage of the other).
  template <BLayout LayoutB, ALayout LayoutA = ALayout::MK, typename TileA,
            typename TileB>
  __device__ __forceinline__ void mma(const TileA &a, int m0, int ka,
                                      const TileB &b, int n0, int kb) {
    if constexpr (sizeof(T) == 4 && Tf32)
      mma_tf32<LayoutB, LayoutA>(a, m0, ka, b, n0, kb);
    else if constexpr (sizeof(T) == 4)
      mma_fma<LayoutB, LayoutA>(a, m0, ka, b, n0, kb);
    else
      mma_tensor<LayoutB, LayoutA>(a, m0, ka, b, n0, kb);
  }

  /// The A fragments of columns k0..k0+15 of this tile's accumulators,
  /// rounded to T (16-bit): two adjacent 8-column accumulator tiles hold, in
  /// each lane, exactly the elements of one 16-deep A fragment, so a product
  /// feeds the next without passing through shared memory. k0 a multiple
  /// of 16, a constant once unrolled.
  __device__ __forceinline__ void a_fragments(unsigned (&fa)[WM / 16][4],
                                              int k0) const {
    static_assert(sizeof(T) == 2, "register operands are 16-bit");
    const int j = k0 / 8;
#pragma unroll
    for (int i = 0; i < WM / 16; ++i) {
      fa[i][0] = Mma16<T>::pack(acc[i][j][0], acc[i][j][1]);
      fa[i][1] = Mma16<T>::pack(acc[i][j][2], acc[i][j][3]);
      fa[i][2] = Mma16<T>::pack(acc[i][j + 1][0], acc[i][j + 1][1]);
      fa[i][3] = Mma16<T>::pack(acc[i][j + 1][2], acc[i][j + 1][3]);
    }
  }

  /// acc += A · B(kb..kb+15, n0..) with A's 16 depths already in registers
  /// (a_fragments of another tile), B from its shared tile.
  template <BLayout LayoutB, typename TileB>
  __device__ __forceinline__ void
  mma_registers(const unsigned (&fa)[WM / 16][4], const TileB &b, int n0,
                int kb) {
    static_assert(sizeof(T) == 2, "register operands are 16-bit");
#pragma unroll
    for (int j = 0; j < WN / 16; ++j) {
      unsigned fb[4];
      load_b_pair<LayoutB>(fb, b, n0 + 16 * j, kb);
#pragma unroll
      for (int i = 0; i < WM / 16; ++i) {
        mma16<T>(acc[i][2 * j], fa[i], fb[0], fb[1]);
        mma16<T>(acc[i][2 * j + 1], fa[i], fb[2], fb[3]);
      }
    }
  }

  /// Which of this lane's rows (0 .. WM/8 − 1, in the order of
  /// update_pairs) warp-tile row `row` is.
  static __device__ __forceinline__ int lane_row(int row) {
    return 2 * (row / 16) + row % 16 / 8;
  }

  /// visit(row, col, first, second) for every pair of accumulators at
  /// (row, col) and (row, col + 1), in warp-tile coordinates, by reference:
  /// a walk rescales its state in place.
  template <typename Visit>
  __device__ __forceinline__ void update_pairs(Visit visit) {
    pairs(*this, visit);
  }

  /// visit(row, col, mine0, mine1, other0, other1) for every pair of this
  /// tile's and the same pair of `other`'s accumulators, by reference: an
  /// element-wise step over two products of one shape.
  template <typename Visit>
  __device__ __forceinline__ void update_pairs_with(WarpTile &other,
                                                    Visit visit) {
    each_pair([&](int row, int col, int i, int j, int e) {
      visit(row, col, acc[i][j][e], acc[i][j][e + 1], other.acc[i][j][e],
            other.acc[i][j][e + 1]);
    });
  }

  /// store(row, col, first, second) for every pair, by value: an epilogue
  /// writes both with one store.
  template <typename Store>
  __device__ __forceinline__ void for_each_pair(Store store) const {
    pairs(*this, store);
  }

  /// store(row, col, value) for every accumulator, in warp-tile coordinates.
  template <typename Store>
  __device__ __forceinline__ void for_each(Store store) const {
    for_each_pair([&](int r, int c, float first, float second) {
      store(r, c, first);
      store(r, c + 1, second);
    });
  }

private:
  /// The 16-bit step: A fragments through ldmatrix once for all WN columns,
  /// B pairs once for all WM rows.
  template <BLayout LayoutB, ALayout LayoutA, typename TileA, typename TileB>
  __device__ __forceinline__ void mma_tensor(const TileA &a, int m0, int ka,
                                             const TileB &b, int n0, int kb) {
    unsigned fa[WM / 16][4];
#pragma unroll
    for (int i = 0; i < WM / 16; ++i)
      load_a<LayoutA>(fa[i], a, m0 + 16 * i, ka);
    mma_registers<LayoutB>(fa, b, n0, kb);
  }

  /// The fp32 step: each lane's accumulators (Atom's C layout) over the 16
  /// depths in turn, A's two rows and B's two columns read once a depth.
  template <BLayout LayoutB, ALayout LayoutA, typename TileA, typename TileB>
  __device__ __forceinline__ void mma_fma(const TileA &a, int m0, int ka,
                                          const TileB &b, int n0, int kb) {
    const int lane = threadIdx.x % 32, g = lane / 4, t2 = 2 * (lane % 4);
    auto elementA = [&](int m, int k) {
      return LayoutA == ALayout::MK ? a(m, k) : a(k, m);
    };
    auto elementB = [&](int k, int n) {
      return LayoutB == BLayout::KN ? b(k, n) : b(n, k);
    };
#pragma unroll 4
    for (int k = 0; k < 16; ++k) {
      float fa[WM / 16][2];
#pragma unroll
      for (int i = 0; i < WM / 16; ++i) {
        fa[i][0] = elementA(m0 + 16 * i + g, ka + k);
        fa[i][1] = elementA(m0 + 16 * i + g + 8, ka + k);
      }
#pragma unroll
      for (int j = 0; j < WN / 8; ++j) {
        const float b0 = elementB(kb + k, n0 + 8 * j + t2),
                    b1 = elementB(kb + k, n0 + 8 * j + t2 + 1);
#pragma unroll
        for (int i = 0; i < WM / 16; ++i) {
          acc[i][j][0] += fa[i][0] * b0;
          acc[i][j][1] += fa[i][0] * b1;
          acc[i][j][2] += fa[i][1] * b0;
          acc[i][j][3] += fa[i][1] * b1;
        }
      }
    }
  }

  /// The TF32 step: two 8-deep halves, each A fragment read once for all
  /// WN columns and each B fragment once for all WM rows, element by
  /// element from the shared tiles (ldmatrix transposes 16-bit elements
  /// only) and rounded to TF32.
  template <BLayout LayoutB, ALayout LayoutA, typename TileA, typename TileB>
  __device__ __forceinline__ void mma_tf32(const TileA &a, int m0, int ka,
                                           const TileB &b, int n0, int kb) {
    const int lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    auto elementA = [&](int m, int k) {
      return arch::to_tf32(LayoutA == ALayout::MK ? a(m, k) : a(k, m));
    };
    auto elementB = [&](int k, int n) {
      return arch::to_tf32(LayoutB == BLayout::KN ? b(k, n) : b(n, k));
    };
#pragma unroll
    for (int half = 0; half < 16; half += 8) {
      unsigned fa[WM / 16][4];
#pragma unroll
      for (int i = 0; i < WM / 16; ++i) {
        const int m = m0 + 16 * i + g, k = ka + half + t;
        fa[i][0] = elementA(m, k);
        fa[i][1] = elementA(m + 8, k);
        fa[i][2] = elementA(m, k + 4);
        fa[i][3] = elementA(m + 8, k + 4);
      }
#pragma unroll
      for (int j = 0; j < WN / 8; ++j) {
        const int n = n0 + 8 * j + g, k = kb + half + t;
        const unsigned fb[2] = {elementB(k, n), elementB(k + 4, n)};
#pragma unroll
        for (int i = 0; i < WM / 16; ++i)
          arch::mma_m16n8k8_tf32(acc[i][j], fa[i], fb, acc[i][j]);
      }
    }
  }

  /// visit(row, col, i, j, e) for every pair of accumulators acc[i][j][e],
  /// acc[i][j][e + 1] at (row, col), (row, col + 1).
  template <typename Visit>
  static __device__ __forceinline__ void each_pair(Visit visit) {
    const int lane = threadIdx.x % 32;
#pragma unroll
    for (int i = 0; i < WM / 16; ++i)
#pragma unroll
      for (int j = 0; j < WN / 8; ++j)
#pragma unroll
        for (int e = 0; e < 4; e += 2)
          visit(16 * i + Atom::c_row(lane, e), 8 * j + Atom::c_col(lane, e), i,
                j, e);
  }

  template <typename Self, typename Visit>
  static __device__ __forceinline__ void pairs(Self &self, Visit visit) {
    each_pair([&](int row, int col, int i, int j, int e) {
      visit(row, col, self.acc[i][j][e], self.acc[i][j][e + 1]);
    });
  }
};

} // namespace tile
} // namespace rudnn
