//===- kda/forward.cuh - Kimi Delta Attention forward, chunked ------------===//
//
// Per (batch, head) the sequence is cut into chunks of C tokens. Within a
// chunk, with Γ the inclusive cumulative sum of g and S0 the state at the
// chunk start, the delta rule unrolls to
//   (I + A) U = β ⊙ (V − (K ⊙ e^Γ) S0),
//   O = scale ((Q ⊙ e^Γ) S0 + B U),
//   S_end = diag(e^Γ_last) S0 + (K ⊙ e^(Γ_last − Γ))ᵀ U,
//   A_ij = β_i Σ_d k_id k_jd e^(Γ_id − Γ_jd),
//   B_ij = Σ_d q_id k_jd e^(Γ_id − Γ_jd),
// with A strictly and B non-strictly lower triangular. Every exponent is
// Γ_i − Γ_j with j ≤ i, never positive since g ≤ 0: nothing overflows, for
// g as low as −20 per step (factoring e^Γ_i · e^−Γ_j would overflow).
//
// Writing U = U0 − W S0 with W = (I+A)⁻¹ β(K ⊙ e^Γ), U0 = (I+A)⁻¹ βV splits
// the work into three kernels: `prepare` (chunk-parallel: Γ, A, B, the
// inverse of the unit lower-triangular I + A and the products by it),
// `propagate` (sequential over chunks, parallel over batch, heads and blocks of
// V: the states), and `output` (chunk-parallel). `recurrent` runs the
// recurrence token by token, for decode (T = 1).
//
// Every matrix product is a tile::mma_accumulate: tensor cores for 16-bit
// inputs (operands rounded to the input type, fp32 accumulation), FMA for
// f32 inputs, one code path for both.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/arch/cp_async.cuh"
#include "rudnn/kda/decay.cuh"
#include "rudnn/tensor.cuh"
#include "rudnn/tile/copy.cuh"
#include "rudnn/tile/pipeline.cuh"
#include "rudnn/tile/shared_tile.cuh"
#include "rudnn/tile/warp_tile.cuh"

