//===- tile/fragment.cuh - mma operands from shared tiles via ldmatrix ----===//
//
// Fragments in the layouts of arch::Mma16816, loaded with one ldmatrix per
// 16x16 (A) or 16x16-wide pair of 8-column B operands. B comes from a tile
// stored [n][k] (k contiguous: the Kᵀ of Q·Kᵀ) or [k][n] (n contiguous: the
// V of P·V, through ldmatrix .trans). Row and column origins are multiples
// of 16 (k) and 8 (n); warp-collective.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/arch/ldmatrix.cuh"

namespace rudnn {
namespace tile {

/// How a B operand is stored.
enum class BLayout { NK, KN };

/// The A operand rows r0..r0+15, depth k0..k0+15, of a row-major tile.
template <typename Tile>
__device__ __forceinline__ void load_a(unsigned (&a)[4], const Tile &tile,
                                       int r0, int k0) {
  const int lane = threadIdx.x % 32;
  // Matrices 0-3: rows 0-7 / 8-15 at k0, then the same at k0 + 8.
  arch::ldmatrix_x4(a, tile.chunk(r0 + lane % 16, k0 / 8 + lane / 16));
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
