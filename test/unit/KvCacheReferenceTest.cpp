//===- KvCacheReferenceTest.cpp - The float64 decoding step checked -------===//
//
// The K/V-cache reference against the attention reference over each entry's
// whole sequence (the cached tokens from the left padding, then the new
// ones, aligned bottom-right), with FlashAttention's options, appending or
// attend only: contiguous and paged caches with shuffled pages, GQA, every
// appended row where it belongs and every other element untouched, and
// appends that do not fit refused whole.
//
//===----------------------------------------------------------------------===//

#include "lib/reference/kvcache/KvCacheReference.h"
#include "lib/reference/attention/AttentionReference.h"
#include "test/support/KdaProblem.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

using namespace rudnn::reference;
using rudnn::test::normalValues;

namespace {

/// A contiguous problem: B = 3 entries of the given lengths, Tn new tokens,
/// Hq = 4 over Hk = 2, D = 8, E = 6, capacity 10.
struct Problem {
  KvCacheShape shape;
  KvCacheInputs in;
};

Problem contiguous(int64_t newTokens, std::vector<double> lengths) {
  std::mt19937 random(11 + newTokens);
  Problem p;
  KvCacheShape &s = p.shape;
  s.batch = static_cast<int64_t>(lengths.size());
  s.newTokens = newTokens;
  s.heads = 4, s.kvHeads = 2, s.headDim = 8, s.valueDim = 6, s.capacity = 10;
  p.in.q = normalValues(s.batch * newTokens * s.heads * s.headDim, random);
  p.in.k = normalValues(s.batch * newTokens * s.kvHeads * s.headDim, random);
  p.in.v = normalValues(s.batch * newTokens * s.kvHeads * s.valueDim, random);
  p.in.kCache =
      normalValues(s.batch * s.capacity * s.kvHeads * s.headDim, random);
  p.in.vCache =
      normalValues(s.batch * s.capacity * s.kvHeads * s.valueDim, random);
  p.in.cacheLengths = std::move(lengths);
  return p;
}

/// Entry b's rows [first, first + count) of a [B, rows, heads, width]
/// tensor.
std::vector<double> rows(const std::vector<double> &x, int64_t b, int64_t total,
                         int64_t first, int64_t count, int64_t width) {
  const auto begin = x.begin() + (b * total + first) * width;
  return std::vector<double>(begin, begin + count * width);
}

void expectNear(const std::vector<double> &got, const std::vector<double> &want,
                const char *what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i]) { // equal infinities: a row with no key
      EXPECT_NEAR(got[i], want[i], 1e-12) << what << "[" << i << "]";
    }
}

// The options (FlashAttention's, at each query's diagonal) as the
// attention reference takes them over the entry's sequence without its
// padding: bottom-right alignment keeps every distance to a diagonal.
struct OptionCase {
  bool leftpad, alibi, attendOnly;
  KvCacheOptions options;
};

/// Each entry of `p` against the attention reference over its sequence
/// (the cached tokens from the padding, then the new ones), the appended
/// rows where they belong and every other cache row as it was.
void checkAgainstAttention(const Problem &p, const OptionCase &c) {
  const KvCacheShape &s = p.shape;
  const KvCacheOutputs out = kvCacheAttention(s, p.in, c.options);
  const int64_t kw = s.kvHeads * s.headDim, vw = s.kvHeads * s.valueDim,
                tokens = s.newTokens, added = c.attendOnly ? 0 : tokens;
  for (int64_t b = 0; b < s.batch; ++b) {
    const auto length = static_cast<int64_t>(p.in.cacheLengths[b]);
    const int64_t pad = c.leftpad ? int64_t(p.in.cacheLeftpad[b]) : 0;
    EXPECT_EQ(out.status[b], 0);
    AttentionInputs whole;
    whole.q = rows(p.in.q, b, tokens, 0, tokens, s.heads * s.headDim);
    whole.k = rows(p.in.kCache, b, s.capacity, pad, length - pad, kw);
    whole.v = rows(p.in.vCache, b, s.capacity, pad, length - pad, vw);
    const std::vector<double> k = rows(p.in.k, b, tokens, 0, added, kw),
                              v = rows(p.in.v, b, tokens, 0, added, vw);
    whole.k.insert(whole.k.end(), k.begin(), k.end());
    whole.v.insert(whole.v.end(), v.begin(), v.end());
    if (c.alibi)
      whole.alibiSlopes = rows(p.in.alibiSlopes, b, 1, 0, 1, s.heads);
    AttentionOptions options;
    options.scale = c.options.scale;
    options.causal = c.options.causal;
    options.windowLeft = c.options.windowLeft;
    options.windowRight = c.options.windowRight;
    options.softcap = c.options.softcap;
    const AttentionOutputs want =
        attentionForward({1, tokens, length - pad + added, s.heads, s.kvHeads,
                          s.headDim, s.valueDim},
                         whole, options);
    expectNear(rows(out.o, b, tokens, 0, tokens, s.heads * s.valueDim), want.o,
               "o");
    expectNear(rows(out.lse, b, s.heads, 0, s.heads, tokens), want.lse, "lse");
    expectNear(rows(out.kCache, b, s.capacity, length, added, kw), k,
               "appended k");
    expectNear(rows(out.vCache, b, s.capacity, length, added, vw), v,
               "appended v");
    for (auto [first, count] :
         {std::pair<int64_t, int64_t>{0, length},
          {length + added, s.capacity - length - added}}) {
      expectNear(rows(out.kCache, b, s.capacity, first, count, kw),
                 rows(p.in.kCache, b, s.capacity, first, count, kw),
                 "untouched k");
      expectNear(rows(out.vCache, b, s.capacity, first, count, vw),
                 rows(p.in.vCache, b, s.capacity, first, count, vw),
                 "untouched v");
    }
  }
}

