//===- KvCacheReference.cpp - Decoder attention over a cache in float64 ---===//

#include "lib/reference/kvcache/KvCacheReference.h"

#include <algorithm>
#include <cmath>
#include <limits>

using namespace rudnn::reference;

namespace {

/// Where entry b's token t lives in a cache of rows of `width` per key
/// head: the offset of its head-0 row, or −1 if the cache has no such
/// token.
int64_t cacheRow(const KvCacheShape &s, const KvCacheInputs &in, int64_t b,
                 int64_t t, int64_t width) {
  const int64_t token = s.kvHeads * width; // elements of one token
  if (!s.paged()) {
    const double row =
        in.cacheBatchIdx.empty() ? double(b) : in.cacheBatchIdx[b];
    const int64_t rows = s.cacheRows ? s.cacheRows : s.batch;
    if (!(row >= 0 && row < double(rows)) || t >= s.capacity)
      return -1;
    return (static_cast<int64_t>(row) * s.capacity + t) * token;
  }
  const int64_t slot = t / s.pageSize;
  if (slot >= s.maxPages)
    return -1;
  const double page = in.blockTable[b * s.maxPages + slot];
  if (!(page >= 0 && page < static_cast<double>(s.pages)))
    return -1;
  return (static_cast<int64_t>(page) * s.pageSize + t % s.pageSize) * token;
}

/// Refuses each entry still running that appends to a page another entry
/// with room for the new tokens uses (reads or appends to), whatever that
/// entry's own pages: the append would race with it.
void refuseSharedAppends(const KvCacheShape &s, const KvCacheInputs &in,
                         std::vector<double> &status) {
  if (in.k.empty())
    return; // nothing appended
  const int64_t B = s.batch, Tn = s.newTokens, Z = s.pageSize;
  auto hasRoom = [&](int64_t b) {
    const double length = in.cacheLengths[b];
    return length >= 0 && length + Tn <= double(s.maxPages * Z);
  };
  auto pageAt = [&](int64_t b, int64_t slot) {
    return in.blockTable[b * s.maxPages + slot];
  };
  for (int64_t b = 0; b < B; ++b) {
    if (status[b] != 0)
      continue;
    const int64_t length = static_cast<int64_t>(in.cacheLengths[b]);
    const int64_t used = (length + Tn + Z - 1) / Z;
    for (int64_t other = 0; other < B && status[b] == 0; ++other) {
      if (other == b || !hasRoom(other))
        continue;
      const int64_t otherUsed =
          (static_cast<int64_t>(in.cacheLengths[other]) + Tn + Z - 1) / Z;
      for (int64_t slot = 0; slot < otherUsed; ++slot)
        for (int64_t mine = length / Z; mine < used; ++mine)
          if (pageAt(other, slot) == pageAt(b, mine))
            status[b] = 1;
    }
  }
}

/// Refuses every appending entry whose cache row another entry maps to:
/// the appends would race.
void refuseSharedRows(const KvCacheShape &s, const KvCacheInputs &in,
                      std::vector<double> &status) {
  if (in.k.empty() || in.cacheBatchIdx.empty())
    return;
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t other = 0; other < s.batch; ++other)
      if (other != b && in.cacheBatchIdx[other] == in.cacheBatchIdx[b])
        status[b] = 1;
}

/// `row` (D features, of the entry's head-0 row's layout) turned by the
/// rotary embedding at `position`.
std::vector<double> turned(const KvCacheShape &s, const KvCacheInputs &in,
                           const KvCacheOptions &opt, const double *row,
                           int64_t position) {
  std::vector<double> out(row, row + s.headDim);
  const int64_t pairs = s.rotaryPairs;
  for (int64_t p = 0; p < pairs && !in.rotaryCos.empty(); ++p) {
    const int64_t first = opt.rotaryInterleaved ? 2 * p : p,
                  second = opt.rotaryInterleaved ? 2 * p + 1 : p + pairs;
    const double c = in.rotaryCos[position * pairs + p],
                 sn = in.rotarySin[position * pairs + p];
    out[first] = row[first] * c - row[second] * sn;
    out[second] = row[first] * sn + row[second] * c;
  }
  return out;
}

} // namespace

