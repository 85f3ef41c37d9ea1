//===- lstm/products.cuh - A recurrence block's rows times its states -----===//
//
// What every step of a recurrence does in each block: its weight rows times
// a pass of staged per-entry vectors (the forward's previous hidden states
// against its W_hh rows; the backward's gate gradients against W_hh's
// columns). The rows stay in shared memory for all steps or are read from
// L2 each step; 16-bit rows kept on chip meet the staged vectors on tensor
// cores, as do f32 ones with `Tf32` (rounded to TF32); everything else runs
// on FMA.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/tensor.cuh"
#include "rudnn/tile/shared_tile.cuh"
#include "rudnn/tile/warp_tile.cuh"
#include "rudnn/warp.cuh"

namespace rudnn {
namespace lstm {

/// Batch entries a pass over the block's rows covers: the tensor-core
/// product's N, or (fp32 vectors staged) 8 on FMA. Threads of a block.
inline constexpr int kRecurrenceTensorBatch = 16;
inline constexpr int kRecurrenceFmaBatch = 8;
inline constexpr int kRecurrenceThreads = 256;

/// The shared memory of a block's products: `Rows` weight rows of `Depth`
/// elements and the staged vectors, then the sums. 16-bit rows kept on chip
/// go through tensor cores: rows and vectors (rounded to T) in swizzled
/// tiles padded to whole 16 x 16 steps, the warps splitting the rows'
/// 16-row tiles and the depth, their partial sums kept apart (`kSlices`).
/// f32 rows on chip with `Tf32` take the same path in 4-byte tiles.
/// Otherwise each warp takes whole rows on FMA, the vectors staged in fp32.
template <typename T, int Rows, int Depth, bool OnChip, bool Tf32 = false>
struct RowProducts {
  static constexpr bool kTensor = OnChip && (sizeof(T) == 2 || Tf32);
  static constexpr bool kTf32 = Tf32;
  static constexpr int kWarps = kRecurrenceThreads / 32;
  static constexpr int kRows = Rows;
  static constexpr int kRowsPadded = (kRows + 15) / 16 * 16;
  static constexpr int kLength = Depth; // a row's elements
  static constexpr int kDepth = (Depth + 15) / 16 * 16;
  static constexpr int kRowTiles = kRowsPadded / 16;
  static constexpr int kSlices =
      kTensor && kRowTiles < kWarps ? kWarps / kRowTiles : 1;
  static constexpr int kBatch =
      kTensor ? kRecurrenceTensorBatch : kRecurrenceFmaBatch;
  using WeightTile = tile::SharedTile<T, kRowsPadded, kDepth>;
  using StateTile = tile::SharedTile<T, kBatch, kDepth>;

  static constexpr long long kWeightBytes =
      kTensor ? WeightTile::kBytes
      : OnChip
          ? (static_cast<long long>(kRows) * Depth * sizeof(T) + 15) / 16 * 16
          : 0;
  static constexpr long long kStagedBytes =
      kTensor ? StateTile::kBytes : 4ll * kBatch * Depth;
  static constexpr long long kSumsAt =
      kWeightBytes + (kStagedBytes + 15) / 16 * 16;
  /// sums[slice][row][entry], fp32.
  static constexpr long long kSumsBytes = 4ll * kSlices * kRowsPadded * kBatch;
  static constexpr long long kBytes = kSumsAt + kSumsBytes;

  /// Entry i's element k of the staged vectors.
  static __device__ __forceinline__ void stage(unsigned char *shared, int i,
                                               int k, float value) {
    if constexpr (kTensor)
      StateTile{reinterpret_cast<T *>(shared + kWeightBytes)}(i, k) =
          from_float<T>(value);
    else if (k < Depth)
      reinterpret_cast<float *>(shared + kWeightBytes)[i * Depth + k] = value;
  }

  /// The sum of row r's product with entry i over the slices.
  static __device__ __forceinline__ float sum(const unsigned char *shared,
                                              int r, int i) {
    const float *sums = reinterpret_cast<const float *>(shared + kSumsAt);
    float total = 0.0f;
#pragma unroll
    for (int slice = 0; slice < kSlices; ++slice)
      total += sums[(slice * kRowsPadded + r) * kBatch + i];
    return total;
  }