namespace rudnn {
namespace kda {

/// A KDA forward call. Sequence tensors are [B, T, H, *] views; states are
/// dense [B, H, K, V] fp32 (boundaries [N, B, H, K, V], N = ceil(T / C)).
template <typename TIn, typename TGate, typename TBeta> struct ForwardParams {
  const TIn *q, *k, *v;
  const TGate *g;
  const TBeta *beta;
  const float *initial_state; // null: zero
  TIn *output;
  float *final_state; // null: not wanted
  float *boundaries;  // required by the chunked plan (workspace or result)
  float *workspace;   // ChunkTiles per (chunk, batch·head)
  SequenceStrides q_strides, k_strides, v_strides, g_strides, beta_strides,
      output_strides;
  int batch, length, heads;
  float scale;
};

/// The per-chunk tiles `prepare` leaves for the other kernels: Γ, U0 and
/// e^Γlast in fp32, as they meet fp32 arithmetic; then, in the input type,
/// the ones only ever used as tile-product operands (rounded to that type
/// there anyway): half the traffic for 16-bit inputs, the same numbers.
template <int K, int V, int C, typename TIn> struct ChunkTiles {
  // fp32, offsets in floats from the chunk's tiles.
  static constexpr long long kGamma = 0;           // [C][K]
  static constexpr long long kU0 = kGamma + C * K; // [C][V]
  static constexpr long long kLast = kU0 + C * V;  // [K] e^Γlast
  static constexpr long long kFp32Floats = kLast + K;
  // TIn, offsets in elements from operands().
  static constexpr long long kW = 0;            // [C][K]
  static constexpr long long kQd = kW + C * K;  // [C][K] q⊙e^Γ
  static constexpr long long kKd = kQd + C * K; // [C][K] k⊙e^(Γlast−Γ)
  static constexpr long long kB = kKd + C * K;  // [C][C]
  static constexpr long long kU = kB + C * C;   // [C][V] (propagate)
  static constexpr long long kInverse = kU + C * V; // [C][C] (I + A)⁻¹
  static constexpr long long kOperands = kInverse + C * C;
  static constexpr long long kFloats =
      kFp32Floats + (kOperands * (long long)sizeof(TIn) + 3) / 4;

  static __device__ __forceinline__ float *at(float *workspace, int chunk,
                                              int sequence, int sequences) {
    return workspace + ((long long)chunk * sequences + sequence) * kFloats;
  }
  static __device__ __forceinline__ TIn *operands(float *tiles) {
    return reinterpret_cast<TIn *>(tiles + kFp32Floats);
  }
  static __device__ __forceinline__ const TIn *operands(const float *tiles) {
    return reinterpret_cast<const TIn *>(tiles + kFp32Floats);
  }
};

/// Tokens of chunk `chunk` (C, or fewer for the tail).
template <int C> __device__ __forceinline__ int chunk_tokens(int chunk, int T) {
  int left = T - chunk * C;
  return left < C ? left : C;
}

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

/// grid (chunks, B·H); block size a multiple of 32.
template <int K, int V, int C, typename TIn, typename TGate, typename TBeta>
__device__ void prepare(const ForwardParams<TIn, TGate, TBeta> &p) {
  using Tiles = ChunkTiles<K, V, C, TIn>;
  __shared__ float strictA[C][C];
  __shared__ float inverse[C][C];
  __shared__ float panel[16][C];
  const int chunk = blockIdx.x, sequence = blockIdx.y;
  const int b = sequence / p.heads, h = sequence % p.heads;
  const int t0 = chunk * C, L = chunk_tokens<C>(chunk, p.length);
  float *tiles = Tiles::at(p.workspace, chunk, sequence, p.batch * p.heads);
  float *gamma = tiles + Tiles::kGamma;
  TIn *operands = Tiles::operands(tiles);
  auto q = [&](int i, int d) {
    return to_float(p.q[p.q_strides.offset(b, t0 + i, h) + d]);
  };
  auto k = [&](int i, int d) {
    return to_float(p.k[p.k_strides.offset(b, t0 + i, h) + d]);
  };
  auto beta = [&](int i) {
    return to_float(p.beta[p.beta_strides.offset(b, t0 + i, h)]);
  };

  for (int d = threadIdx.x; d < K; d += blockDim.x) {
    float running = 0.f;
    for (int i = 0; i < L; ++i) {
      running += to_float(p.g[p.g_strides.offset(b, t0 + i, h) + d]);
      gamma[i * K + d] = running;
    }
  }
  __syncthreads();

  // A (strict) and B, zero outside the chunk's lower triangle.
  for (int pair = threadIdx.x; pair < C * C; pair += blockDim.x) {
    const int i = pair / C, j = pair % C;
    strictA[i][j] = 0.f;
    if (i >= L || j > i)
      operands[Tiles::kB + i * C + j] = from_float<TIn>(0.f);
  }
  __syncthreads();
  decayed_pairwise<TIn, K>(L, gamma, k, k, [&](int i, int j, float kk) {
    if (j < i)
      strictA[i][j] = beta(i) * kk;
  });
  decayed_pairwise<TIn, K>(L, gamma, q, k, [&](int i, int j, float qk) {
    operands[Tiles::kB + i * C + j] = from_float<TIn>(qk);
  });
  __syncthreads();

  invert_unit_lower<C>(strictA, inverse, panel, L);
  for (int e = threadIdx.x; e < C * C; e += blockDim.x)
    operands[Tiles::kInverse + e] = from_float<TIn>(inverse[e / C][e % C]);

  // W = (I + A)⁻¹ β(k ⊙ e^Γ), U0 = (I + A)⁻¹ βv; row block i0 needs the
  // inverse's columns up to i0 + 15 only.
  auto inverseRows = [&](int i0) {
    return tile::a_rows([&](int i, int j) { return inverse[i][j]; }, L, L, i0);
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
            tile::b_columns(
                [&](int j, int c) {
                  return beta(j) *
                         to_float(p.v[p.v_strides.offset(b, t0 + j, h) + c]);
                },
                L, V, c0));
      },
      [&](int i, int c, float u0) { tiles[Tiles::kU0 + i * V + c] = u0; });

  for (int d = threadIdx.x; d < K; d += blockDim.x) {
    const float last = gamma[(L - 1) * K + d];
    tiles[Tiles::kLast + d] = fast_exp(last);
    for (int i = 0; i < L; ++i) {
      const float g = gamma[i * K + d];
      operands[Tiles::kQd + i * K + d] = from_float<TIn>(q(i, d) * fast_exp(g));
      operands[Tiles::kKd + i * K + d] =
          from_float<TIn>(k(i, d) * fast_exp(last - g));
    }
  }
}

/// block[d][j] = state[d·V + v0 + j] for the block's `width` columns of a
/// dense [K][V] state, 0 beyond them or when `state` is null.
template <int K, int V, int VB>
__device__ void load_state_columns(float (&block)[K][VB], const float *state,
                                   int v0, int width) {
  for (int e = threadIdx.x; e < K * VB; e += blockDim.x) {
    const int d = e / VB, j = e % VB;
    block[d][j] = state && j < width ? state[d * V + v0 + j] : 0.f;
  }
}

