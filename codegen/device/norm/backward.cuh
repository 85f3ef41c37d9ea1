//===- norm/backward.cuh - LayerNorm and RMSNorm gradients ----------------===//
//
// From dy, x (the normalised rows: h when a residual was added) and the
// saved statistics, with x̂ = (x − mean)·rstd (x·rstd for RMSNorm) and
// g = dy·gamma:
//
//   dx = rstd · (g − mean(g) − x̂ · mean(g·x̂))   (RMSNorm: no mean(g))
//   dgamma = Σ_rows dy·x̂,  dbeta = Σ_rows dy
//
// A group of threads (a warp, or a block) shares a row as the forward
// does, and the blocks of a fixed grid walk the rows: a thread holds the
// same columns of every row, so it sums its columns' dgamma and dbeta
// terms in registers; a block then writes one partial row, and a second
// kernel adds the blocks' partials in a fixed order. No floating-point
// atomics: the same call gives the same bits. Rows too long for a block
// are split into chunks as in the forward: a first kernel sums each
// chunk's g and g·x̂, the second merges a row's chunks before its dx.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/norm/rows.cuh"

namespace rudnn {
namespace norm {

template <typename T> struct NormBackwardParams {
  const T *dy, *x, *gamma;  // gamma [C] may be null
  const float *mean, *rstd; // [M·N]; mean null for RMSNorm
  T *dx;
  float *row_sums;        // split rows: [M·N, S, 2]: Σ g, Σ g·x̂ a chunk
  float *column_partials; // [blocks, 2, C]: each block's Σ dy·x̂, Σ dy
  T *dgamma, *dbeta;      // [C], either may be null
  Rows dy_at, x_at, dx_at;
  int rows, outer; // N, M
};

/// Row r of the M·N rows: its (m, n).
__device__ __forceinline__ void row_coordinates(long long r, int rows, int &m,
                                                int &n) {
  m = static_cast<int>(r / rows);
  n = static_cast<int>(r % rows);
}

/// A group's view of one row (or chunk): dy and x loaded, x̂ and g formed.
template <typename T, int Span, int Threads, int Vector, int K>
struct GradientShare {
  using Share = RowShare<T, Span, Threads, Vector>;
  Share dy, xhat; // xhat.values hold x̂ once formed
  float g[Share::kItems * Vector];

  /// Loads columns [begin, begin + count) of row (m, n) and forms x̂, g;
  /// returns Σ g and Σ g·x̂ over this thread's columns.
  __device__ __forceinline__ float2 load(const NormBackwardParams<T> &p, int m,
                                         int n, int begin, int count, int t,
                                         bool vectors, bool gammaVectors) {
    const long long row = static_cast<long long>(m) * p.rows + n;
    dy.load(p.dy + p.dy_at.at(m, n) + begin, nullptr, t, count, vectors);
    xhat.load(p.x + p.x_at.at(m, n) + begin, nullptr, t, count, vectors);
    const float mean = K == kRmsNorm ? 0.0f : p.mean[row], rstd = p.rstd[row];
    float2 sums = make_float2(0.0f, 0.0f);
#pragma unroll
    for (int i = 0; i < Share::kItems; ++i) {
      const int c = Share::column(t, i, 0);
      float gamma[Vector];
      // Only the row's columns: a tail's lanes past `count` read nothing.
      load_features<T, Vector>(p.gamma, begin + c, gammaVectors, 1.0f, gamma,
                               count - c);
#pragma unroll
      for (int v = 0; v < Vector; ++v) {
        const int k = i * Vector + v;
        const bool inside = c + v < count;
        xhat.values[k] = inside ? (xhat.values[k] - mean) * rstd : 0.0f;
        g[k] = inside ? dy.values[k] * gamma[v] : 0.0f;
        sums.x += g[k];
        sums.y += g[k] * xhat.values[k];
      }
    }
    return sums;
  }

