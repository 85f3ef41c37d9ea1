//===- tile/fragment.cuh - mma operands from shared tiles via ldmatrix ----===//
//
// Fragments in the layouts of arch::Mma16816, loaded with one ldmatrix per
// 16x16 (A) or 16x16-wide pair of 8-column B operands. A comes from a tile
// stored [m][k] or [k][m] (the Kᵀ of Kᵀ·U, through ldmatrix .trans); B from
// a tile stored [n][k] (k contiguous: the Kᵀ of Q·Kᵀ) or [k][n] (n
// contiguous: the V of P·V, through .trans). Row and column origins are
// multiples of 16 (k) and 8 (m, n); warp-collective.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/arch/ldmatrix.cuh"

namespace rudnn {
namespace tile {

/// How an A or a B operand is stored.
enum class ALayout { MK, KM };
enum class BLayout { NK, KN };

/// The A operand rows m0..m0+15, depth k0..k0+15.
template <ALayout Layout = ALayout::MK, typename Tile>
__device__ __forceinline__ void load_a(unsigned (&a)[4], const Tile &tile,
                                       int m0, int k0) {
  const int lane = threadIdx.x % 32;
  // Matrices 0-3: (m0.., k0), (m0 + 8.., k0), (m0.., k0 + 8), (m0 + 8..,
  // k0 + 8); lanes 8q..8q+7 address the rows of matrix q.
  if constexpr (Layout == ALayout::MK)
    arch::ldmatrix_x4(a, tile.chunk(m0 + lane % 16, k0 / 8 + lane / 16));
  else
    arch::ldmatrix_x4_trans(
        a, tile.chunk(k0 + lane % 8 + 8 * (lane / 16), m0 / 8 + lane / 8 % 2));
}

/// Two B operands, depth k0..k0+15, columns n0..n0+7 (b[0], b[1]) and
/// n0+8..n0+15 (b[2], b[3]).
template <BLayout Layout, typename Tile>
__device__ __forceinline__ void load_b_pair(unsigned (&b)[4], const Tile &tile,
                                            int n0, int k0) {
  const int lane = threadIdx.x % 32;
  if constexpr (Layout == BLayout::NK) {
    // Matrices: (n0.., k0), (n0.., k0 + 8), (n0 + 8.., k0), (n0 + 8.., k0 + 8).
    arch::ldmatrix_x4(
        b, tile.chunk(n0 + lane % 8 + 8 * (lane / 16), k0 / 8 + lane / 8 % 2));
  } else {
    // Rows k0..k0+15 of columns n0.., then of n0 + 8.., transposed.
    arch::ldmatrix_x4_trans(b, tile.chunk(k0 + lane % 16, n0 / 8 + lane / 16));
  }
}

} // namespace tile
} // namespace rudnn