/// state[d·V + v0 + j] = block[d][j] for the block's `width` columns.
template <int K, int V, int VB>
__device__ void store_state_columns(float *state, const float (&block)[K][VB],
                                    int v0, int width) {
  for (int e = threadIdx.x; e < K * width; e += blockDim.x) {
    const int d = e / width, j = e % width;
    state[d * V + v0 + j] = block[d][j];
  }
}

/// The chunk's updates U = U0 − W·S for its L tokens and `width` value
/// columns from v0, with S(d, j) the state at the chunk start (column j
/// counted from v0); each goes to the tiles and to keep(i, j, u).
template <int K, int V, int C, typename TIn, typename State, typename Keep>
__device__ void chunk_updates(float *tiles, int L, int v0, int width, State S,
                              Keep keep) {
  using Tiles = ChunkTiles<K, V, C, TIn>;
  TIn *operands = Tiles::operands(tiles);
  tile::for_each_warp_tile(
      L, width,
      [&](float(&acc)[4], int i0, int j0) {
        tile::mma_accumulate<TIn>(
            acc, K,
            tile::a_rows(tile::row_major(operands + Tiles::kW, K), L, K, i0),
            tile::b_columns(S, K, width, j0));
      },
      [&](int i, int j, float ws) {
        const float u = tiles[Tiles::kU0 + i * V + v0 + j] - ws;
        operands[Tiles::kU + i * V + v0 + j] = from_float<TIn>(u);
        keep(i, j, u);
      });
}

/// state ← e^Γlast ⊙ state + X over the block's K × width columns, the
/// 16x8 tiles of X from product(acc, d0, j0). Each warp owns its tiles of
/// the state, which no other warp reads meanwhile.
template <int K, int VB, typename Product>
__device__ void decay_and_add(float (&state)[K][VB], const float *last,
                              int width, Product product) {
  tile::for_each_warp_tile(K, width, product, [&](int d, int j, float x) {
    state[d][j] = last[d] * state[d][j] + x;
  });
}

/// grid (B·H, ceil(V / VB)); block size a multiple of 32. Walks the chunks
/// in order.
template <int K, int V, int C, int VB, typename TIn, typename TGate,
          typename TBeta>
__device__ void propagate(const ForwardParams<TIn, TGate, TBeta> &p) {
  using Tiles = ChunkTiles<K, V, C, TIn>;
  __shared__ float state[K][VB];
  __shared__ float update[C][VB];
  const int sequence = blockIdx.x, v0 = blockIdx.y * VB;
  const int sequences = p.batch * p.heads;
  const int width = V - v0 < VB ? V - v0 : VB;
  const long long stateBase = (long long)sequence * K * V;

  load_state_columns<K, V>(
      state, p.initial_state ? p.initial_state + stateBase : nullptr, v0,
      width);
  __syncthreads();

  auto stateView = [&](int d, int j) { return state[d][j]; };
  auto updateView = [&](int i, int j) { return update[i][j]; };
  const int chunks = (p.length + C - 1) / C;
  for (int chunk = 0; chunk < chunks; ++chunk) {
    const int L = chunk_tokens<C>(chunk, p.length);
    float *tiles = Tiles::at(p.workspace, chunk, sequence, sequences);
    TIn *operands = Tiles::operands(tiles);
    store_state_columns<K, V>(
        p.boundaries + (long long)chunk * sequences * K * V + stateBase, state,
        v0, width);
    chunk_updates<K, V, C, TIn>(
        tiles, L, v0, width, stateView,
        [&](int i, int j, float u) { update[i][j] = u; });
    __syncthreads();
    // S ← e^Γlast ⊙ S + Kdᵀ·u.
    decay_and_add(
        state, tiles + Tiles::kLast, width,
        [&](float(&acc)[4], int d0, int j0) {
          tile::mma_accumulate<TIn>(
              acc, L,
              tile::a_transposed(tile::row_major(operands + Tiles::kKd, K), L,
                                 K, d0),
              tile::b_columns(updateView, L, width, j0));
        });
    __syncthreads();
  }
  if (p.final_state)
    store_state_columns<K, V>(p.final_state + stateBase, state, v0, width);
}