  /// dx from the row's Σ g and Σ g·x̂, stored; the columns' dgamma and
  /// dbeta terms added to `dgamma`, `dbeta`.
  __device__ __forceinline__ void finish(const NormBackwardParams<T> &p, int m,
                                         int n, int begin, int count, int t,
                                         bool vectors, float2 sums, int C,
                                         float *dgamma, float *dbeta) const {
    const long long row = static_cast<long long>(m) * p.rows + n;
    const float rstd = p.rstd[row], inverse = 1.0f / static_cast<float>(C);
    const float meanG = K == kRmsNorm ? 0.0f : sums.x * inverse,
                meanGX = sums.y * inverse;
    Share out = xhat;
#pragma unroll
    for (int k = 0; k < Share::kItems * Vector; ++k) {
      dgamma[k] += dy.values[k] * xhat.values[k];
      dbeta[k] += dy.values[k];
      out.values[k] = rstd * (g[k] - meanG - xhat.values[k] * meanGX);
    }
    out.store(p.dx + p.dx_at.at(m, n) + begin, t, count, vectors,
              Copy<Vector>{});
  }
};

/// Writes a group's column sums to its partial row (columns past `count`
/// held zeros).
template <int Span, int Threads, int Vector, int Items>
__device__ __forceinline__ void
store_column_partials(float *partial, int C, int begin, int count, int t,
                      const float (&dgamma)[Items],
                      const float (&dbeta)[Items]) {
#pragma unroll
  for (int k = 0; k < Items; ++k) {
    const int c = (k / Vector * Threads + t) * Vector + k % Vector;
    if (c < count) {
      partial[begin + c] = dgamma[k];
      partial[C + begin + c] = dbeta[k];
    }
  }
}

/// Whether dy, x and dx rows all start on 16 bytes (the vector path).
template <typename T>
__device__ __forceinline__ bool
backward_rows_aligned16(const NormBackwardParams<T> &p) {
  return rows_aligned16(p.dy, p.dy_at) && rows_aligned16(p.x, p.x_at) &&
         rows_aligned16<T>(p.dx, p.dx_at);
}

/// Rows held whole: Groups groups of Threads threads a block (a warp a row,
/// or one group of the whole block), the grid's blocks walking the M·N rows.
/// Each block leaves its Σ dy·x̂ and Σ dy per column in column_partials[
/// blockIdx.x]: the groups add theirs in order through shared memory.
template <typename T, int C, int Threads, int Groups, int Vector, int K>
__device__ void norm_backward_rows(const NormBackwardParams<T> &p) {
  using Gradient = GradientShare<T, C, Threads, Vector, K>;
  constexpr int kHeld = Gradient::Share::kItems * Vector;
  __shared__ BlockScratch scratch;
  const int group = threadIdx.x / Threads, t = threadIdx.x % Threads;
  const bool vectors = backward_rows_aligned16(p);
  const bool gammaVectors =
      reinterpret_cast<unsigned long long>(p.gamma) % 16 == 0;
  float dgamma[kHeld] = {}, dbeta[kHeld] = {};
  const long long total = static_cast<long long>(p.outer) * p.rows;
  // Every group of a block takes as many turns, so block-wide sums are
  // reached by all its threads.
  for (long long first = static_cast<long long>(blockIdx.x) * Groups;
       first < total; first += static_cast<long long>(gridDim.x) * Groups) {
    const long long r = first + group;
    const bool active = r < total;
    int m = 0, n = 0;
    if (active)
      row_coordinates(r, p.rows, m, n);
    Gradient share;
    float2 sums = make_float2(0.0f, 0.0f);
    if (active)
      sums = share.load(p, m, n, 0, C, t, vectors, gammaVectors);
    sums.x = sum_over<Threads>(sums.x, scratch);
    sums.y = sum_over<Threads>(sums.y, scratch);
    if (active)
      share.finish(p, m, n, 0, C, t, vectors, sums, C, dgamma, dbeta);
  }
  float *partial =
      p.column_partials + static_cast<long long>(blockIdx.x) * 2 * C;
  if constexpr (Groups == 1) {
    store_column_partials<C, Threads, Vector>(partial, C, 0, C, t, dgamma,
                                              dbeta);
  } else {
    // Group 0 writes, each next group adds, in order.
    for (int turn = 0; turn < Groups; ++turn) {
      if (group == turn) {
#pragma unroll
        for (int k = 0; k < kHeld; ++k) {
          const int c = (k / Vector * Threads + t) * Vector + k % Vector;
          if (c < C) {
            partial[c] = turn ? partial[c] + dgamma[k] : dgamma[k];
            partial[C + c] = turn ? partial[C + c] + dbeta[k] : dbeta[k];
          }
        }
      }
      __syncthreads();
    }
  }
}

/// Split rows, first pass: chunk s of row r (block r · S + s) sums its g
/// and g·x̂ into row_sums[r][s].
template <typename T, int C, int Chunk, int Threads, int Vector, int K>
__device__ void norm_backward_chunk_sums(const NormBackwardParams<T> &p) {
  constexpr int kSplits = (C + Chunk - 1) / Chunk;
  __shared__ BlockScratch scratch;
  const long long r =
      blockIdx.x / kSplits + static_cast<long long>(blockIdx.y) * p.rows;
  const int s = blockIdx.x % kSplits;
  int m, n;
  row_coordinates(r, p.rows, m, n);
  const int begin = s * Chunk, count = C - begin < Chunk ? C - begin : Chunk;
  GradientShare<T, Chunk, Threads, Vector, K> share;
  float2 sums =
      share.load(p, m, n, begin, count, threadIdx.x,
                 rows_aligned16(p.dy, p.dy_at) && rows_aligned16(p.x, p.x_at),
                 reinterpret_cast<unsigned long long>(p.gamma) % 16 == 0);
  sums.x = block_sum<Threads>(sums.x, scratch);
  sums.y = block_sum<Threads>(sums.y, scratch);
  if (threadIdx.x == 0) {
    p.row_sums[(r * kSplits + s) * 2] = sums.x;
    p.row_sums[(r * kSplits + s) * 2 + 1] = sums.y;
  }
}

/// Split rows, second pass: blocks b = w · S + s walk the rows w, w + W, …
/// (W = gridDim.x / S) for chunk s, adding each row's S chunk sums in
/// order before its dx; block b leaves its columns' sums in
/// column_partials[w] (its chunk's columns; the W walkers' partials).
template <typename T, int C, int Chunk, int Threads, int Vector, int K>
__device__ void norm_backward_split(const NormBackwardParams<T> &p) {
  constexpr int kSplits = (C + Chunk - 1) / Chunk;
  using Gradient = GradientShare<T, Chunk, Threads, Vector, K>;
  constexpr int kHeld = Gradient::Share::kItems * Vector;
  const int s = blockIdx.x % kSplits, walker = blockIdx.x / kSplits,
            walkers = gridDim.x / kSplits;
  const int begin = s * Chunk, count = C - begin < Chunk ? C - begin : Chunk;
  const bool vectors = backward_rows_aligned16(p);
  const bool gammaVectors =
      reinterpret_cast<unsigned long long>(p.gamma) % 16 == 0;
  float dgamma[kHeld] = {}, dbeta[kHeld] = {};
  const long long total = static_cast<long long>(p.outer) * p.rows;
  for (long long r = walker; r < total; r += walkers) {
    int m, n;
    row_coordinates(r, p.rows, m, n);
    Gradient share;
    share.load(p, m, n, begin, count, threadIdx.x, vectors, gammaVectors);
    float2 sums = make_float2(0.0f, 0.0f);
    for (int k = 0; k < kSplits; ++k) {
      sums.x += p.row_sums[(r * kSplits + k) * 2];
      sums.y += p.row_sums[(r * kSplits + k) * 2 + 1];
    }
    share.finish(p, m, n, begin, count, threadIdx.x, vectors, sums, C, dgamma,
                 dbeta);
  }
  store_column_partials<Chunk, Threads, Vector>(
      p.column_partials + static_cast<long long>(walker) * 2 * C, C, begin,
      count, threadIdx.x, dgamma, dbeta);
}

/// dgamma and dbeta: column c adds the `blocks` partial rows in order.
template <typename T, int C>
__device__ void norm_backward_columns(const NormBackwardParams<T> &p,
                                      int blocks) {
  const int c = blockIdx.x * blockDim.x + threadIdx.x;
  if (c >= C)
    return;
  float dgamma = 0.0f, dbeta = 0.0f;
  for (int b = 0; b < blocks; ++b) {
    dgamma += p.column_partials[static_cast<long long>(b) * 2 * C + c];
    dbeta += p.column_partials[static_cast<long long>(b) * 2 * C + C + c];
  }
  if (p.dgamma)
    p.dgamma[c] = from_float<T>(dgamma);
  if (p.dbeta)
    p.dbeta[c] = from_float<T>(dbeta);
}

} // namespace norm
} // namespace rudnn
