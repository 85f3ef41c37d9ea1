//===- norm/rows.cuh - Moments, LayerNorm and RMSNorm over rows -----------===//
//
// x [M, N, C] (M may be 1), normalised along C. `Threads` threads share a
// row: a warp (32) or a whole block. Each holds its share of the row in
// registers as Items vectors of Vector elements (16 bytes a load where
// rows allow), element (i · Threads + t) · Vector + v, so a warp's loads
// are contiguous. h = x + residual when given (and written back when
// asked), then its moments: Welford summaries of h − pivot merged up the
// threads (the pivot, the row's first element, keeps data far from zero
// exact), or for RMSNorm the sum of squares. Very long rows are split
// over S blocks: `row_partials` writes each chunk's summary, `normalize`
// then merges the row's S summaries before normalising its chunk.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/norm/welford.cuh"
#include "rudnn/tensor.cuh"

namespace rudnn {
namespace norm {

enum Kind { kMoments = 0, kLayerNorm = 1, kRmsNorm = 2 };

/// Strides, in elements, of an [M, N, C] view's two outer dims.
struct Rows {
  long long outer, inner;

  __device__ __forceinline__ long long at(long long m, long long n) const {
    return m * outer + n * inner;
  }
};

/// Whether every row of an [M, N, C] view starts on 16 bytes (a null view
/// does not count against it).
template <typename T>
__device__ __forceinline__ bool rows_aligned16(const T *base, Rows at) {
  return !base || (rudnn::rows_aligned16(base, at.inner) &&
                   at.outer * static_cast<long long>(sizeof(T)) % 16 == 0);
}

template <typename T> struct NormParams {
  const T *x, *residual; // residual may be null
  const T *gamma, *beta; // [C], either may be null
  T *y, *h;              // y null for moments; h null unless asked
  float *mean, *second;  // [M·N]: mean, then rstd (var for moments)
  float *partials;       // split rows: [M·N, S, 3] summaries
  Rows x_at, residual_at, y_at, h_at;
  int rows, outer; // N, M
  float eps;

  /// Whether the rows read, and those written, allow 16-byte accesses.
  __device__ __forceinline__ bool loads_aligned() const {
    return rows_aligned16(x, x_at) && rows_aligned16(residual, residual_at);
  }
  __device__ __forceinline__ bool stores_aligned() const {
    return rows_aligned16<T>(y, y_at) && rows_aligned16<T>(h, h_at);
  }
};

/// Elements [Begin, Begin + Span) of one row as `Threads` threads hold
/// them: Items vectors of Vector elements each, h = x + residual in fp32.
template <typename T, int Span, int Threads, int Vector> struct RowShare {
  static constexpr int kItems =
      (Span + Threads * Vector - 1) / (Threads * Vector);
  float values[kItems * Vector];

  /// Column of value (i, v) held by thread t, relative to the span.
  __device__ __forceinline__ static int column(int t, int i, int v) {
    return (i * Threads + t) * Vector + v;
  }

  /// Loads `count` ≤ Span elements from `x` (and `residual`), zeros past;
  /// 16 bytes a load with `vectors` (both start on 16 bytes).
  __device__ __forceinline__ void load(const T *x, const T *residual, int t,
                                       int count, bool vectors) {
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const int c = column(t, i, 0);
      float *to = values + i * Vector;
      if constexpr (Vector > 1) {
        if (vectors) {
          // Rows of whole vectors: a vector is inside or past the end.
          float r[Vector];
          if (c < count) {
            load_vector16(x + c, *reinterpret_cast<float(*)[Vector]>(to));
            if (residual) {
              load_vector16(residual + c, r);
#pragma unroll
              for (int v = 0; v < Vector; ++v)
                to[v] += r[v];
            }
          } else {
#pragma unroll
            for (int v = 0; v < Vector; ++v)
              to[v] = 0.0f;
          }
          continue;
        }
      }
#pragma unroll
      for (int v = 0; v < Vector; ++v)
        to[v] = c + v < count
                    ? to_float(x[c + v]) +
                          (residual ? to_float(residual[c + v]) : 0.0f)
                    : 0.0f;
    }
  }