/// What an output block reads of its chunk: grid (chunks, B·H, ...).
template <int K, int V, int C, typename TIn> struct OutputChunk {
  int b, h, t0, L;
  const TIn *operands; // the chunk's tiles in the input type
  const float *state;  // the boundary state at the chunk's start

  template <typename TGate, typename TBeta>
  __device__ explicit OutputChunk(const ForwardParams<TIn, TGate, TBeta> &p) {
    using Tiles = ChunkTiles<K, V, C, TIn>;
    const int chunk = blockIdx.x, sequence = blockIdx.y;
    const int sequences = p.batch * p.heads;
    b = sequence / p.heads, h = sequence % p.heads;
    t0 = chunk * C, L = chunk_tokens<C>(chunk, p.length);
    operands =
        Tiles::operands(Tiles::at(p.workspace, chunk, sequence, sequences));
    state = p.boundaries + ((long long)chunk * sequences + sequence) * K * V;
  }
};

/// Columns of the output one block computes with 16-bit inputs.
constexpr int kOutputColumns = 64;

/// O = scale ((q ⊙ e^Γ)·S + B·U) for 16-bit inputs: grid (chunks, B·H,
/// ceil(V / 64)), 128 threads, the chunk's rows x 64 columns per block,
/// four warps of 32x32 on tensor cores. Both products run through one
/// two-stage pipeline of 32-deep steps (K of them, then the chunk's
/// tokens): operands cp.async'd into swizzled shared tiles (the fp32 state
/// rounded on its way in), fragments by ldmatrix.
template <int K, int V, int C, typename TIn, typename TGate, typename TBeta>
__device__ void output_tiled(const ForwardParams<TIn, TGate, TBeta> &p) {
  using Tiles = ChunkTiles<K, V, C, TIn>;
  constexpr int BM = 64, BN = kOutputColumns, BK = 32;
  static_assert(C <= BM, "a chunk's rows fit one block");
  using TileA = tile::SharedTile<TIn, BM, BK>;
  using TileB = tile::SharedTile<TIn, BK, BN>;
  __shared__ __align__(16) TIn sa[2][TileA::kElements];
  __shared__ __align__(16) TIn sb[2][TileB::kElements];
  const OutputChunk<K, V, C, TIn> chunk(p);
  const int n0 = blockIdx.z * BN;
  constexpr int stateSteps = (K + BK - 1) / BK;
  const int steps = stateSteps + (chunk.L + BK - 1) / BK;
  // With K and V multiples of 8 every workspace row is 16-byte aligned
  // (the workspace is 256-byte aligned and ChunkTiles keeps each part a
  // multiple of 16 bytes): no element-wise path is compiled in.
  constexpr tile::Alignment align = K % 8 == 0 && V % 8 == 0
                                        ? tile::Alignment::Aligned
                                        : tile::Alignment::Checked;
  auto issue = [&](int step, int stage) {
    if (step < stateSteps) {
      const int k0 = step * BK;
      tile::load_tile_async<align>(TileA{sa[stage]},
                                   chunk.operands + Tiles::kQd + k0, K, chunk.L,
                                   K - k0);
      tile::load_tile_converted(TileB{sb[stage]},
                                chunk.state + (long long)k0 * V + n0, V, K - k0,
                                V - n0);
    } else {
      // B is zero above its diagonal and U is read only for the L tokens.
      const int k0 = (step - stateSteps) * BK;
      tile::load_tile_async<align>(TileA{sa[stage]},
                                   chunk.operands + Tiles::kB + k0, C, chunk.L,
                                   chunk.L - k0);
      tile::load_tile_async<align>(
          TileB{sb[stage]}, chunk.operands + Tiles::kU + (long long)k0 * V + n0,
          V, chunk.L - k0, V - n0);
    }
  };
  const int warp = threadIdx.x / 32, wm = warp / 2 * 32, wn = warp % 2 * 32;
  tile::WarpTile<TIn, 32, 32> acc;
  acc.clear();
  tile::two_stage_pipeline(steps, issue, [&](int, int stage) {
    if (wm >= chunk.L)
      return; // the warp's rows are past the chunk's tokens
    const TileA a{sa[stage]};
    const TileB bt{sb[stage]};
#pragma unroll
    for (int k = 0; k < BK; k += 16)
      acc.template mma<tile::BLayout::KN>(a, wm, bt, wn, k);
  });
  // Adjacent columns leave as one 32-bit store where the row allows.
  struct alignas(4) Pair {
    TIn first, second;
  };
  acc.for_each_pair([&](int r, int c, float o0, float o1) {
    const int i = wm + r, j = n0 + wn + c;
    if (i >= chunk.L || j >= V)
      return;
    TIn *to =
        p.output + p.output_strides.offset(chunk.b, chunk.t0 + i, chunk.h) + j;
    if (j + 1 < V && reinterpret_cast<unsigned long long>(to) % 4 == 0) {
      *reinterpret_cast<Pair *>(to) = {from_float<TIn>(p.scale * o0),
                                       from_float<TIn>(p.scale * o1)};
    } else {
      to[0] = from_float<TIn>(p.scale * o0);
      if (j + 1 < V)
        to[1] = from_float<TIn>(p.scale * o1);
    }
  });
}