  /// Fills the rows into shared memory, element (r, k) = value(r, k) (0
  /// past the rows and the depth), once for all steps.
  template <typename Value>
  static __device__ __forceinline__ void fill(unsigned char *shared,
                                              Value value) {
    if constexpr (kTensor) {
      const WeightTile weights{reinterpret_cast<T *>(shared)};
      for (int e = threadIdx.x; e < kRowsPadded * kDepth;
           e += kRecurrenceThreads) {
        const int r = e / kDepth, k = e % kDepth;
        weights(r, k) = r < kRows && k < Depth ? value(r, k) : from_float<T>(0);
      }
    } else if constexpr (OnChip) {
      T *weights = reinterpret_cast<T *>(shared);
      for (int e = threadIdx.x; e < kRows * Depth; e += kRecurrenceThreads)
        weights[e] = value(e / Depth, e % Depth);
    }
  }
};

/// A weight row of a product: `step` elements between its elements (1 for a
/// row of a row-major matrix, the row stride for a column); null: no row.
template <typename T> struct WeightRow {
  const T *at;
  long long step;
};

/// sums[slice][row][entry] of one pass: the block's rows times the staged
/// vectors of Shared::kBatch entries. row_at(r) gives row r in global memory
/// (null for a row the block lacks); `vectors`: rows of step 1 start on 16
/// bytes.
template <typename Shared, typename RowAt>
__device__ __forceinline__ void row_products(unsigned char *shared,
                                             RowAt row_at, bool vectors) {
  using T = typename Shared::WeightTile::Element;
  constexpr int kDepth = Shared::kDepth;
  float *sums = reinterpret_cast<float *>(shared + Shared::kSumsAt);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if constexpr (Shared::kTensor) {
    constexpr int kSteps = kDepth / 16;
    const typename Shared::WeightTile weights{reinterpret_cast<T *>(shared)};
    const typename Shared::StateTile staged{
        reinterpret_cast<T *>(shared + Shared::kWeightBytes)};
    for (int item = warp; item < Shared::kRowTiles * Shared::kSlices;
         item += Shared::kWarps) {
      const int rows = item % Shared::kRowTiles * 16,
                slice = item / Shared::kRowTiles;
      tile::WarpTile<T, 16, Shared::kBatch, Shared::kTf32> product;
      product.clear();
      for (int step = slice * kSteps / Shared::kSlices;
           step < (slice + 1) * kSteps / Shared::kSlices; ++step)
        product.template mma<tile::BLayout::NK>(weights, rows, staged, 0,
                                                16 * step);
      float *slice_sums = sums + slice * Shared::kRowsPadded * Shared::kBatch;
      product.for_each_pair([&](int r, int c, float first, float second) {
        slice_sums[(rows + r) * Shared::kBatch + c] = first;
        slice_sums[(rows + r) * Shared::kBatch + c + 1] = second;
      });
    }
  } else {
    constexpr int kLength = Shared::kLength;
    // Each lane takes 16 bytes of a row at a time where rows allow, and
    // the vectors under them four fp32 a shared load.
    constexpr int kVector = Vector16<T>::kCount;
    const float *staged =
        reinterpret_cast<const float *>(shared + Shared::kWeightBytes);
    for (int r = warp; r < Shared::kRows; r += Shared::kWarps) {
      const WeightRow<T> given = row_at(r);
      if (!given.at)
        continue;
      const WeightRow<T> row =
          Shared::kWeightBytes
              ? WeightRow<T>{reinterpret_cast<const T *>(shared) + r * kLength,
                             1}
              : given;
      float acc[Shared::kBatch] = {};
      if (kLength % kVector == 0 && row.step == 1 &&
          (vectors || Shared::kWeightBytes)) {
        for (int k = lane * kVector; k < kLength; k += 32 * kVector) {
          float w[kVector];
          load_vector16(row.at + k, w);
#pragma unroll
          for (int i = 0; i < Shared::kBatch; ++i)
#pragma unroll
            for (int v = 0; v < kVector; v += 4) {
              const float4 h = *reinterpret_cast<const float4 *>(
                  staged + i * kLength + k + v);
              acc[i] +=
                  w[v] * h.x + w[v + 1] * h.y + w[v + 2] * h.z + w[v + 3] * h.w;
            }
        }
      } else {
        for (int k = lane; k < kLength; k += 32) {
          const float w = to_float(row.at[k * row.step]);
#pragma unroll
          for (int i = 0; i < Shared::kBatch; ++i)
            acc[i] += w * staged[i * kLength + k];
        }
      }
#pragma unroll
      for (int i = 0; i < Shared::kBatch; ++i)
        acc[i] = warp_sum(acc[i]);
      if (lane == 0)
#pragma unroll
        for (int i = 0; i < Shared::kBatch; ++i)
          sums[r * Shared::kBatch + i] = acc[i];
    }
  }
}

__device__ __forceinline__ float sigmoid(float x) {
  return 1.0f / (1.0f + expf(-x));
}

} // namespace lstm
} // namespace rudnn
