//===- tile/copy.cuh - Global memory into shared tiles --------------------===//

#pragma once

#include "rudnn/arch/cp_async.cuh"
#include "rudnn/tensor.cuh"

namespace rudnn {
namespace tile {

/// Starts copying rows [0, rows) x columns [0, cols) of a row-major matrix
/// at `source` (rows `pitch` elements apart) into `tile`; the rest of the
/// tile becomes zeros. Each thread moves whole 16-byte chunks with
/// cp.async, the chunk at the column edge zero-filled, so bounds are
/// checked once per chunk. A source whose rows are not 16-byte aligned is
/// copied element by element instead, at once. Block-collective over a 1-D
/// block; the caller commits and waits as for any cp.async.
template <typename Tile>
__device__ __forceinline__ void
load_tile_async(const Tile &tile, const typename Tile::Element *source,
                long long pitch, int rows, int cols) {
  using T = typename Tile::Element;
  const bool vectors =
      reinterpret_cast<unsigned long long>(source) % 16 == 0 && pitch % 8 == 0;
  for (int id = threadIdx.x; id < Tile::kRows * Tile::kChunks;
       id += blockDim.x) {
    const int r = id / Tile::kChunks, c = id % Tile::kChunks;
    const int left = cols - 8 * c;
    const int valid = r >= rows || left <= 0 ? 0 : left < 8 ? left : 8;
    T *to = tile.chunk(r, c);
    const T *from = source + (valid ? r * pitch + 8 * c : 0);
    if (vectors) {
      arch::cp_async_16_zfill(to, from, 2 * valid);
    } else {
      for (int e = 0; e < 8; ++e)
        to[e] = e < valid ? from[e] : from_float<T>(0.f);
    }
  }
}

} // namespace tile
} // namespace rudnn
