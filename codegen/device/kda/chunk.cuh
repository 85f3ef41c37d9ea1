//===- kda/chunk.cuh - What the chunked KDA kernels share -----------------===//
//
// The parameter block every KDA forward kernel takes and the layout of the
// per-chunk tiles `prepare` leaves in the workspace for the others.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/packed.cuh"
#include "rudnn/tensor.cuh"
#include "rudnn/tile/copy.cuh"

namespace rudnn {
namespace kda {

/// Type when `Condition`, else Otherwise.
template <bool Condition, typename Type_, typename Otherwise> struct Select {
  using Type = Type_;
};
template <typename Type_, typename Otherwise>
struct Select<false, Type_, Otherwise> {
  using Type = Otherwise;
};

/// A KDA forward call. Sequence tensors are [B, T, H, *] views; states are
/// dense [B, H, K, V] fp32; boundaries dense [N, B, H, K, V] (N =
/// ceil(T / C)) in the input type, as every later use takes them as a
/// tensor-core operand. Packed sequences (cu_seqlens set): B = 1, sequence
/// n the tokens cu_seqlens[n] to cu_seqlens[n + 1], states [sequences, H,
/// K, V], and the chunk tiles and boundaries of every sequence's chunks in
/// turn (chunk_slots of them).
template <typename TIn, typename TGate, typename TBeta> struct ForwardParams {
  const TIn *q, *k, *v;
  const TGate *g;
  const TBeta *beta;
  const float *initial_state; // null: zero
  TIn *output;
  float *final_state; // null: not wanted
  TIn *boundaries;    // required by the chunked plan (workspace or result)
  float *workspace;   // ChunkTiles per (chunk, batch·head), then a
                      // backward's BackwardTiles
  SequenceStrides q_strides, k_strides, v_strides, g_strides, beta_strides,
      output_strides;
  int batch, length, heads;
  float scale;
  const int *cu_seqlens; // null: B sequences of T tokens
  int sequences;         // packed sequences (cu_seqlens has one more)
  int group;             // value heads sharing each q/k head (GVA), ≥ 1

  /// q's and k's rows of value head h.
  __device__ __forceinline__ long long q_offset(int b, int t, int h) const {
    return q_strides.offset(b, t, h / group);
  }
  __device__ __forceinline__ long long k_offset(int b, int t, int h) const {
    return k_strides.offset(b, t, h / group);
  }
};

/// Chunk slots of the tiles and boundaries: ceil(T / C), and for packed
/// sequences one more per sequence and one besides (each sequence's last
/// chunk may be partial; the host sizes the same bound).
template <int C, typename Params>
__device__ __forceinline__ int chunk_slots(const Params &p) {
  return (p.length + C - 1) / C + (p.cu_seqlens ? p.sequences + 1 : 0);
}

/// The per-chunk tiles the forward's kernels exchange: e^Γlast in fp32 (it
/// meets fp32 arithmetic), then, in the input type, the ones only ever used
/// as tile-product operands (rounded to that type there anyway): W, Kd, the
/// pairwise matrix B, and U0, which the walk overwrites with U. Γ and
/// q ⊙ e^Γ are not kept: `prepare` holds Γ in shared memory and `output`
/// forms q ⊙ e^Γ from q and g itself.
template <int K, int V, int C, typename TIn> struct ChunkTiles {
  // fp32, offsets in floats from the chunk's tiles.
  static constexpr long long kLast = 0; // [K] e^Γlast
  static constexpr long long kFp32Floats = (K + 3) / 4 * 4;
  // TIn, offsets in elements from operands().
  static constexpr long long kW = 0;           // [C][K]
  static constexpr long long kKd = kW + C * K; // [C][K] k⊙e^(Γlast−Γ)
  static constexpr long long kB = kKd + C * K; // [C][C]
  static constexpr long long kU = kB + C * C;  // [C][V] U0, then U
  static constexpr long long kOperands = kU + C * V;
  // Whole 16-byte chunks, so every chunk's tiles start 16-byte aligned.
  static constexpr long long kFloats =
      kFp32Floats + (kOperands * (long long)sizeof(TIn) + 15) / 16 * 4;

  /// With K and V multiples of 8 every row of the tiles is 16-byte aligned
  /// (the workspace is 256-byte aligned and each part a multiple of 16
  /// bytes): copies of them need no element-wise path.
  static constexpr tile::Alignment kAlignment = K % 8 == 0 && V % 8 == 0
                                                    ? tile::Alignment::Aligned
                                                    : tile::Alignment::Checked;

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

/// What a backward's `prepare` keeps besides the forward's tiles, in a
/// second array after every chunk's ChunkTiles, in the input type: the
/// decayed queries q ⊙ e^Γ (the reverse walk's operand) and (I + A)⁻¹.
/// `gradients` forms Γ again from g and needs no U0 (see there).
template <int K, int V, int C, typename TIn> struct BackwardTiles {
  static constexpr long long kQd = 0;                // [C][K] q⊙e^Γ
  static constexpr long long kInverse = kQd + C * K; // [C][C]
  static constexpr long long kOperands = kInverse + C * C;
  static constexpr long long kFloats =
      (kOperands * (long long)sizeof(TIn) + 15) / 16 * 4;

  static __device__ __forceinline__ TIn *
  at(float *workspace, int chunk, int sequence, int sequences, int slots) {
    return reinterpret_cast<TIn *>(
        workspace +
        (long long)slots * sequences * ChunkTiles<K, V, C, TIn>::kFloats +
        ((long long)chunk * sequences + sequence) * kFloats);
  }
};

/// What `prepare` keeps of a chunk besides its ChunkTiles, in the
/// BackwardTiles' place: nothing, the decayed queries alone (for the wgmma
/// walk, which forms the outputs), or everything a backward reads.
enum class Keep { Tiles, Queries, Backward };

/// Tokens of chunk `chunk` (C, or fewer for the tail).
template <int C> __device__ __forceinline__ int chunk_tokens(int chunk, int T) {
  int left = T - chunk * C;
  return left < C ? left : C;
}

/// Where one chunk of one head lies: entry b and head h of the sequence
/// tensors, its first token t0 and its L tokens; its tiles and boundary the
/// [slot][column] ones of [chunk_slots][columns] (columns = B·H).
struct ChunkAt {
  int b, h, t0, L, slot, column, columns;
};

/// Where chunk `at`'s boundary state starts in the [slots][columns][K][V]
/// boundaries.
template <int K, int V>
__device__ __forceinline__ long long boundary_offset(const ChunkAt &at) {
  return ((long long)at.slot * at.columns + at.column) * K * V;
}

/// Calls body(at) for each chunk this block takes, grid (ceil(T / C),
/// B·H). A batch: chunk blockIdx.x of sequence blockIdx.y. Packed: the
/// packed chunks blockIdx.x, blockIdx.x + gridDim.x, … of head blockIdx.y,
/// each sequence's chunks in turn (at most ceil(T / C) + sequences), found
/// by a warp scan of the offsets. Block-collective.
template <int C, typename Params, typename Body>
__device__ __forceinline__ void for_each_chunk(const Params &p, Body &&body) {
  const int column = blockIdx.y, columns = p.batch * p.heads;
  if (!p.cu_seqlens) {
    const int chunk = blockIdx.x;
    body(ChunkAt{column / p.heads, column % p.heads, chunk * C,
                 chunk_tokens<C>(chunk, p.length), chunk, column, columns});
    return;
  }
  for (int slot = blockIdx.x;; slot += gridDim.x) {
    int n = 0, before = 0;
    if (!packed_tile<C>(p.cu_seqlens, p.sequences, p.length, slot, n, before))
      return;
    const Rows rows = packed_rows(p.cu_seqlens, n, p.length);
    const int t0 = (slot - before) * C;
    body(ChunkAt{0, column % p.heads, rows.first + t0,
                 rows.count - t0 < C ? rows.count - t0 : C, slot, column,
                 columns});
    __syncthreads(); // the next chunk reuses the shared memory
  }
}

/// The chunks one walk block carries a state through, grid (B·H or, packed,
/// (sequences + 1)·H, ...): sequence blockIdx.x = b·H + h of a batch, or
/// packed sequence n = blockIdx.x / H of head h. Its state is row `state`
/// of the [·, H, K, V] states; its chunk j the tokens from t0 + j·C, tiles
/// and boundary at [first + j][column] of [chunk_slots][columns].
struct WalkAt {
  bool active; // false: a block past the last packed sequence
  int b, h, state, t0, length, first, chunks, column, columns;

  template <int C> __device__ __forceinline__ int tokens(int j) const {
    return chunk_tokens<C>(j, length);
  }

  template <int C, typename Params>
  static __device__ __forceinline__ WalkAt of(const Params &p) {
    const int sequence = blockIdx.x, columns = p.batch * p.heads;
    if (!p.cu_seqlens)
      return {true,
              sequence / p.heads,
              sequence % p.heads,
              sequence,
              0,
              p.length,
              0,
              (p.length + C - 1) / C,
              sequence,
              columns};
    const int n = sequence / p.heads, h = sequence % p.heads;
    if (n >= p.sequences)
      return {false, 0, h, sequence, 0, 0, 0, 0, h, columns};
    const Rows rows = packed_rows(p.cu_seqlens, n, p.length);
    return {true,
            0,
            h,
            sequence,
            rows.first,
            rows.count,
            packed_tiles_before<C>(p.cu_seqlens, n, p.length),
            (rows.count + C - 1) / C,
            h,
            columns};
  }
};

/// visit(i, d, Γ_id) for the L tokens from t0 of sequence (b, h) and every
/// feature d: Γ the in-chunk inclusive cumulative sum of g, in fp32, one
/// thread a feature. Every kernel forms Γ here, so they agree bit for bit.
template <int K, typename TIn, typename TGate, typename TBeta, typename Visit>
__device__ void chunk_decay(const ForwardParams<TIn, TGate, TBeta> &p, int b,
                            int h, int t0, int L, Visit visit) {
  for (int d = threadIdx.x; d < K; d += blockDim.x) {
    const TGate *g = p.g + p.g_strides.offset(b, t0, h) + d;
    float gamma = 0.f;
    for (int i = 0; i < L; ++i) {
      gamma += to_float(g[(long long)i * p.g_strides.time]);
      visit(i, d, gamma);
    }
  }
}

/// Whether start_chunk_decay stages g: f32 gates in rows of whole 16-byte
/// chunks. Summed from global memory, each feature's walk down the tokens
/// waits on every batch of its loads in turn (eight round trips a chunk of
/// 64); copied in, all of g's rows are one round trip, beside the caller's
/// other copies.
template <int K, typename TGate>
constexpr bool kStagedGate = sizeof(TGate) == 4 && K % 4 == 0;

/// Γ of the L tokens from t0 of sequence (b, h) into `gamma` ([C][K] fp32,
/// rows K apart, 16-byte aligned), as chunk_decay forms it. With
/// kStagedGate g's rows are copied in by cp.async (the caller commits them
/// with its copies and waits), and finish_chunk_decay sums them in place;
/// otherwise Γ is summed now. Block-collective.
template <int K, int C, typename TIn, typename TGate, typename TBeta>
__device__ void start_chunk_decay(const ForwardParams<TIn, TGate, TBeta> &p,
                                  int b, int h, int t0, int L, float *gamma) {
  if constexpr (kStagedGate<K, TGate>)
    tile::load_tile_async(tile::RowMajorTile<float, C, K>{gamma},
                          p.g + p.g_strides.offset(b, t0, h), p.g_strides.time,
                          L, K);
  else
    chunk_decay<K>(p, b, h, t0, L, [&](int i, int d, float running) {
      gamma[i * K + d] = running;
    });
}

/// Γ in place of the rows start_chunk_decay staged (nothing otherwise):
/// each thread a feature, its L tokens summed in chunk_decay's order, so
/// every kernel's Γ agrees bit for bit. Block-collective; barriers must
/// separate it from the copy's wait and from Γ's readers.
template <int K, typename TGate>
__device__ void finish_chunk_decay(float *gamma, int L) {
  if constexpr (kStagedGate<K, TGate>)
    for (int d = threadIdx.x; d < K; d += blockDim.x) {
      float running = 0.f;
      for (int i = 0; i < L; ++i) {
        running += gamma[i * K + d];
        gamma[i * K + d] = running;
      }
    }
}

} // namespace kda
} // namespace rudnn
