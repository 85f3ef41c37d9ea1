//===- tile/copy.cuh - Global memory into shared tiles, and back out ------===//

#pragma once

#include "rudnn/arch/cp_async.cuh"
#include "rudnn/tensor.cuh"
#include "rudnn/tile/mma_tile.cuh"
#include "rudnn/tile/shared_tile.cuh"

namespace rudnn {
namespace tile {

/// How a caller knows its source's alignment.
enum class Alignment {
  Checked, // tested at run time: unaligned rows go element by element
  Aligned  // promised: rows 16-byte aligned (the emulator traps otherwise)
};

/// Zeros rows [first, kRows) of `tile` (rows a TMA box or a copy did not
/// bring, or brought from past what the tile stands for). Block-collective.
template <typename Tile>
__device__ __forceinline__ void clear_rows_from(const Tile &tile, int first) {
  using T = typename Tile::Element;
  for (int e = threadIdx.x; e < (Tile::kRows - first) * Tile::kCols;
       e += blockDim.x)
    tile(first + e / Tile::kCols, e % Tile::kCols) = from_float<T>(0.f);
}

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

/// load_tile_async for rows gathered one by one: tile row r from
/// row_at(r) (null: a row of zeros), columns [0, cols). With `vectors`
/// (every row 16-byte aligned) each thread moves whole 16-byte chunks with
/// cp.async, a zero fill naming `anywhere` (an aligned global address) as
/// its source; otherwise element by element at once, unless the caller
/// promised alignment. Block-collective over a 1-D block.
template <Alignment Align = Alignment::Checked, typename Tile, typename RowAt>
__device__ __forceinline__ void
gather_tile_async(const Tile &tile, RowAt row_at, int cols, bool vectors,
                  const typename Tile::Element *anywhere) {
  using T = typename Tile::Element;
  constexpr int n = Tile::kPerChunk;
  for (int id = threadIdx.x; id < Tile::kRows * Tile::kChunks;
       id += blockDim.x) {
    const int r = id / Tile::kChunks, c = id % Tile::kChunks;
    const T *row = row_at(r);
    const int left = cols - n * c;
    const int valid = !row || left <= 0 ? 0 : left < n ? left : n;
    T *to = tile.chunk(r, c);
    const T *from = valid ? row + n * c : anywhere;
    if (Align == Alignment::Aligned || vectors) {
      arch::cp_async_16_zfill(to, from, sizeof(T) * valid);
    } else if constexpr (Align == Alignment::Checked) {
      for (int e = 0; e < n; ++e)
        to[e] = e < valid ? from[e] : from_float<T>(0.f);
    }
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

/// tile(r, c) and tile(r, c + 1) = (first, second) in the tile's type, c
/// even (both in one 16-byte chunk): one 4-byte store for 16-bit tiles.
template <typename T, int Rows, int Cols>
__device__ __forceinline__ void
store_pair(const SharedTile<T, Rows, Cols> &tile, int r, int c, float first,
           float second) {
  if constexpr (sizeof(T) == 2) {
    *reinterpret_cast<unsigned *>(&tile(r, c)) = Mma16<T>::pack(first, second);
  } else {
    tile(r, c) = first;
    tile(r, c + 1) = second;
  }
}

/// (from[0], from[1]) in fp32, both in one load where `from` allows (always,
/// when the caller promised alignment); from[1] only when `both` (0
/// otherwise).
template <Alignment Align = Alignment::Checked, typename T>
__device__ __forceinline__ float2 load_pair(const T *from, bool both) {
  struct alignas(2 * sizeof(T)) Pair {
    T first, second;
  };
  if (both &&
      (Align == Alignment::Aligned ||
       reinterpret_cast<unsigned long long>(from) % sizeof(Pair) == 0)) {
    const Pair pair = *reinterpret_cast<const Pair *>(from);
    return make_float2(to_float(pair.first), to_float(pair.second));
  }
  return make_float2(to_float(from[0]), both ? to_float(from[1]) : 0.f);
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