KvCacheOutputs rudnn::reference::kvCacheAttention(const KvCacheShape &s,
                                                  const KvCacheInputs &in,
                                                  const KvCacheOptions &opt) {
  const int64_t B = s.batch, Tn = s.newTokens, H = s.heads, G = s.kvHeads,
                D = s.headDim, E = s.valueDim, group = H / G;
  const int64_t appended = in.k.empty() ? 0 : Tn;
  KvCacheOutputs out;
  out.o.assign(B * Tn * H * E, 0.0);
  out.lse.assign(B * H * Tn, -std::numeric_limits<double>::infinity());
  out.kCache = in.kCache;
  out.vCache = in.vCache;
  out.status.assign(B, 0.0);
  // Every position the step writes or reads must exist.
  for (int64_t b = 0; b < B; ++b) {
    const double given = in.cacheLengths[b];
    bool fits = given >= 0;
    const int64_t length = fits ? static_cast<int64_t>(given) : 0;
    if (!in.cacheLeftpad.empty())
      fits = fits && in.cacheLeftpad[b] >= 0 && in.cacheLeftpad[b] <= given;
    if (!in.rotaryCos.empty())
      fits = fits && length + Tn <= s.rotaryRows;
    for (int64_t t = 0; fits && t < length + appended; ++t)
      fits = cacheRow(s, in, b, t, D) >= 0;
    out.status[b] = fits ? 0 : 1;
  }
  if (s.paged())
    refuseSharedAppends(s, in, out.status);
  refuseSharedRows(s, in, out.status);
  for (int64_t b = 0; b < B; ++b) {
    if (out.status[b] != 0)
      continue;
    const int64_t length = static_cast<int64_t>(in.cacheLengths[b]);
    const int64_t pad =
        in.cacheLeftpad.empty() ? 0 : static_cast<int64_t>(in.cacheLeftpad[b]);
    for (int64_t i = 0; i < appended; ++i) { // the append, keys turned
      const int64_t k0 = cacheRow(s, in, b, length + i, D),
                    v0 = cacheRow(s, in, b, length + i, E);
      for (int64_t g = 0; g < G; ++g) {
        const std::vector<double> key =
            turned(s, in, opt, &in.k[((b * Tn + i) * G + g) * D], length + i);
        std::copy(key.begin(), key.end(), out.kCache.begin() + k0 + g * D);
      }
      std::copy_n(in.v.begin() + (b * Tn + i) * G * E, G * E,
                  out.vCache.begin() + v0);
    }
    const int64_t end = length + appended; // keys after the append
    for (int64_t i = 0; i < Tn; ++i)
      for (int64_t h = 0; h < H; ++h) {
        const int64_t g = h / group, diagonal = end - Tn + i;
        auto allowed = [&](int64_t j) {
          return j >= pad && j < end && (!opt.causal || j <= diagonal) &&
                 (opt.windowLeft < 0 || j >= diagonal - opt.windowLeft) &&
                 (opt.windowRight < 0 || j <= diagonal + opt.windowRight);
        };
        const double slope =
            in.alibiSlopes.empty() ? 0.0 : in.alibiSlopes[b * H + h];
        // FlashAttention turns each query at its own position when causal
        // or windowed, else all at the cached length.
        const bool each =
            opt.causal || opt.windowLeft >= 0 || opt.windowRight >= 0;
        const std::vector<double> query =
            turned(s, in, opt, &in.q[((b * Tn + i) * H + h) * D],
                   length + (each ? i : 0));
        const double *q = query.data();
        std::vector<double> scores(end, 0.0);
        double peak = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < end; ++j) {
          if (!allowed(j))
            continue;
          const double *k = &out.kCache[cacheRow(s, in, b, j, D) + g * D];
          double dot = 0;
          for (int64_t d = 0; d < D; ++d)
            dot += q[d] * k[d];
          double score = opt.scale * dot;
          if (opt.softcap > 0)
            score = opt.softcap * std::tanh(score / opt.softcap);
          scores[j] = score - slope * std::abs(double(diagonal - j));
          peak = std::max(peak, scores[j]);
        }
        if (peak == -std::numeric_limits<double>::infinity())
          continue; // no key allowed: o 0, lse −inf
        double sum = 0;
        for (int64_t j = 0; j < end; ++j)
          if (allowed(j))
            sum += (scores[j] = std::exp(scores[j] - peak));
        double *o = &out.o[((b * Tn + i) * H + h) * E];
        for (int64_t j = 0; j < end; ++j) {
          if (!allowed(j))
            continue;
          const double *v = &out.vCache[cacheRow(s, in, b, j, E) + g * E];
          for (int64_t e = 0; e < E; ++e)
            o[e] += scores[j] / sum * v[e];
        }
        out.lse[(b * H + h) * Tn + i] = peak + std::log(sum);
      }
  }
  return out;
}