  /// Stores, for each vector of values below `count`, what f(values,
  /// column, out) makes of it; 16 bytes a store with `vectors`. (Rows of
  /// Vector > 1 hold whole vectors: one is inside or past the end.)
  template <typename F>
  __device__ __forceinline__ void store(T *to, int t, int count, bool vectors,
                                        F f) const {
#pragma unroll
    for (int i = 0; i < kItems; ++i) {
      const int c = column(t, i, 0);
      if (c >= count)
        continue;
      float out[Vector];
      f(values + i * Vector, c, out);
      if constexpr (Vector > 1) {
        if (vectors) {
          store_vector16(to + c, out);
          continue;
        }
      }
#pragma unroll
      for (int v = 0; v < Vector; ++v)
        if (c + v < count)
          to[c + v] = from_float<T>(out[v]);
    }
  }

  /// Summary of (value − pivot) over the elements below `count`.
  __device__ __forceinline__ Welford summary(int t, int count,
                                             float pivot) const {
    float shifted[kItems * Vector];
#pragma unroll
    for (int k = 0; k < kItems * Vector; ++k)
      shifted[k] = values[k] - pivot;
    return summarise(shifted, [&](int k) {
      return column(t, k / Vector, k % Vector) < count;
    });
  }

  /// Sum of squares over the elements below `count`.
  __device__ __forceinline__ float squares(int t, int count) const {
    float sum = 0.0f;
#pragma unroll
    for (int i = 0; i < kItems; ++i)
#pragma unroll
      for (int v = 0; v < Vector; ++v) {
        const float x = values[i * Vector + v];
        sum += column(t, i, v) < count ? x * x : 0.0f;
      }
    return sum;
  }
};

/// The row's statistics once merged: what normalising needs.
struct RowStats {
  float pivot, shifted_mean, rstd;
};

/// Merges over the `Threads` sharing a row (all of a warp or a block).
template <int Threads>
__device__ __forceinline__ Welford merge_over(Welford w,
                                              BlockScratch &scratch) {
  if constexpr (Threads == 32)
    return warp_merge(w);
  else
    return block_merge<Threads>(w, scratch);
}

template <int Threads>
__device__ __forceinline__ float sum_over(float value, BlockScratch &scratch) {
  if constexpr (Threads == 32)
    return warp_sum(value);
  else
    return block_sum<Threads>(value, scratch);
}

/// What normalising needs, from the row's merged summary of h − pivot (or
/// its sum of squares for RMSNorm).
template <int C, int K>
__device__ __forceinline__ RowStats finish(float pivot, const Welford &w,
                                           float squares, float eps) {
  RowStats s;
  s.pivot = pivot;
  constexpr float kInverse = 1.0f / C;
  if constexpr (K == kRmsNorm) {
    s.shifted_mean = 0.0f;
    s.rstd = rsqrtf(squares * kInverse + eps);
  } else {
    s.shifted_mean = w.mean;
    const float variance = w.m2 * kInverse;
    s.rstd = rsqrtf(variance + eps);
  }
  return s;
}

/// Vector elements of a [C] vector from column c: one 16-byte load where
/// `vectors`, ones without the vector; only the first `available` are read
/// (a row's tail), the rest are `one`.
template <typename T, int Vector>
__device__ __forceinline__ void load_features(const T *from, long long c,
                                              bool vectors, float one,
                                              float (&to)[Vector],
                                              int available = Vector) {
  if constexpr (Vector > 1) {
    if (from && vectors && available >= Vector) {
      load_vector16(from + c, to);
      return;
    }
  }
#pragma unroll
  for (int v = 0; v < Vector; ++v)
    to[v] = from && v < available ? to_float(from[c + v]) : one;
}

/// The normalised values of h at columns c … c + Vector − 1.
template <typename T, int K, int Vector> struct Normalise {
  const NormParams<T> &p;
  const RowStats &s;
  long long begin; // the span's first column in the row
  bool vectors;    // gamma and beta start on 16 bytes

  __device__ __forceinline__ void operator()(const float *h, int c,
                                             float (&y)[Vector]) const {
    float gamma[Vector], beta[Vector];
    load_features<T, Vector>(p.gamma, begin + c, vectors, 1.0f, gamma);
    load_features<T, Vector>(K == kLayerNorm ? p.beta : nullptr, begin + c,
                             vectors, 0.0f, beta);
#pragma unroll
    for (int v = 0; v < Vector; ++v) {
      const float centred =
          K == kRmsNorm ? h[v] : (h[v] - s.pivot) - s.shifted_mean;
      y[v] = centred * s.rstd * gamma[v] + beta[v];
    }
  }
};

/// h itself, to store.
template <int Vector> struct Copy {
  __device__ __forceinline__ void operator()(const float *h, int,
                                             float (&out)[Vector]) const {
#pragma unroll
    for (int v = 0; v < Vector; ++v)
      out[v] = h[v];
  }
};

/// Whether gamma and beta allow 16-byte loads.
template <typename T>
__device__ __forceinline__ bool features_aligned(const NormParams<T> &p) {
  return reinterpret_cast<unsigned long long>(p.gamma) % 16 == 0 &&
         reinterpret_cast<unsigned long long>(p.beta) % 16 == 0;
}

/// Row (m, n) of C elements, shared by `Threads` threads, t the caller's
/// index among them: moments, then y (and h) written.
template <typename T, int C, int Threads, int Vector, int K>
__device__ __forceinline__ void norm_row(const NormParams<T> &p, int m, int n,
                                         int t, BlockScratch &scratch) {
  using Share = RowShare<T, C, Threads, Vector>;
  const T *x = p.x + p.x_at.at(m, n);
  const T *residual =
      p.residual ? p.residual + p.residual_at.at(m, n) : nullptr;
  Share share;
  share.load(x, residual, t, C, p.loads_aligned());
  const float pivot =
      to_float(x[0]) + (residual ? to_float(residual[0]) : 0.0f);
  Welford w;
  float squares = 0.0f;
  if constexpr (K == kRmsNorm)
    squares = sum_over<Threads>(share.squares(t, C), scratch);
  else
    w = merge_over<Threads>(share.summary(t, C, pivot), scratch);
  const RowStats s = finish<C, K>(pivot, w, squares, p.eps);
  const long long row = static_cast<long long>(m) * p.rows + n;
  if (t == 0) {
    if (p.mean && K != kRmsNorm)
      p.mean[row] = s.pivot + s.shifted_mean;
    if (p.second)
      p.second[row] = K == kMoments ? w.m2 * (1.0f / C) : s.rstd;
  }
  const bool vectors = p.stores_aligned();
  if (p.h)
    share.store(p.h + p.h_at.at(m, n), t, C, vectors, Copy<Vector>{});
  if (K != kMoments)
    share.store(p.y + p.y_at.at(m, n), t, C, vectors,
                Normalise<T, K, Vector>{p, s, 0, features_aligned(p)});
}

/// A warp a row, RowsABlock rows a block: grid (⌈N / RowsABlock⌉, M).
template <typename T, int C, int RowsABlock, int Vector, int K>
__device__ void norm_rows_by_warps(const NormParams<T> &p) {
  __shared__ BlockScratch scratch; // unused by warps; keeps one signature
  const int n = blockIdx.x * RowsABlock + static_cast<int>(threadIdx.x) / 32;
  if (n >= p.rows)
    return;
  norm_row<T, C, 32, Vector, K>(p, blockIdx.y, n, threadIdx.x % 32, scratch);
}

/// A block of Threads a row: grid (N, M).
template <typename T, int C, int Threads, int Vector, int K>
__device__ void norm_rows_by_blocks(const NormParams<T> &p) {
  __shared__ BlockScratch scratch;
  norm_row<T, C, Threads, Vector, K>(p, blockIdx.y, blockIdx.x, threadIdx.x,
                                     scratch);
}

/// Split rows, first pass: chunk s = blockIdx.x % S of row n = blockIdx.x /
/// S writes its summary of h − pivot (count, mean, M2), or its sum of
/// squares, to partials[row][s]. Grid (S · N, M).
template <typename T, int C, int Chunk, int Threads, int Vector, int K>
__device__ void row_partials(const NormParams<T> &p) {
  constexpr int kSplits = (C + Chunk - 1) / Chunk;
  __shared__ BlockScratch scratch;
  const int s = blockIdx.x % kSplits, n = blockIdx.x / kSplits, m = blockIdx.y;
  const T *x = p.x + p.x_at.at(m, n);
  const T *residual =
      p.residual ? p.residual + p.residual_at.at(m, n) : nullptr;
  const int begin = s * Chunk, count = C - begin < Chunk ? C - begin : Chunk;
  RowShare<T, Chunk, Threads, Vector> share;
  share.load(x + begin, residual ? residual + begin : nullptr, threadIdx.x,
             count, p.loads_aligned());
  const float pivot =
      to_float(x[0]) + (residual ? to_float(residual[0]) : 0.0f);
  float *slot =
      p.partials + ((static_cast<long long>(m) * p.rows + n) * kSplits + s) * 3;
  if constexpr (K == kRmsNorm) {
    const float squares =
        block_sum<Threads>(share.squares(threadIdx.x, count), scratch);
    if (threadIdx.x == 0)
      slot[0] = squares;
  } else {
    const Welford w =
        block_merge<Threads>(share.summary(threadIdx.x, count, pivot), scratch);
    if (threadIdx.x == 0) {
      slot[0] = __uint_as_float(w.count);
      slot[1] = w.mean;
      slot[2] = w.m2;
    }
  }
}

/// Split rows, second pass: every chunk's block merges the row's S
/// summaries in one order (so all agree bit for bit), chunk 0 writes the
/// statistics, and each normalises its chunk. Grid (S · N, M).
template <typename T, int C, int Chunk, int Threads, int Vector, int K>
__device__ void normalize_split(const NormParams<T> &p) {
  constexpr int kSplits = (C + Chunk - 1) / Chunk;
  const int s = blockIdx.x % kSplits, n = blockIdx.x / kSplits, m = blockIdx.y;
  const T *x = p.x + p.x_at.at(m, n);
  const T *residual =
      p.residual ? p.residual + p.residual_at.at(m, n) : nullptr;
  const long long row = static_cast<long long>(m) * p.rows + n;
  const float *slots = p.partials + row * kSplits * 3;
  Welford w;
  float squares = 0.0f;
  for (int k = 0; k < kSplits; ++k) {
    if constexpr (K == kRmsNorm) {
      squares += slots[k * 3];
    } else {
      Welford part;
      part.count = __float_as_uint(slots[k * 3]);
      part.mean = slots[k * 3 + 1];
      part.m2 = slots[k * 3 + 2];
      w = merge(w, part);
    }
  }
  const float pivot =
      to_float(x[0]) + (residual ? to_float(residual[0]) : 0.0f);
  const RowStats stats = finish<C, K>(pivot, w, squares, p.eps);
  if (s == 0 && threadIdx.x == 0) {
    if (p.mean && K != kRmsNorm)
      p.mean[row] = stats.pivot + stats.shifted_mean;
    if (p.second)
      p.second[row] = K == kMoments ? w.m2 * (1.0f / C) : stats.rstd;
  }
  if (K == kMoments && !p.h)
    return;
  const int begin = s * Chunk, count = C - begin < Chunk ? C - begin : Chunk;
  RowShare<T, Chunk, Threads, Vector> share;
  share.load(x + begin, residual ? residual + begin : nullptr, threadIdx.x,
             count, p.loads_aligned());
  const bool vectors = p.stores_aligned();
  if (p.h)
    share.store(p.h + p.h_at.at(m, n) + begin, threadIdx.x, count, vectors,
                Copy<Vector>{});
  if (K != kMoments)
    share.store(p.y + p.y_at.at(m, n) + begin, threadIdx.x, count, vectors,
                Normalise<T, K, Vector>{p, stats, begin, features_aligned(p)});
}

} // namespace norm
} // namespace rudnn
