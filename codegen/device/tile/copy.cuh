//===- tile/copy.cuh - Global memory into shared tiles, and back out ------===//

#pragma once

#include "rudnn/arch/cp_async.cuh"
#include "rudnn/tensor.cuh"
#include "rudnn/tile/mma_tile.cuh"

namespace rudnn {
namespace tile {

/// How a caller knows its source's alignment.
enum class Alignment {
  Checked, // tested at run time: unaligned rows go element by element
  Aligned  // promised: rows 16-byte aligned (the emulator traps otherwise)
};

/// Starts copying rows [0, rows) x columns [0, cols) of a row-major matrix
/// at `source` (rows `pitch` elements apart) into `tile`; the rest of the
/// tile becomes zeros. Each thread moves whole 16-byte chunks with
/// cp.async, the chunk at the column edge zero-filled, so bounds are
/// checked once per chunk. A source whose rows are not 16-byte aligned is
/// copied element by element instead, at once, unless the caller promised
/// alignment (then no element-wise path is compiled in). Block-collective
/// over a 1-D block; the caller commits and waits as for any cp.async.
template <Alignment Align = Alignment::Checked, typename Tile>
__device__ __forceinline__ void
load_tile_async(const Tile &tile, const typename Tile::Element *source,
                long long pitch, int rows, int cols) {
  using T = typename Tile::Element;
  constexpr int n = Tile::kPerChunk;
  const bool vectors =
      Align == Alignment::Aligned ||
      (reinterpret_cast<unsigned long long>(source) % 16 == 0 &&
       pitch % n == 0);
  for (int id = threadIdx.x; id < Tile::kRows * Tile::kChunks;
       id += blockDim.x) {
    const int r = id / Tile::kChunks, c = id % Tile::kChunks;
    const int left = cols - n * c;
    const int valid = r >= rows || left <= 0 ? 0 : left < n ? left : n;
    T *to = tile.chunk(r, c);
    const T *from = source + (valid ? r * pitch + n * c : 0);
    if (vectors) {
      arch::cp_async_16_zfill(to, from, sizeof(T) * valid);
    } else if constexpr (Align == Alignment::Checked) {
      for (int e = 0; e < n; ++e)
        to[e] = e < valid ? from[e] : from_float<T>(0.f);
    }
  }
}

/// Copies rows [0, rows) x columns [0, cols) of a row-major fp32 matrix
/// into `tile`, rounded to its element type; the rest becomes zeros. At
/// once (a conversion cannot go through cp.async), a 16-byte chunk of the
/// tile from two 16-byte loads where the source allows. Block-collective
/// over a 1-D block.
template <typename Tile>
__device__ __forceinline__ void
load_tile_converted(const Tile &tile, const float *source, long long pitch,
                    int rows, int cols) {
  using T = typename Tile::Element;
  static_assert(Tile::kPerChunk == 8, "a tile of 16-bit elements");
  const bool vectors =
      reinterpret_cast<unsigned long long>(source) % 16 == 0 && pitch % 4 == 0;
  for (int id = threadIdx.x; id < Tile::kRows * Tile::kChunks;
       id += blockDim.x) {
    const int r = id / Tile::kChunks, c = id % Tile::kChunks;
    const int left = cols - 8 * c;
    const int valid = r >= rows || left <= 0 ? 0 : left < 8 ? left : 8;
    const float *from = source + (valid ? r * pitch + 8 * c : 0);
    float values[8];
    if (vectors && valid == 8) {
      const float4 low = reinterpret_cast<const float4 *>(from)[0];
      const float4 high = reinterpret_cast<const float4 *>(from)[1];
      values[0] = low.x, values[1] = low.y, values[2] = low.z;
      values[3] = low.w, values[4] = high.x, values[5] = high.y;
      values[6] = high.z, values[7] = high.w;
    } else {
      for (int e = 0; e < 8; ++e)
        values[e] = e < valid ? from[e] : 0.f;
    }
    T *to = tile.chunk(r, c);
    for (int e = 0; e < 8; ++e)
      to[e] = from_float<T>(values[e]);
  }
}

/// to[0..1] = (first, second), one 8-byte store where `to` allows; `second`
/// only when `both`.
__device__ __forceinline__ void store_pair(float *to, float first, float second,
                                           bool both) {
  if (both && reinterpret_cast<unsigned long long>(to) % 8 == 0) {
    *reinterpret_cast<float2 *>(to) = make_float2(first, second);
  } else {
    to[0] = first;
    if (both)
      to[1] = second;
  }
}

/// The same for 16-bit elements, one 4-byte store where `to` allows.
template <typename T>
__device__ __forceinline__ void store_pair(T *to, float first, float second,
                                           bool both) {
  if (both && reinterpret_cast<unsigned long long>(to) % 4 == 0) {
    *reinterpret_cast<unsigned *>(to) = Mma16<T>::pack(first, second);
  } else {
    to[0] = from_float<T>(first);
    if (both)
      to[1] = from_float<T>(second);
  }
}

/// to[0 .. count) = values[0 .. count), count ≤ 8: one or two 16-byte
/// stores where `to` is aligned and the chunk whole.
template <typename T>
__device__ __forceinline__ void store_chunk(T *to, const T (&values)[8],
                                            int count) {
  if (count == 8 && reinterpret_cast<unsigned long long>(to) % 16 == 0) {
#pragma unroll
    for (int n = 0; n < 8 * (int)sizeof(T) / 16; ++n)
      reinterpret_cast<uint4 *>(to)[n] =
          reinterpret_cast<const uint4 *>(values)[n];
  } else {
    for (int n = 0; n < count; ++n)
      to[n] = values[n];
  }
}

} // namespace tile
} // namespace rudnn
