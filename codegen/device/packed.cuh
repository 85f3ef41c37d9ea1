//===- packed.cuh - Packed variable-length sequences ----------------------===//
//
// Entries of their own lengths packed along one dim, entry b the rows
// offsets[b] to offsets[b + 1] (FlashAttention's and flash-linear-attention's
// cu_seqlens). Kernels read the offsets on the device; the host never does.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/arch/host_visible.cuh"
#include "rudnn/warp.cuh"

extern "C" {
/// Set by a kernel that reads offsets breaking their contract (start at 0,
/// never decrease, end at the packed rows): the kernel clamps them, so it
/// touches nothing outside its tensors, but rows outside every entry are
/// left unwritten. The runtime reads and clears the word of each module
/// a call launched when the stream is synchronized, and reports the call.
/// Never read on the device.
RUDNN_HOST_VISIBLE __device__ unsigned int rudnn_index_fault;
}

namespace rudnn {

/// The rows of one batch entry: `count` from `first`.
struct Rows {
  int first, count;
};

/// Entry b's rows of a packed tensor of `total` rows, by its offsets
/// (clamped, so offsets out of order or range read nothing outside it; they
/// raise the index fault). With `entries`, the last entry's offsets must
/// also end at `total`.
__device__ __forceinline__ Rows packed_rows(const int *offsets, int b,
                                            int total, int entries = 0) {
  int first = offsets[b], last = offsets[b + 1];
  if (first < 0 || last < first || last > total || (b == 0 && first != 0) ||
      (b == entries - 1 && last != total))
    *static_cast<volatile unsigned int *>(&rudnn_index_fault) = 1u;
  first = first < 0 ? 0 : first < total ? first : total;
  last = last < first ? first : last < total ? last : total;
  return {first, last - first};
}

/// Which entry packed tile `tile` is in, each entry's rows in tiles of
/// `Rows` rows and the entries' tiles in order: `entry`, and `before` the
/// tiles of the entries before it; false past the last tile.
/// Warp-collective.
template <int TileRows>
__device__ __forceinline__ bool packed_tile(const int *offsets, int entries,
                                            int total, int tile, int &entry,
                                            int &before) {
  return warp_find_run(
      entries, tile,
      [&](int e) {
        return (packed_rows(offsets, e, total, entries).count + TileRows -
                1) /
               TileRows;
      },
      entry, before);
}

/// The tiles of `Rows` rows of the entries before `entry`, in every lane.
/// Warp-collective.
template <int TileRows>
__device__ __forceinline__ int packed_tiles_before(const int *offsets,
                                                   int entry, int total) {
  int tiles = 0;
  for (int e = threadIdx.x % 32; e < entry; e += 32)
    tiles += (packed_rows(offsets, e, total).count + TileRows - 1) / TileRows;
  return warp_sum(tiles);
}

} // namespace rudnn
