//===- rudnn/kv_cache.h - Decoder attention over a K/V cache ----*- C++ -*-===//

#ifndef RUDNN_KV_CACHE_H
#define RUDNN_KV_CACHE_H

#include "rudnn/context.h"

#include <optional>

namespace rudnn {

/// One decoding step's tensors. q [B, T, H, D] and the new tokens' k
/// [B, T, G, D] and v [B, T, G, E] (one of f32, f16, bf16; H a multiple of
/// G; D and E from 1 to 256; both absent: an attend-only call, the T
/// queries being each entry's last cached tokens); the cache, updated in
/// place: contiguous
/// kCache [B, S, G, D] and vCache [B, S, G, E], or, with a blockTable
/// [B, M] (i32, dense), pages kCache [P, Z, G, D] and vCache [P, Z, G, E]
/// (Z tokens a page, 1 to 256; entry b's token t on page
/// blockTable[b, t / Z], row t % Z); cacheLengths [B] (i32, dense, in
/// device memory: the tokens each entry has cached; never read on the
/// host). Optionally cacheLeftpad [B] (i32, dense, in device memory: each
/// entry's cached tokens before it are padding, never attended),
/// alibiSlopes [B, H] (f32, any strides), cacheBatchIdx [B] (i32, dense,
/// contiguous caches: entry b uses cache row cacheBatchIdx[b] of kCache
/// [N, S, G, D], distinct rows when appending) and rotaryCos, rotarySin
/// [R, Q] (q's dtype, dense: the rotary embedding's table, with k and v
/// only). Views may have any outer strides; the innermost dim must be
/// contiguous.
struct KvCacheInputs {
  TensorView q;
  std::optional<TensorView> k, v;
  TensorView kCache, vCache;
  std::optional<TensorView> blockTable;
  TensorView cacheLengths;
  std::optional<TensorView> cacheLeftpad, alibiSlopes;
  std::optional<TensorView> cacheBatchIdx, rotaryCos, rotarySin;
};

/// o [B, T, H, E] in q's dtype; optionally lse [B, H, T] (dense f32) and
/// status [B] (dense i32: 0 done, 1 refused). No output may overlap
/// another or an input.
struct KvCacheOutputs {
  TensorView o;
  std::optional<TensorView> lse, status;
};

struct KvCacheOptions {
  /// Default D^-0.5.
  std::optional<float> scale;
  /// Parts each entry's keys are split into, 1 to 64; 0: the device
  /// chooses from B·G and the lengths at each call.
  int splits = 0;
  /// FlashAttention's options at each query's diagonal d (its position
  /// among the entry's keys): causal keeps keys j ≤ d (false: every key
  /// up to the last); a window keeps d − left ≤ j ≤ d + right (−1:
  /// unbounded); scores become softcap · tanh(s / softcap) (0: none).
  bool causal = true;
  int windowLeft = -1, windowRight = -1;
  float softcap = 0;
  /// The rotary embedding's pairs: (2p, 2p + 1) (GPT-J) or (p, p + Q)
  /// (GPT-NeoX). The new keys turn at positions L + i, the queries at
  /// L + i when causal or windowed, else all at L, as FlashAttention
  /// turns them.
  bool rotaryInterleaved = false;
};

/// Writes the new tokens' keys and values at positions [L, L + T) of each
/// entry's cache (L = cacheLengths[b]), then new token i of head h attends
/// to cache positions P … L + i (P the left padding, 0 without it):
///   o[b, i, h] = Σ_j softmax_j(scale · q[b, i, h] · k_j) · v_j,
/// with ALiBi's −slope · |L + i − j| added when slopes are given. Attend
/// only, query i's diagonal is L − T + i. An entry whose append would pass
/// its capacity (S, or M·Z) or the R rotary positions, whose length is
/// negative, whose left padding is outside [0, L], whose cache row is
/// outside [0, N) (or another appending entry's), or whose pages up to its
/// last key include one outside [0, P) cannot be served. The pages an entry
/// appends to must be its own: no other entry may read them. As for kdaDecode,
/// the rule for such entries depends on `status`:
/// - given: they are refused on the device (nothing of the entry's cache
///   is written, its o is 0, its lse −inf, its status 1) and nothing
///   depends on the lengths on the host, so a captured CUDA graph replays
///   correctly as they change (pages shared between entries are the
///   caller's to avoid there);
/// - absent: the lengths and block table are read on the host first (a
///   copy and a synchronization) and the call throws InvalidArgument naming
///   the entries, before anything is written.
/// One compile per signature (dtype, D, E, page size, splits, which
/// inputs and outputs, causal, window, whether capped). Throws InvalidArgument
/// naming the bad argument before anything is written.
void kvCacheAttention(Context &context, const KvCacheInputs &inputs,
                      const KvCacheOutputs &outputs,
                      const KvCacheOptions &options = {},
                      Stream stream = nullptr);

} // namespace rudnn

#endif // RUDNN_KV_CACHE_H