/// The same for f32 inputs: grid (chunks, B·H), block size a multiple of 32;
/// each warp takes 16x8 tiles of the chunk's C x V output in turn, on FMA.
template <int K, int V, int C, typename TIn, typename TGate, typename TBeta>
__device__ void output_fma(const ForwardParams<TIn, TGate, TBeta> &p) {
  using Tiles = ChunkTiles<K, V, C, TIn>;
  const OutputChunk<K, V, C, TIn> chunk(p);
  const int b = chunk.b, h = chunk.h, t0 = chunk.t0, L = chunk.L;
  const TIn *operands = chunk.operands;
  const float *state = chunk.state;
  tile::for_each_warp_tile(
      L, V,
      [&](float(&acc)[4], int i0, int j0) {
        float intra[4] = {0.f, 0.f, 0.f, 0.f};
        // (q ⊙ e^Γ)·S over the K features.
        tile::mma_accumulate<TIn>(
            acc, K,
            tile::a_rows(tile::row_major(operands + Tiles::kQd, K), L, K, i0),
            tile::b_columns(tile::row_major(state, V), K, V, j0));
        // pairwise·U over the chunk's tokens.
        tile::mma_accumulate<TIn>(
            intra, L,
            tile::a_rows(tile::row_major(operands + Tiles::kB, C), L, L, i0),
            tile::b_columns(tile::row_major(operands + Tiles::kU, V), L, V,
                            j0));
        for (int r = 0; r < 4; ++r)
          acc[r] = p.scale * (acc[r] + intra[r]);
      },
      [&](int i, int j, float o) {
        p.output[p.output_strides.offset(b, t0 + i, h) + j] =
            from_float<TIn>(o);
      });
}

/// The chunk's output: on the tile layer for 16-bit inputs, on FMA for f32.
template <int K, int V, int C, typename TIn, typename TGate, typename TBeta>
__device__ void output(const ForwardParams<TIn, TGate, TBeta> &p) {
  if constexpr (sizeof(TIn) == 2)
    output_tiled<K, V, C>(p);
  else
    output_fma<K, V, C>(p);
}

/// grid (B·H, ceil(V / VB)), block VB threads: one column of the state
/// each, token by token. Writes boundaries every C tokens when asked.
template <int K, int V, int C, int VB, typename TIn, typename TGate,
          typename TBeta>
__device__ void recurrent(const ForwardParams<TIn, TGate, TBeta> &p) {
  __shared__ float state[K][VB];
  const int sequence = blockIdx.x, j = threadIdx.x,
            column = blockIdx.y * VB + j;
  const int b = sequence / p.heads, h = sequence % p.heads;
  const int sequences = p.batch * p.heads;
  const long long stateBase = (long long)sequence * K * V;
  if (column >= V)
    return; // columns are independent: no barrier follows
  for (int d = 0; d < K; ++d)
    state[d][j] =
        p.initial_state ? p.initial_state[stateBase + d * V + column] : 0.f;
  for (int t = 0; t < p.length; ++t) {
    if (p.boundaries && t % C == 0)
      for (int d = 0; d < K; ++d)
        p.boundaries[(long long)(t / C) * sequences * K * V + stateBase +
                     d * V + column] = state[d][j];
    const long long qk = p.q_strides.offset(b, t, h);
    const long long kk = p.k_strides.offset(b, t, h);
    const long long gk = p.g_strides.offset(b, t, h);
    float predicted = 0.f;
    for (int d = 0; d < K; ++d) {
      float s = state[d][j] * fast_exp(to_float(p.g[gk + d]));
      state[d][j] = s;
      predicted += s * to_float(p.k[kk + d]);
    }
    const float u =
        to_float(p.beta[p.beta_strides.offset(b, t, h)]) *
        (to_float(p.v[p.v_strides.offset(b, t, h) + column]) - predicted);
    float o = 0.f;
    for (int d = 0; d < K; ++d) {
      float s = state[d][j] + to_float(p.k[kk + d]) * u;
      state[d][j] = s;
      o += s * to_float(p.q[qk + d]);
    }
    p.output[p.output_strides.offset(b, t, h) + column] =
        from_float<TIn>(p.scale * o);
  }
  if (p.final_state)
    for (int d = 0; d < K; ++d)
      p.final_state[stateBase + d * V + column] = state[d][j];
}

} // namespace kda
} // namespace rudnn