TEST(KvCacheReference, MatchesAttentionOverTheWholeSequence) {
  const OptionCase cases[] = {{false, false, false, {0.3}},
                              {true, true, false, {0.3, false, 2, 1, 1.5}},
                              {true, false, false, {0.3, true, 3, -1, 0}},
                              {true, true, true, {0.3, true, -1, -1, 2.0}},
                              {false, false, true, {0.3, false, 1, 2, 0}}};
  std::mt19937 random(3);
  for (const OptionCase &c : cases)
    for (int64_t newTokens : {1, 3}) {
      Problem p = contiguous(newTokens, {3, 4, 10.0 - newTokens});
      if (c.leftpad)
        p.in.cacheLeftpad = {1, 0, 2};
      if (c.alibi)
        p.in.alibiSlopes = normalValues(p.shape.batch * p.shape.heads, random);
      if (c.attendOnly)
        p.in.k.clear(), p.in.v.clear();
      checkAgainstAttention(p, c);
    }
}

TEST(KvCacheReference, AppendsThatDoNotFitAreRefusedWhole) {
  // Entry 0 one token past the capacity, entry 1 a negative length, entry 2
  // exactly full.
  Problem p = contiguous(2, {9, -1, 8});
  const KvCacheOutputs out = kvCacheAttention(p.shape, p.in, {0.5});
  EXPECT_EQ(out.status, (std::vector<double>{1, 1, 0}));
  const KvCacheShape &s = p.shape;
  const int64_t kw = s.kvHeads * s.headDim, ow = s.heads * s.valueDim;
  for (int64_t b : {0, 1}) {
    expectNear(rows(out.kCache, b, s.capacity, 0, s.capacity, kw),
               rows(p.in.kCache, b, s.capacity, 0, s.capacity, kw),
               "refused entry's cache");
    for (double x : rows(out.o, b, 2, 0, 2, ow))
      EXPECT_EQ(x, 0.0);
    for (double x : rows(out.lse, b, s.heads, 0, s.heads, 2))
      EXPECT_TRUE(std::isinf(x) && x < 0);
  }
}

TEST(KvCacheReference, PagedCachesMatchContiguousOnes) {
  // The contiguous problem's caches cut into pages of 2 tokens, shuffled
  // into a pool with spare pages.
  Problem p = contiguous(3, {0, 4, 7});
  const KvCacheShape &s = p.shape;
  const int64_t pageSize = 2, slots = s.capacity / pageSize,
                pages = s.batch * slots + 3;
  std::vector<int64_t> order(pages);
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), std::mt19937(5));
  KvCacheShape paged = s;
  paged.pages = pages, paged.pageSize = pageSize, paged.maxPages = slots;
  KvCacheInputs in = p.in;
  const int64_t kw = s.kvHeads * s.headDim, vw = s.kvHeads * s.valueDim;
  std::mt19937 random(3);
  in.kCache = normalValues(pages * pageSize * kw, random);
  in.vCache = normalValues(pages * pageSize * vw, random);
  in.blockTable.clear();
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t slot = 0; slot < slots; ++slot) {
      const int64_t page = order[b * slots + slot];
      in.blockTable.push_back(static_cast<double>(page));
      std::copy_n(p.in.kCache.begin() + (b * s.capacity + slot * pageSize) * kw,
                  pageSize * kw, in.kCache.begin() + page * pageSize * kw);
      std::copy_n(p.in.vCache.begin() + (b * s.capacity + slot * pageSize) * vw,
                  pageSize * vw, in.vCache.begin() + page * pageSize * vw);
    }
  const KvCacheOutputs want = kvCacheAttention(s, p.in, {0.4}),
                       got = kvCacheAttention(paged, in, {0.4});
  expectNear(got.o, want.o, "o");
  expectNear(got.lse, want.lse, "lse");
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t slot = 0; slot < slots; ++slot) {
      const int64_t page = order[b * slots + slot];
      expectNear(
          rows(got.kCache, page, pageSize, 0, pageSize, kw),
          rows(want.kCache, b, s.capacity, slot * pageSize, pageSize, kw),
          "paged k");
    }
  // A page index out of range refuses the entry only where it is needed.
  in.blockTable[0 * slots + 1] = -1;          // entry 0 needs pages 0, 1
  in.blockTable[1 * slots + slots - 1] = 1e9; // entry 1 never reaches it
  const KvCacheOutputs refused = kvCacheAttention(paged, in, {0.4});
  EXPECT_EQ(refused.status, (std::vector<double>{1, 0, 0}));
}

} // namespace
