//===- tile/shared_tile.cuh - Tiles in shared memory ----------------------===//
//
// A Rows x Cols tile of 16-bit or 32-bit elements stored as 16-byte chunks
// (8 or 4 elements), placed so that the eight rows an ldmatrix phase reads, one
// chunk each, fall in eight different bank groups: power-of-two rows XOR
// the chunk index with the row (the 128-byte swizzle; narrower rows with
// the row's 128-byte line), other widths are padded to an odd number of
// chunks. Chunks stay whole, so cp.async fills them 16 bytes at a time.
//
//===----------------------------------------------------------------------===//

#pragma once

namespace rudnn {
namespace tile {

template <typename T, int Rows, int Cols> struct SharedTile {
  static_assert(sizeof(T) == 2 || sizeof(T) == 4,
                "tiles of 16-bit or 32-bit elements");
  using Element = T;
  static constexpr int kPerChunk = 16 / sizeof(T);
  static_assert(Rows > 0 && Cols > 0 && Cols % kPerChunk == 0,
                "rows are whole 16-byte chunks");
  static constexpr int kRows = Rows, kCols = Cols;
  static constexpr int kChunks = Cols / kPerChunk; // per row
  static constexpr bool kSwizzled = (kChunks & (kChunks - 1)) == 0;
  static constexpr int kPitchChunks =
      kSwizzled || kChunks % 2 ? kChunks : kChunks + 1;
  static constexpr int kElements = Rows * kPitchChunks * kPerChunk;
  static constexpr int kBytes = kElements * sizeof(T);

  T *data; // kBytes of shared memory, 16-byte aligned

  /// Where logical chunk c of row r is stored in that row.
  static __device__ __forceinline__ int stored_chunk(int r, int c) {
    if constexpr (!kSwizzled || kChunks == 1)
      return c;
    else if constexpr (kChunks >= 8)
      return c ^ (r % 8);
    else
      return c ^ (r / (8 / kChunks) % kChunks);
  }

  /// The 16 bytes of elements (r, c·kPerChunk ..).
  __device__ __forceinline__ T *chunk(int r, int c) const {
    return data + (r * kPitchChunks + stored_chunk(r, c)) * kPerChunk;
  }

  __device__ __forceinline__ T &operator()(int r, int c) const {
    return chunk(r, c / kPerChunk)[c % kPerChunk];
  }
};

/// A Rows x Cols tile stored row after row, Cols elements apart: for rows
/// consecutive threads read an element each (no ldmatrix), filled by
/// load_tile_async in place of a plain [Rows][Cols] array.
template <typename T, int Rows, int Cols> struct RowMajorTile {
  using Element = T;
  static constexpr int kPerChunk = 16 / sizeof(T);
  static_assert(Cols % kPerChunk == 0, "rows are whole 16-byte chunks");
  static constexpr int kRows = Rows, kCols = Cols;
  static constexpr int kChunks = Cols / kPerChunk; // per row

  T *data; // Rows * Cols elements, 16-byte aligned

  __device__ __forceinline__ T *chunk(int r, int c) const {
    return data + r * Cols + c * kPerChunk;
  }
  __device__ __forceinline__ T &operator()(int r, int c) const {
    return data[r * Cols + c];
  }
};

/// A Rows x 64·Blocks tile of 16-bit elements as wgmma and TMA take it:
/// column blocks of Rows x 64 (128-byte rows, the 128-byte swizzle) one
/// after another, each 1024-byte aligned when the first is (Rows a multiple
/// of 8).
template <typename T, int Rows, int Blocks> struct ColumnBlocks {
  static_assert(sizeof(T) == 2 && Rows % 8 == 0,
                "16-bit rows of 128 bytes, whole 1024-byte atoms");
  using Element = T;
  using Block = SharedTile<T, Rows, 64>;
  static constexpr int kRows = Rows, kCols = 64 * Blocks;
  static constexpr int kElements = Blocks * Block::kElements;
  static constexpr int kPerChunk = Block::kPerChunk;
  static constexpr int kChunks = Blocks * Block::kChunks; // per row

  T *data; // kElements, 1024-byte aligned

  __device__ __forceinline__ T *block(int b) const {
    return data + b * Block::kElements;
  }
  /// The 16 bytes of elements (r, c·8 ..), for ldmatrix.
  __device__ __forceinline__ T *chunk(int r, int c) const {
    return Block{block(c / Block::kChunks)}.chunk(r, c % Block::kChunks);
  }
  __device__ __forceinline__ T &operator()(int r, int c) const {
    return Block{block(c / 64)}(r, c % 64);
  }
};

} // namespace tile
} // namespace rudnn
