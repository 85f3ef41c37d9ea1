//===- kda/prepare.cuh - The chunk-parallel first KDA kernel --------------===//
//
// Γ, the decayed pairwise products A and B, the inverse of I + A and the
// products by it (W, U0), and the decayed keys Kd, per chunk; for a
// backward also Γ, the decayed queries Qd, the inverse and U0 kept.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/arch/cp_async.cuh"
#include "rudnn/arch/mbarrier.cuh"
#include "rudnn/arch/tma.cuh"
#include "rudnn/arch/wgmma.cuh"
#include "rudnn/kda/chunk.cuh"
#include "rudnn/kda/decay.cuh"
#include "rudnn/shared.cuh"
#include "rudnn/tile/copy.cuh"
#include "rudnn/tile/shared_tile.cuh"
#include "rudnn/tile/warp_tile.cuh"

namespace rudnn {
namespace kda {

/// inverse = (I + A)⁻¹ for A strictly lower triangular over the chunk's L
/// tokens, zero outside them. The 16-token diagonal blocks come by forward
/// substitution, one column a thread; then each later block row I from the
/// rows above it, T_I,<I = −T_II · (A_I,<I · T_<I,<I), through `panel`. All
/// in fp32, whatever the inputs: the inverse's error reaches every product
/// by it. Block-collective; block size a multiple of 32.
template <int C>
__device__ void invert_unit_lower(const float (&A)[C][C],
                                  float (&inverse)[C][C], float (&panel)[16][C],
                                  int L) {
  for (int e = threadIdx.x; e < C * C; e += blockDim.x)
    inverse[e / C][e % C] = 0.f;
  __syncthreads();
  for (int c = threadIdx.x; c < L; c += blockDim.x) {
    const int end = (c / 16 + 1) * 16 < L ? (c / 16 + 1) * 16 : L;
    for (int i = c; i < end; ++i) {
      float x = i == c ? 1.f : 0.f;
      for (int j = c; j < i; ++j)
        x -= A[i][j] * inverse[j][c];
      inverse[i][c] = x;
    }
  }
  __syncthreads();
  auto inRows = [&](int i) { return i < L; };
  for (int i0 = 16; i0 < L; i0 += 16) {
    // panel = A_I,<I · T_<I,<I
    tile::for_each_warp_tile(
        16, i0,
        [&](float(&acc)[4], int, int j0) {
          tile::mma_accumulate<float>(
              acc, i0,
              [&](int r, int m) { return inRows(i0 + r) ? A[i0 + r][m] : 0.f; },
              [&](int m, int j) { return inverse[m][j0 + j]; });
        },
        [&](int r, int j, float x) { panel[r][j] = x; });
    __syncthreads();
    // T_I,<I = −T_II · panel
    tile::for_each_warp_tile(
        16, i0,
        [&](float(&acc)[4], int, int j0) {
          tile::mma_accumulate<float>(
              acc, 16, [&](int r, int m) { return inverse[i0 + r][i0 + m]; },
              [&](int m, int j) { return panel[m][j0 + j]; });
        },
        [&](int r, int j, float x) {
          if (inRows(i0 + r))
            inverse[i0 + r][j] = -x;
        });
    __syncthreads();
  }
}

/// The maps `prepare` loads q's, k's and v's rows through on sm_90a: the
/// views as [B, T, H, *] (innermost first: features, tokens, heads,
/// batch), boxes of 64 features by a chunk's C tokens, 128-byte swizzle.
struct InputMaps {
  const arch::TensorMap *q = nullptr, *k = nullptr, *v = nullptr;
};

/// The prepare block's dynamic shared memory: the chunk's rows of q and k,
/// copied in with cp.async (16 bytes at a time where the views allow) or,
/// with `Tma`, as boxes into 128-byte swizzled column blocks (from a
/// 1024-byte aligned address: the host adds the slack), β and Γ; every
/// later read of them is a shared-memory read. v's rows take q's place
/// once q is done with, arriving while the inverse is computed.
template <int K, int V, int C, typename TIn, bool Tma = false>
struct PrepareShared {
  // Whole chunks; for 16-bit rows whole 16-column mma steps.
  static constexpr int kMultiple = sizeof(TIn) == 2 ? 16 : 4;
  static_assert(!Tma || (sizeof(TIn) == 2 && K % 64 == 0 && V % 64 == 0),
                "boxes of 64 16-bit features");
  using RowsK = typename Select<
      Tma, tile::ColumnBlocks<TIn, C, K / 64>,
      tile::SharedTile<TIn, C,
                       (K + kMultiple - 1) / kMultiple * kMultiple>>::Type;
  using RowsV = typename Select<
      Tma, tile::ColumnBlocks<TIn, C, V / 64>,
      tile::SharedTile<TIn, C,
                       (V + kMultiple - 1) / kMultiple * kMultiple>>::Type;
  static constexpr int kQv =
      RowsK::kElements > RowsV::kElements ? RowsK::kElements : RowsV::kElements;
  // k's column blocks follow q's and v's on a 1024-byte boundary.
  static_assert(!Tma || kQv * sizeof(TIn) % 1024 == 0, "aligned blocks");
  alignas(16) TIn qv[kQv]; // q, then v
  alignas(16) TIn k[RowsK::kElements];
  alignas(16) float beta[(C + 3) / 4 * 4];
  alignas(16) float gamma[C * K]; // [C][K]
};

/// store(i, j, first, second, both) for the pairs of the rows × cols
/// result of A·B over its first `rows` rows, A lower triangular (row block
/// i0 reads A's columns up to i0 + 15 only), both from shared tiles (B
/// stored [k][n]): 16x16 warp tiles through ldmatrix, one warp a tile in
/// turn. Block-collective.
template <typename T, typename TileA, typename TileB, typename Store>
__device__ void lower_product(const TileA &a, const TileB &b, int rows,
                              int cols, Store store) {
  const int colTiles = (cols + 15) / 16;
  const int tasks = (rows + 15) / 16 * colTiles;
  for (int task = threadIdx.x / 32; task < tasks; task += blockDim.x / 32) {
    const int i0 = task / colTiles * 16, n0 = task % colTiles * 16;
    tile::WarpTile<T, 16, 16> acc;
    acc.clear();
    for (int k0 = 0; k0 <= i0; k0 += 16)
      acc.template mma<tile::BLayout::KN>(a, i0, b, n0, k0);
    acc.for_each_pair([&](int r, int c, float first, float second) {
      const int i = i0 + r, j = n0 + c;
      if (i < rows && j < cols)
        store(i, j, first, second, j + 1 < cols);
    });
  }
}

/// Issues `rows`' boxes of the chunk's C tokens from token t0 of
/// sequence (b, h) of `map` (one thread), their bytes announced on
/// `loaded`.
template <int C, typename Rows>
__device__ __forceinline__ void
load_rows_async(const Rows &rows, const arch::TensorMap &map, int b, int t0,
                int h, unsigned long long *loaded) {
#pragma unroll
  for (int block = 0; block < Rows::kCols / 64; ++block) {
    const int coords[4] = {64 * block, t0, h, b};
    arch::tma_load<4>(rows.block(block), map, coords, loaded);
  }
}

/// One chunk's tiles; block size a multiple of 32; dynamic shared memory
/// sizeof(PrepareShared) (with `Tma`, 1024 bytes more). Kept: what of the
/// chunk's BackwardTiles it writes too. Views: whether q's, k's and v's
/// rows are promised 16-byte aligned. Tma: they arrive through `maps`,
/// completing on `loaded` (q's and k's, then v's: two phases a chunk).
template <int K, int V, int C, Keep Kept, tile::Alignment Views, bool Tma,
          typename TIn, typename TGate, typename TBeta>
__device__ void prepare_chunk(const ForwardParams<TIn, TGate, TBeta> &p,
                              const ChunkAt &at, const InputMaps &maps,
                              unsigned long long *loaded) {
  using Tiles = ChunkTiles<K, V, C, TIn>;
  using Saved = BackwardTiles<K, V, C, TIn>;
  using Shared = PrepareShared<K, V, C, TIn, Tma>;
  __shared__ __align__(16) float strictA[C][C];
  __shared__ float inverse[C][C];
  __shared__ float panel[16][C];
  RUDNN_DYNAMIC_SHARED(unsigned char, raw);
  Shared *rows = reinterpret_cast<Shared *>(raw);
  if constexpr (Tma)
    rows = arch::swizzle_aligned<Shared>(raw);
  const typename Shared::RowsK qRows{rows->qv}, kRows{rows->k};
  const typename Shared::RowsV vRows{rows->qv};
  const int b = at.b, h = at.h, t0 = at.t0, L = at.L;
  float *tiles = Tiles::at(p.workspace, at.slot, at.column, at.columns);
  constexpr bool kQueries = Kept != Keep::Tiles;
  TIn *saved = kQueries ? Saved::at(p.workspace, at.slot, at.column, at.columns,
                                    chunk_slots<C>(p))
                        : nullptr;
  float *gamma = rows->gamma;
  TIn *operands = Tiles::operands(tiles);

  // The chunk's rows: consecutive tokens are the views' time stride apart.
  if constexpr (Tma) {
    if (threadIdx.x == 0) {
      arch::mbarrier_arrive_expect_tx(loaded, 2 * sizeof(TIn) * C *
                                                  Shared::RowsK::kCols);
      load_rows_async<C>(qRows, *maps.q, b, t0, h / p.group, loaded);
      load_rows_async<C>(kRows, *maps.k, b, t0, h / p.group, loaded);
    }
  } else {
    tile::load_tile_async<Views>(qRows, p.q + p.q_offset(b, t0, h),
                                 p.q_strides.time, L, K);
    tile::load_tile_async<Views>(kRows, p.k + p.k_offset(b, t0, h),
                                 p.k_strides.time, L, K);
  }
  start_chunk_decay<K, C>(p, b, h, t0, L, gamma);
  arch::cp_async_commit();
  for (int i = threadIdx.x; i < L; i += blockDim.x)
    rows->beta[i] = to_float(p.beta[p.beta_strides.offset(b, t0 + i, h)]);
  auto q = [&](int i, int d) { return to_float(qRows(i, d)); };
  auto k = [&](int i, int d) { return to_float(kRows(i, d)); };
  auto v = [&](int i, int c) { return to_float(vRows(i, c)); };
  auto beta = [&](int i) { return rows->beta[i]; };

  if constexpr (Tma)
    arch::mbarrier_wait(loaded, 0);
  arch::cp_async_wait<0>();
  __syncthreads();

  // Γ (where g was copied in), and A (strict) and B zero outside the
  // chunk's lower triangle.
  finish_chunk_decay<K, TGate>(gamma, L);
  if constexpr (Tma) {
    // Past a packed sequence's last token the boxes hold the next one's.
    tile::clear_rows_from(qRows, L);
    tile::clear_rows_from(kRows, L);
  }
  for (int pair = threadIdx.x; pair < C * C; pair += blockDim.x) {
    const int i = pair / C, j = pair % C;
    strictA[i][j] = 0.f;
    if (i >= L || j > i)
      operands[Tiles::kB + i * C + j] = from_float<TIn>(0.f);
  }
  __syncthreads();
  decayed_pairwise<TIn, K, C>(
      L, GammaRows<K>{gamma}, k, q, k,
      [&](int i, int j, float kk) {
        if (j < i)
          strictA[i][j] = beta(i) * kk;
      },
      [&](int i, int j, float qk) {
        operands[Tiles::kB + i * C + j] = from_float<TIn>(qk);
      });
  __syncthreads();

  // The decayed keys (and for a backward the decayed queries), eight
  // features a thread, stored 16 bytes at a time.
  const float *last = gamma + (L - 1) * K;
  for (int d = threadIdx.x; d < K; d += blockDim.x)
    tiles[Tiles::kLast + d] = fast_exp(last[d]);
  constexpr int chunks = (K + 7) / 8;
  for (int e = threadIdx.x; e < L * chunks; e += blockDim.x) {
    const int i = e / chunks, d0 = e % chunks * 8;
    const int count = K - d0 < 8 ? K - d0 : 8;
    TIn qd[8], kd[8];
#pragma unroll
    for (int n = 0; n < 8; ++n) {
      const int d = d0 + n;
      const float g = n < count ? gamma[i * K + d] : 0.f;
      if constexpr (kQueries)
        qd[n] = from_float<TIn>(n < count ? q(i, d) * fast_exp(g) : 0.f);
      kd[n] =
          from_float<TIn>(n < count ? k(i, d) * fast_exp(last[d] - g) : 0.f);
    }
    if constexpr (kQueries)
      tile::store_chunk(saved + Saved::kQd + i * K + d0, qd, count);
    tile::store_chunk(operands + Tiles::kKd + i * K + d0, kd, count);
  }
  // A tail chunk's rows past its tokens hold zeros in W, Kd and Qd: the
  // wgmma walks load whole chunks of them by TMA, as the tensor cores take
  // them.
  for (int e = threadIdx.x; e < (C - L) * chunks; e += blockDim.x) {
    const int i = L + e / chunks, d0 = e % chunks * 8;
    const int count = K - d0 < 8 ? K - d0 : 8;
    TIn zeros[8];
#pragma unroll
    for (int n = 0; n < 8; ++n)
      zeros[n] = from_float<TIn>(0.f);
    if constexpr (kQueries)
      tile::store_chunk(saved + Saved::kQd + i * K + d0, zeros, count);
    tile::store_chunk(operands + Tiles::kKd + i * K + d0, zeros, count);
    tile::store_chunk(operands + Tiles::kW + i * K + d0, zeros, count);
  }
  // q is done with: v's rows take its place during the inversion (the box
  // lands after every thread's reads of q, fenced for the async proxy).
  if constexpr (Tma) {
    arch::fence_proxy_async_shared();
    __syncthreads();
    if (threadIdx.x == 0) {
      arch::mbarrier_arrive_expect_tx(loaded,
                                      sizeof(TIn) * C * Shared::RowsV::kCols);
      load_rows_async<C>(vRows, *maps.v, b, t0, h, loaded);
    }
  } else {
    __syncthreads();
    tile::load_tile_async<Views>(vRows, p.v + p.v_strides.offset(b, t0, h),
                                 p.v_strides.time, L, V);
    arch::cp_async_commit();
  }

  invert_unit_lower<C>(strictA, inverse, panel, L);
  if constexpr (Kept == Keep::Backward)
    for (int e = threadIdx.x; e < C * C; e += blockDim.x)
      saved[Saved::kInverse + e] = from_float<TIn>(inverse[e / C][e % C]);
  if constexpr (Tma) {
    arch::mbarrier_wait(loaded, 1);
    tile::clear_rows_from(vRows, L);
  }
  arch::cp_async_wait<0>();
  __syncthreads();

  // W = (I + A)⁻¹ β(k ⊙ e^Γ), U0 = (I + A)⁻¹ βv; row block i0 needs the
  // inverse's columns up to i0 + 15 only.
  auto storeU0 = [&](int i, int c, float u0, float u1, bool both) {
    tile::store_pair(operands + Tiles::kU + i * V + c, u0, u1, both);
  };
  if constexpr (sizeof(TIn) == 2) {
    // On the tile layer: the inverse scaled by β column by column, rounded
    // once into a shared tile over the pairwise matrix (dead after the
    // inversion), and k's rows decayed in place (Kd is out), then 16x16
    // warp tiles through ldmatrix.
    const tile::SharedTile<TIn, C, C> scaled{
        reinterpret_cast<TIn *>(&strictA[0][0])};
    for (int e = threadIdx.x; e < C * C; e += blockDim.x) {
      const int i = e / C, j = e % C;
      scaled(i, j) = from_float<TIn>(j < L ? inverse[i][j] * beta(j) : 0.f);
    }
    for (int e = threadIdx.x; e < L * K; e += blockDim.x) {
      const int i = e / K, d = e % K;
      kRows(i, d) = from_float<TIn>(k(i, d) * fast_exp(gamma[i * K + d]));
    }
    __syncthreads();
    lower_product<TIn>(
        scaled, kRows, L, K, [&](int i, int d, float w0, float w1, bool both) {
          tile::store_pair(operands + Tiles::kW + i * K + d, w0, w1, both);
        });
    lower_product<TIn>(scaled, vRows, L, V, storeU0);
    // The next chunk's boxes land where these rows were read; the
    // caller's barrier follows.
    if constexpr (Tma)
      arch::fence_proxy_async_shared();
  } else {
    // f32: the same products on FMA, operands formed as they are read.
    auto inverseRows = [&](int i0) {
      return tile::a_rows([&](int i, int j) { return inverse[i][j]; }, L, L,
                          i0);
    };
    auto depth = [&](int i0) { return i0 + 16 < L ? i0 + 16 : L; };
    tile::for_each_warp_tile(
        L, K,
        [&](float(&acc)[4], int i0, int d0) {
          tile::mma_accumulate<TIn>(acc, depth(i0), inverseRows(i0),
                                    tile::b_columns(
                                        [&](int j, int d) {
                                          return beta(j) * k(j, d) *
                                                 fast_exp(gamma[j * K + d]);
                                        },
                                        L, K, d0));
        },
        [&](int i, int d, float w) {
          operands[Tiles::kW + i * K + d] = from_float<TIn>(w);
        });
    tile::for_each_warp_tile(
        L, V,
        [&](float(&acc)[4], int i0, int c0) {
          tile::mma_accumulate<TIn>(
              acc, depth(i0), inverseRows(i0),
              tile::b_columns([&](int j, int c) { return beta(j) * v(j, c); },
                              L, V, c0));
        },
        [&](int i, int c, float u0) { storeU0(i, c, u0, 0.f, false); });
  }
}

/// grid (ceil(T / C), B·H): each chunk's tiles (see for_each_chunk).
/// With `Tma` (sm_90a) q's, k's and v's rows arrive through `maps`.
template <int K, int V, int C, Keep Kept = Keep::Tiles,
          tile::Alignment Views = tile::Alignment::Checked, bool Tma = false,
          typename TIn, typename TGate, typename TBeta>
__device__ void prepare(const ForwardParams<TIn, TGate, TBeta> &p,
                        const InputMaps &maps = {}) {
  __shared__ unsigned long long loaded; // with Tma: the chunk's boxes
  if constexpr (Tma) {
    if (threadIdx.x == 0)
      arch::mbarrier_init(&loaded, 1);
    __syncthreads();
  }
  for_each_chunk<C>(p, [&](const ChunkAt &at) {
    prepare_chunk<K, V, C, Kept, Views, Tma>(p, at, maps, &loaded);
  });
}

} // namespace kda
} // namespace rudnn
