//===- KvCacheReference.h - Decoder attention over a cache in float64 -*- C++
//-*-===//
//
// The decoding step of a transformer in double precision: the new tokens'
// keys and values appended to the cache (contiguous or paged) after each
// entry's cached tokens, then every new token attending causally to the
// cache so far. The reference the K/V-cache kernels are checked against.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_LIB_REFERENCE_KVCACHE_KVCACHEREFERENCE_H
#define RUDNN_LIB_REFERENCE_KVCACHE_KVCACHEREFERENCE_H

#include <cstdint>
#include <vector>

namespace rudnn::reference {

/// B entries of Tn new tokens, Hq query heads over Hk key heads (Hq a
/// multiple of Hk), head dims D and E. Contiguous caches hold `capacity`
/// (Tmax) tokens an entry; paged ones `pages` pages of `pageSize` tokens,
/// an entry's token t on page blockTable[b][t / pageSize] (`maxPages`
/// entries a row), row t % pageSize.
struct KvCacheShape {
  int64_t batch = 1, newTokens = 1, heads = 1, kvHeads = 1, headDim = 1,
          valueDim = 1;
  int64_t capacity = 1;                          // contiguous: Tmax
  int64_t cacheRows = 0;                         // contiguous: N (0: B)
  int64_t pages = 0, pageSize = 0, maxPages = 0; // paged when pages > 0
  int64_t rotaryRows = 0, rotaryPairs = 0;       // the rotary tables [R, Q]
  bool paged() const { return pages > 0; }
};

/// Dense row-major arrays: q [B,Tn,Hq,D], k [B,Tn,Hk,D], v [B,Tn,Hk,E]
/// (both empty: an attend-only call); kCache [B,Tmax,Hk,D] and vCache
/// [B,Tmax,Hk,E], or kCache [P,page,Hk,D], vCache [P,page,Hk,E] and
/// blockTable [B,maxPages] when paged; cacheLengths [B]; the optional
/// cacheLeftpad [B], cacheBatchIdx [B] (a contiguous cache's row of each
/// entry, of N), alibiSlopes [B,Hq] and rotaryCos, rotarySin [R,Q] (empty:
/// none).
struct KvCacheInputs {
  std::vector<double> q, k, v, kCache, vCache, cacheLengths, blockTable;
  std::vector<double> cacheLeftpad = {}, alibiSlopes = {};
  std::vector<double> cacheBatchIdx = {}, rotaryCos = {}, rotarySin = {};
};

/// FlashAttention's options, at each query's diagonal d (L + i when
/// appending, L − Tn + i attend only): causal keeps keys j ≤ d; a window
/// keeps d − left ≤ j ≤ d + right (−1: unbounded); softcap (0: none)
/// caps a score s to softcap · tanh(s / softcap); ALiBi then adds
/// −slope · |d − j|. The rotary embedding turns the new keys at positions
/// L + i and the queries at L + i (causal or windowed) or all at L: the
/// first 2Q features in pairs (2p, 2p + 1) when interleaved, else
/// (p, p + Q), by the angle of cosine rotaryCos[position, p] and sine
/// rotarySin[position, p].
struct KvCacheOptions {
  double scale = 1;
  bool causal = true;
  int64_t windowLeft = -1, windowRight = -1;
  double softcap = 0;
  bool rotaryInterleaved = false;
};

/// o [B,Tn,Hq,E], lse [B,Hq,Tn], the caches after the append, and a status
/// per entry: 0 appended and attended; 1 refused (a negative length, an
/// append past the capacity or the entry's pages, a page index out of
/// range, a page it appends to that another entry with room for the new
/// tokens uses, a left padding outside [0, L], new tokens past the rotary
/// positions, or a cache row outside [0, N) or another entry's while
/// appending): its caches are left as they were, its o is 0 and its lse
/// −inf.
struct KvCacheOutputs {
  std::vector<double> o, lse, kCache, vCache, status;
};

/// Query i of entry b (length L, left padding P) sees cache positions P to
/// its diagonal (or to the last key, not causal), within the window.
KvCacheOutputs kvCacheAttention(const KvCacheShape &shape,
                                const KvCacheInputs &inputs,
                                const KvCacheOptions &options);

} // namespace rudnn::reference

#endif // RUDNN_LIB_REFERENCE_KVCACHE_KVCACHEREFERENCE_H
