//===- attention/online_softmax.cuh - Softmax one key tile at a time ------===//
//
// The rows of a warp tile of scores, folded in a tile of keys at a time: a
// running maximum per row, the scores turned into exp(s − max) in place, a
// running sum, and per row the factor that rescales whatever was
// accumulated under the previous maximum. Scores arrive in log2 units
// (scaled by log2 e), so each exponential is one ex2. A row with no allowed
// key so far (all −inf) keeps maximum −inf and sum 0, and its exponentials
// are 0, never NaN. Shared by the attention forward, the K/V-cache and the
// backward kernels.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/arch/math.cuh"
#include "rudnn/warp.cuh"

namespace rudnn {
namespace attention {

inline constexpr float kLog2e = 1.4426950408889634f;
inline constexpr float kLn2 = 0.6931471805599453f;

/// The online softmax of the rows a lane holds of a WM-row warp tile
/// (WarpTile::lane_row numbers them). Each row lives in the four lanes of a
/// quad; the sums stay per lane until finish().
template <int WM> struct OnlineSoftmax {
  static constexpr int kRows = WM / 8;
  float max[kRows], sum[kRows];
  float toLog2; // the scores' scale to log2 units

  /// No row seen yet; scores come scaled by `scaleToLog2` from log2 units.
  __device__ __forceinline__ void clear(float scaleToLog2 = 1.f) {
    toLog2 = scaleToLog2;
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      max[r] = -__int_as_float(0x7f800000);
      sum[r] = 0.f;
    }
  }

  /// Folds in `scores` (a WarpTile, toLog2 from log2 units, −inf where
  /// masked): they become exp2(toLog2 · (s − max)) in place, the scale
  /// and the shift one FFMA; rescale[r] multiplies what row r accumulated
  /// before.
  template <typename Tile>
  __device__ __forceinline__ void update(Tile &scores,
                                         float (&rescale)[kRows]) {
    float tileMax[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r)
      tileMax[r] = -__int_as_float(0x7f800000);
    scores.update_pairs([&](int row, int, float &first, float &second) {
      const int r = Tile::lane_row(row);
      tileMax[r] = fmaxf(tileMax[r], fmaxf(first, second));
    });
    float base[kRows];
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      // The quad's lanes hold the row's columns.
      tileMax[r] =
          fmaxf(tileMax[r], __shfl_xor_sync(kFullWarpMask, tileMax[r], 1));
      tileMax[r] =
          fmaxf(tileMax[r], __shfl_xor_sync(kFullWarpMask, tileMax[r], 2));
      const float next = fmaxf(max[r], tileMax[r]);
      const bool empty = next == -__int_as_float(0x7f800000);
      rescale[r] = empty ? 1.f : arch::ex2_approx((max[r] - next) * toLog2);
      base[r] = empty ? 0.f : next * toLog2;
      max[r] = next;
      sum[r] *= rescale[r];
    }
    scores.update_pairs([&](int row, int, float &first, float &second) {
      const int r = Tile::lane_row(row);
      first = arch::ex2_approx(fmaf(first, toLog2, -base[r]));
      second = arch::ex2_approx(fmaf(second, toLog2, -base[r]));
      sum[r] += first + second;
    });
  }

  /// Per row: the factor normalising its accumulators (1 / sum, 0 for a
  /// row with no allowed key) and its log-sum-exp in natural log (−inf
  /// then).
  __device__ __forceinline__ void finish(float (&normalize)[kRows],
                                         float (&lse)[kRows]) {
#pragma unroll
    for (int r = 0; r < kRows; ++r) {
      float total = sum[r];
      total += __shfl_xor_sync(kFullWarpMask, total, 1);
      total += __shfl_xor_sync(kFullWarpMask, total, 2);
      normalize[r] = total > 0.f ? 1.f / total : 0.f;
      lse[r] = total > 0.f ? (max[r] * toLog2 + log2f(total)) * kLn2
                           : -__int_as_float(0x7f800000);
    }
  }
};

} // namespace attention
} // namespace rudnn
