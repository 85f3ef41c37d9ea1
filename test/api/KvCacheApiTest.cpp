//===- KvCacheApiTest.cpp - rudnn::kvCacheAttention against float64 -------===//
//
// A decoding step through the JIT API on fresh random inputs: o, lse,
// status and the caches after the append against the float64 reference,
// for empty, one-token, random and full caches in one batch; one, two and
// seven new tokens; GQA groups of 1 to 8; splits forced and chosen by the
// device; contiguous and paged caches (shuffled tables, pages of 1 to 64
// tokens); head dims 64, 72, 128 and 256 in both memory layouts. Refused
// entries (an append past the capacity, a negative length, a page out of
// range) write nothing and say so; bad calls are rejected with nothing
// written; sizes and lengths never recompile. On a GPU, one call captured
// into a CUDA graph replays correctly as the lengths on the device change.
//
//===----------------------------------------------------------------------===//

#include "lib/ContextImpl.h"
#include "lib/reference/kvcache/KvCacheReference.h"
#include "test/api/ApiFixture.h"

#include <gmock/gmock.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

using namespace rudnn;
using namespace rudnn::test;
using ::testing::HasSubstr;

namespace {

struct CacheCase {
  DType dtype;
  int B, T, H, G, D, E;
  int capacity;           // contiguous: S
  int pageSize, maxPages; // paged when pageSize > 0
  int splits;
  Layout layout;
};

void PrintTo(const CacheCase &, std::ostream *) {}

/// A problem's float64 inputs (no k and v: attend only) and options.
struct CacheProblem {
  reference::KvCacheShape shape;
  reference::KvCacheInputs in;
  reference::KvCacheOptions options;
};

class KvCacheTest : public ApiTest {
protected:
  /// Random q, k, v and caches of `c`'s shape rounded to its dtype, the
  /// lengths given, and for a paged cache each entry's own pages in
  /// shuffled order.
  CacheProblem problem(const CacheCase &c, std::vector<double> lengths,
                       unsigned seed) {
    std::mt19937 random(seed);
    CacheProblem p;
    reference::KvCacheShape &s = p.shape;
    s.batch = c.B;
    s.newTokens = c.T;
    s.heads = c.H;
    s.kvHeads = c.G;
    s.headDim = c.D;
    s.valueDim = c.E;
    int64_t rows = int64_t(c.B) * c.capacity; // cache rows of all entries
    if (c.pageSize) {
      s.pageSize = c.pageSize;
      s.maxPages = c.maxPages;
      s.pages = int64_t(c.B) * c.maxPages;
      rows = s.pages * c.pageSize;
      std::vector<double> pages(s.pages);
      std::iota(pages.begin(), pages.end(), 0.0);
      std::shuffle(pages.begin(), pages.end(), random);
      p.in.blockTable = pages;
    } else {
      s.capacity = c.capacity;
    }
    p.in.q = normalValues(int64_t(c.B) * c.T * c.H * c.D, random);
    p.in.k = normalValues(int64_t(c.B) * c.T * c.G * c.D, random);
    p.in.v = normalValues(int64_t(c.B) * c.T * c.G * c.E, random);
    p.in.kCache = normalValues(rows * c.G * c.D, random);
    p.in.vCache = normalValues(rows * c.G * c.E, random);
    roundTo(c.dtype, {&p.in.q, &p.in.k, &p.in.v, &p.in.kCache, &p.in.vCache});
    p.in.cacheLengths = std::move(lengths);
    p.options.scale = 1.0 / std::sqrt(double(c.D));
    return p;
  }

  /// The lengths every numerics case covers, entry by entry: an empty
  /// cache, one token, a random length and a full one (room for T alone).
  static std::vector<double> coveringLengths(const CacheCase &c,
                                             unsigned seed) {
    const int room = (c.pageSize ? c.pageSize * c.maxPages : c.capacity) - c.T;
    std::mt19937 random(seed);
    std::uniform_int_distribution<int> any(0, room);
    std::vector<double> lengths;
    for (int b = 0; b < c.B; ++b)
      lengths.push_back(b % 4 == 0   ? 0
                        : b % 4 == 1 ? std::min(1, room)
                        : b % 4 == 2 ? any(random)
                                     : room);
    return lengths;
  }

  /// The step's device results: o, lse, status and the caches after it.
  struct Results {
    std::vector<double> o, lse, status, kCache, vCache;
  };

  /// `count` i32 values of `tensor`.
  std::vector<double> readInts(const DeviceTensor &tensor, size_t count) {
    std::vector<int32_t> values(count);
    context->copyToHost(values.data(), tensor.view.data, count * 4);
    context->synchronize();
    return std::vector<double>(values.begin(), values.end());
  }

  /// Runs `p` through kvCacheAttention with `c`'s layout and splits, with
  /// a status tensor unless `withStatus` is false.
  Results run(const CacheCase &c, const CacheProblem &p,
              bool withStatus = true) {
    const reference::KvCacheShape &s = p.shape;
    const int64_t B = c.B, T = c.T, H = c.H, G = c.G, D = c.D, E = c.E;
    // Contiguous caches [N, S, G, *] (N = B without a row map); pages
    // [P, Z, G, *].
    const int64_t outer = c.pageSize    ? s.pages
                          : s.cacheRows ? s.cacheRows
                                        : B,
                  rows = c.pageSize ? c.pageSize : c.capacity;
    const bool appends = !p.in.k.empty();
    DeviceTensor q = sequence(p.in.q, B, T, H, D, c.dtype, c.layout), k, v;
    if (appends) {
      k = sequence(p.in.k, B, T, G, D, c.dtype, c.layout);
      v = sequence(p.in.v, B, T, G, E, c.dtype, c.layout);
    }
    DeviceTensor kCache =
        sequence(p.in.kCache, outer, rows, G, D, c.dtype, c.layout);
    DeviceTensor vCache =
        sequence(p.in.vCache, outer, rows, G, E, c.dtype, c.layout);
    DeviceTensor lengths =
        upload(bytesOf<int32_t>(p.in.cacheLengths), DType::I32);
    lengths.view = TensorView::contiguous(lengths.view.data, DType::I32, {B});
    DeviceTensor o = sequence(std::vector<double>(B * T * H * E, NAN), B, T, H,
                              E, c.dtype, c.layout);
    DeviceTensor lse = dense(std::vector<double>(B * H * T, NAN), {B, H, T});
    DeviceTensor status =
        upload(bytesOf<int32_t>(std::vector<double>(B, 7)), DType::I32);
    status.view = TensorView::contiguous(status.view.data, DType::I32, {B});
    DeviceTensor table, leftpad, slopes, cacheRows, cos, sin;
    KvCacheInputs inputs{q.view,      k.view, v.view,       kCache.view,
                         vCache.view, {},     lengths.view, {},
                         {},          {},     {},           {}};
    if (!appends)
      inputs.k.reset(), inputs.v.reset();
    if (!p.in.cacheLeftpad.empty()) {
      leftpad = upload(bytesOf<int32_t>(p.in.cacheLeftpad), DType::I32);
      inputs.cacheLeftpad =
          TensorView::contiguous(leftpad.view.data, DType::I32, {B});
    }
    if (!p.in.alibiSlopes.empty()) {
      slopes = dense(p.in.alibiSlopes, {B, H});
      inputs.alibiSlopes = slopes.view;
    }
    if (!p.in.cacheBatchIdx.empty()) {
      cacheRows = upload(bytesOf<int32_t>(p.in.cacheBatchIdx), DType::I32);
      inputs.cacheBatchIdx =
          TensorView::contiguous(cacheRows.view.data, DType::I32, {B});
    }
    if (!p.in.rotaryCos.empty()) {
      cos = dense(p.in.rotaryCos, {s.rotaryRows, s.rotaryPairs}, c.dtype);
      sin = dense(p.in.rotarySin, {s.rotaryRows, s.rotaryPairs}, c.dtype);
      inputs.rotaryCos = cos.view, inputs.rotarySin = sin.view;
    }
    if (c.pageSize) {
      table = upload(bytesOf<int32_t>(p.in.blockTable), DType::I32);
      table.view = TensorView::contiguous(table.view.data, DType::I32,
                                          {B, int64_t(c.maxPages)});
      inputs.blockTable = table.view;
    }
    KvCacheOptions options;
    options.splits = c.splits;
    options.scale = float(p.options.scale);
    options.causal = p.options.causal;
    options.windowLeft = int(p.options.windowLeft);
    options.windowRight = int(p.options.windowRight);
    options.softcap = float(p.options.softcap);
    options.rotaryInterleaved = p.options.rotaryInterleaved;
    KvCacheOutputs outputs{o.view, lse.view, status.view};
    if (!withStatus)
      outputs.status.reset();
    kvCacheAttention(*context, inputs, outputs, options);
    Results got;
    got.o = readSequence(o, B, T, H, E);
    got.lse = read(lse, B * H * T);
    got.status = readInts(status, B);
    got.kCache = readSequence(kCache, outer, rows, G, D);
    got.vCache = readSequence(vCache, outer, rows, G, E);
    return got;
  }

  /// Runs `p` and compares everything with the float64 reference: the
  /// caches exactly (the append copies; turned keys within the tolerance),
  /// o and lse within `tolerance`.
  /// Returns what ran.
  Results matchesFloat64(const CacheCase &c, const CacheProblem &p) {
    const reference::KvCacheOutputs want =
        reference::kvCacheAttention(p.shape, p.in, p.options);
    const Results got = run(c, p);
    const double tolerance = c.dtype == DType::F32 ? 1e-5 : 1e-2;
    EXPECT_LT(relativeError(got.o, want.o), tolerance);
    EXPECT_LT(relativeError(got.lse, want.lse), tolerance);
    EXPECT_EQ(got.status, want.status);
    if (p.in.rotaryCos.empty()) {
      EXPECT_EQ(got.kCache, want.kCache);
    } else { // the keys turned in f32, rounded once
      EXPECT_LT(relativeError(got.kCache, want.kCache), tolerance);
    }
    EXPECT_EQ(got.vCache, want.vCache);
    return got;
  }
};

class KvCacheNumerics : public KvCacheTest,
                        public ::testing::WithParamInterface<CacheCase> {};

TEST_P(KvCacheNumerics, MatchesFloat64) {
  const CacheCase &c = GetParam();
  const unsigned seed = unsigned(c.B * 7 + c.T * 31 + c.D * 3 + c.pageSize);
  matchesFloat64(c, problem(c, coveringLengths(c, seed), seed));
}

std::string caseName(const ::testing::TestParamInfo<CacheCase> &info) {
  const CacheCase &c = info.param;
  std::string name = std::string(dtypeName(c.dtype)) + "_B" +
                     std::to_string(c.B) + "_T" + std::to_string(c.T) + "_H" +
                     std::to_string(c.H) + "_G" + std::to_string(c.G) + "_D" +
                     std::to_string(c.D) + "_E" + std::to_string(c.E);
  name += c.pageSize ? "_page" + std::to_string(c.pageSize) + "x" +
                           std::to_string(c.maxPages)
                     : "_S" + std::to_string(c.capacity);
  name += c.splits ? "_splits" + std::to_string(c.splits) : "_auto";
  return name + (c.layout == Layout::BHTD ? "_BHTD" : "_BTHD");
}

constexpr DType f32 = DType::F32, bf16 = DType::BF16, f16 = DType::F16;
constexpr Layout bthd = Layout::BTHD, bhtd = Layout::BHTD;

INSTANTIATE_TEST_SUITE_P(
    Contiguous, KvCacheNumerics,
    ::testing::Values(
        // Decoding, GQA group 4; T = 2 with odd head dims, strided views.
        CacheCase{f32, 4, 1, 8, 2, 64, 64, 40, 0, 0, 0, bthd},
        CacheCase{f32, 4, 2, 4, 1, 72, 72, 50, 0, 0, 0, bhtd},
        // Seven new tokens of a group of 8: 56 query rows, four passes.
        CacheCase{f32, 4, 7, 8, 1, 64, 64, 40, 0, 0, 5, bthd},
        // No grouping, two parts; a long cache the device splits itself.
        CacheCase{f32, 4, 1, 4, 4, 128, 128, 300, 0, 0, 2, bhtd},
        CacheCase{f32, 4, 1, 4, 1, 64, 64, 700, 0, 0, 0, bthd},
        // More entries than a warp scans at once (the work items' lookup).
        CacheCase{f32, 40, 1, 2, 1, 32, 32, 20, 0, 0, 3, bthd},
        // The 16-bit production shape and the widest heads.
        CacheCase{bf16, 4, 1, 32, 4, 128, 128, 200, 0, 0, 0, bthd},
        CacheCase{f16, 4, 2, 8, 2, 256, 256, 64, 0, 0, 2, bhtd}),
    caseName);

INSTANTIATE_TEST_SUITE_P(
    Paged, KvCacheNumerics,
    ::testing::Values(CacheCase{f32, 4, 2, 4, 2, 64, 64, 0, 1, 40, 2, bthd},
                      CacheCase{bf16, 4, 1, 8, 2, 128, 128, 0, 16, 8, 0, bhtd},
                      CacheCase{f32, 4, 3, 4, 4, 64, 64, 0, 64, 3, 5, bthd}),
    caseName);

TEST_F(KvCacheTest, SplitsForcedOrChosenAgree) {
  // One entry long enough for the device to split it, beside short ones.
  const CacheCase base{f32, 3, 1, 4, 2, 64, 64, 600, 0, 0, 0, bthd};
  const CacheProblem p = problem(base, {599, 5, 300}, 11);
  std::vector<std::vector<double>> outputs;
  for (int splits : {0, 1, 2, 5}) {
    CacheCase c = base;
    c.splits = splits;
    outputs.push_back(matchesFloat64(c, p).o);
  }
  for (size_t i = 1; i < outputs.size(); ++i)
    EXPECT_LT(relativeError(outputs[i], outputs[0]), 1e-6) << i;
}

// FlashAttention's options at each query's diagonal, appending or attend
// only, contiguous and paged: left padding (drawn within each length),
// windows, causal or not, softcaps and ALiBi slopes, alone and together,
// with forced parts that start past the padding and the window.
TEST_F(KvCacheTest, FlashAttentionOptionsMatchFloat64) {
  struct OptionCase {
    const char *name;
    bool attendOnly, leftpad, alibi, causal;
    int windowLeft, windowRight;
    double softcap;
    int splits;
  };
  // Each case compiles a kernel of its own: the contiguous f32 layout
  // takes them all, the others the first (combined) ones.
  const OptionCase cases[] = {
      {"everything", false, true, true, true, 6, 0, 3.0, 3},
      {"attend only, everything", true, true, true, false, 7, 3, 4.0, 0},
      {"leftpad, window", false, true, false, true, 5, -1, 0, 3},
      {"non-causal window", false, true, false, false, 4, 2, 0, 0},
      {"attend only", true, true, false, true, -1, -1, 0, 2}};
  struct LayoutCase {
    CacheCase c;
    size_t cases; // how many of `cases`, from the first
  };
  const LayoutCase layouts[] = {
      {CacheCase{f32, 5, 3, 4, 2, 40, 24, 60, 0, 0, 0, bthd}, 5},
      {CacheCase{f32, 5, 3, 4, 2, 40, 24, 0, 8, 8, 0, bhtd}, 3},
      {CacheCase{bf16, 3, 2, 8, 2, 64, 64, 70, 0, 0, 0, bhtd}, 1}};
  unsigned seed = 40;
  for (const LayoutCase &layout : layouts)
    for (size_t i = 0; i < layout.cases; ++i) {
      const OptionCase &o = cases[i];
      CacheCase c = layout.c;
      SCOPED_TRACE(std::string(o.name) + (c.pageSize ? ", paged" : "") + ", " +
                   dtypeName(c.dtype));
      c.splits = o.splits;
      CacheProblem p = problem(c, coveringLengths(c, seed), seed);
      std::mt19937 random(seed++);
      if (o.attendOnly)
        p.in.k.clear(), p.in.v.clear();
      if (o.leftpad)
        for (double length : p.in.cacheLengths)
          p.in.cacheLeftpad.push_back(
              std::uniform_int_distribution<int>(0, int(length))(random));
      std::uniform_real_distribution<double> slope(0.05, 0.6);
      for (int h = 0; o.alibi && h < c.B * c.H; ++h)
        p.in.alibiSlopes.push_back(slope(random));
      p.options.causal = o.causal;
      p.options.windowLeft = o.windowLeft;
      p.options.windowRight = o.windowRight;
      p.options.softcap = o.softcap;
      const Results got = matchesFloat64(c, p);
      EXPECT_EQ(got.status, std::vector<double>(c.B, 0.0));
    }
}

// The rotary embedding (both pair layouts, over part of the head dims, the
// queries each at their own position or all at the cached length) and a
// contiguous cache whose rows the entries pick (a pool of more rows than
// entries), alone and with the other options.
TEST_F(KvCacheTest, RotaryEmbeddingAndCacheRowsMatchFloat64) {
  struct RotaryCase {
    const char *name;
    CacheCase c;
    bool interleaved, causal, rows;
    int pairs, windowLeft;
  };
  const RotaryCase cases[] = {
      {"NeoX pairs over 24 of 40 features, rows of a pool",
       CacheCase{f32, 5, 3, 4, 2, 40, 24, 40, 0, 0, 2, bthd}, false, true, true,
       12, -1},
      {"interleaved pairs, every query at L, windowed keys",
       CacheCase{f32, 5, 3, 4, 2, 40, 24, 0, 8, 8, 0, bhtd}, true, false, false,
       20, -1},
      {"bf16, interleaved, a window, rows of a pool",
       CacheCase{bf16, 3, 2, 8, 2, 64, 64, 70, 0, 0, 0, bthd}, true, true, true,
       32, 20}};
  unsigned seed = 60;
  for (const RotaryCase &r : cases) {
    SCOPED_TRACE(r.name);
    const CacheCase &c = r.c;
    CacheProblem p = problem(c, coveringLengths(c, seed), seed);
    std::mt19937 random(seed++);
    reference::KvCacheShape &s = p.shape;
    s.rotaryPairs = r.pairs;
    s.rotaryRows = (c.pageSize ? c.pageSize * c.maxPages : c.capacity) + 3;
    std::uniform_real_distribution<double> angle(-3.1, 3.1);
    for (int64_t i = 0; i < s.rotaryRows * s.rotaryPairs; ++i) {
      const double theta = angle(random);
      p.in.rotaryCos.push_back(std::cos(theta));
      p.in.rotarySin.push_back(std::sin(theta));
    }
    roundTo(c.dtype, {&p.in.rotaryCos, &p.in.rotarySin});
    if (r.rows) { // B entries over B + 3 cache rows, shuffled
      s.cacheRows = c.B + 3;
      std::vector<double> rows(s.cacheRows);
      std::iota(rows.begin(), rows.end(), 0.0);
      std::shuffle(rows.begin(), rows.end(), random);
      p.in.cacheBatchIdx.assign(rows.begin(), rows.begin() + c.B);
      p.in.kCache = normalValues(s.cacheRows * c.capacity * c.G * c.D, random);
      p.in.vCache = normalValues(s.cacheRows * c.capacity * c.G * c.E, random);
      roundTo(c.dtype, {&p.in.kCache, &p.in.vCache});
    }
    p.options.rotaryInterleaved = r.interleaved;
    p.options.causal = r.causal;
    p.options.windowLeft = r.windowLeft;
    const Results got = matchesFloat64(c, p);
    EXPECT_EQ(got.status, std::vector<double>(c.B, 0.0));
  }
}

TEST_F(KvCacheTest, RefusedEntriesWriteNothingAndSaySo) {
  // Past the capacity by one, a negative length, then one that fits.
  const CacheCase contiguous{f32, 3, 2, 4, 2, 32, 32, 20, 0, 0, 0, bthd};
  CacheProblem p = problem(contiguous, {19, -1, 18}, 3);
  const Results got = matchesFloat64(contiguous, p);
  EXPECT_EQ(got.status, (std::vector<double>{1, 1, 0}));
  for (int64_t i = 0; i < 2 * 2 * 4 * 32; ++i) // entries 0 and 1's o
    ASSERT_EQ(got.o[i], 0.0) << i;
  // Paged: a page out of range within the first entry's tokens, a −1 past
  // the second's (never read), and an entry with no room.
  const CacheCase paged{f32, 3, 1, 4, 2, 32, 32, 0, 4, 3, 0, bhtd};
  CacheProblem q = problem(paged, {5, 7, 12}, 4);
  q.in.blockTable[0] = 9;  // entry 0, tokens 0-3: page 9 of 9
  q.in.blockTable[5] = -1; // entry 1, tokens 8-11: beyond its 8
  EXPECT_EQ(matchesFloat64(paged, q).status, (std::vector<double>{1, 0, 1}));
  // A left padding past the length, or negative.
  CacheProblem padded = problem(contiguous, {4, 6, 5}, 5);
  padded.in.cacheLeftpad = {5, 6, -1};
  EXPECT_EQ(matchesFloat64(contiguous, padded).status,
            (std::vector<double>{1, 0, 1}));
  // Cache rows out of range, or two entries appending to one row; and new
  // tokens past the rotary positions (entry 1: 6 + 2 > 7).
  CacheProblem rows = problem(contiguous, {4, 6, 5}, 6);
  rows.in.cacheBatchIdx = {3, 1, 1};
  EXPECT_EQ(matchesFloat64(contiguous, rows).status,
            (std::vector<double>{1, 1, 1}));
  rows.in.cacheBatchIdx = {2, 0, 1};
  rows.shape.rotaryRows = 7, rows.shape.rotaryPairs = 4;
  rows.in.rotaryCos.assign(7 * 4, 0.6), rows.in.rotarySin.assign(7 * 4, 0.8);
  EXPECT_EQ(matchesFloat64(contiguous, rows).status,
            (std::vector<double>{0, 1, 0}));
}

// With a status, the kernel refuses an entry appending to a page another
// entry uses, as the float64 reference does; the others still run.
TEST_F(KvCacheTest, WithStatusAnEntryAppendingToAnotherEntrysPageIsRefused) {
  const CacheCase paged{f32, 3, 1, 4, 2, 32, 32, 0, 4, 3, 0, bhtd};
  // Entry 2 appends to the page entry 0 reads its first tokens from.
  CacheProblem readByAnother = problem(paged, {5, 7, 2}, 4);
  readByAnother.in.blockTable[6] = readByAnother.in.blockTable[0];
  EXPECT_EQ(matchesFloat64(paged, readByAnother).status,
            (std::vector<double>{0, 0, 1}));
  // Entries 0 and 1 both append to one page: neither may.
  CacheProblem bothAppend = problem(paged, {5, 7, 2}, 4);
  bothAppend.in.blockTable[4] = bothAppend.in.blockTable[1];
  EXPECT_EQ(matchesFloat64(paged, bothAppend).status,
            (std::vector<double>{1, 1, 0}));
  // A page two entries only read is theirs to share.
  CacheProblem sharedPrefix = problem(paged, {5, 7, 2}, 4);
  sharedPrefix.in.blockTable[3] = sharedPrefix.in.blockTable[0];
  EXPECT_EQ(matchesFloat64(paged, sharedPrefix).status,
            (std::vector<double>{0, 0, 0}));
}

// Without a status tensor the entries are checked on the host, as
// kdaDecode's slots are: the call throws naming the entry, writing nothing.
TEST_F(KvCacheTest, WithoutStatusUnservableEntriesAreNamedBeforeAnythingRuns) {
  auto rejects = [&](const CacheCase &c, const CacheProblem &p,
                     const std::string &message) {
    EXPECT_THAT([&] { run(c, p, /*withStatus=*/false); },
                ::testing::ThrowsMessage<InvalidArgument>(HasSubstr(message)));
  };
  const CacheCase contiguous{f32, 3, 2, 4, 2, 32, 32, 20, 0, 0, 0, bthd};
  rejects(contiguous, problem(contiguous, {18, 19, 0}, 3),
          "'cache_lengths' entry 1 is 19: appending 2 tokens needs 0 ≤ length "
          "≤ 18");
  rejects(contiguous, problem(contiguous, {0, 4, -1}, 3),
          "'cache_lengths' entry 2 is -1");
  // Entries that fit still run, and match float64.
  matchesFloat64(contiguous, problem(contiguous, {18, 0, 5}, 3));
  const CacheCase paged{f32, 3, 1, 4, 2, 32, 32, 0, 4, 3, 0, bhtd};
  CacheProblem outside = problem(paged, {5, 7, 2}, 4);
  outside.in.blockTable[1] = 99; // entry 0, tokens 4-5
  rejects(paged, outside,
          "'block_table' entry 0 holds page 99 at slot 1, outside the");
  CacheProblem bothAppend = problem(paged, {5, 7, 2}, 4);
  bothAppend.in.blockTable[4] = bothAppend.in.blockTable[1]; // slot 1 each
  rejects(paged, bothAppend, "entries 0 and 1 both append to page");
  CacheProblem readByAnother = problem(paged, {5, 7, 2}, 4);
  readByAnother.in.blockTable[6] = readByAnother.in.blockTable[0];
  rejects(paged, readByAnother,
          "'block_table' entry 2 appends to page " +
              std::to_string(int(readByAnother.in.blockTable[0])) +
              ", which entry 0 reads");
}

// The partial results take the slots the call can use: the forced splits,
// or as many as the workspace budget holds for its rows; a prefill of
// 16384 tokens at H = 64, E = 128 no longer asks for 64 × its output
// (32 GiB). Sizes only: the query runs nothing and reads no tensor.
TEST_F(KvCacheTest, WorkspaceHoldsTheSlotsTheCallCanUse) {
  auto workspace = [&](int64_t T, int splits) {
    const int64_t B = 1, H = 64, G = 8, D = 128, S = T + 64;
    // Views of memory nothing reads: disjoint, aligned addresses.
    char *base = reinterpret_cast<char *>(uintptr_t(1) << 40);
    auto view = [&](std::vector<int64_t> shape, DType type, int64_t at) {
      return TensorView::contiguous(base + (at << 36), type, std::move(shape));
    };
    KvCacheInputs in{view({B, T, H, D}, DType::F32, 0),
                     view({B, T, G, D}, DType::F32, 1),
                     view({B, T, G, D}, DType::F32, 2),
                     view({B, S, G, D}, DType::F32, 3),
                     view({B, S, G, D}, DType::F32, 4),
                     {},
                     view({B}, DType::I32, 5),
                     {},
                     {},
                     {},
                     {},
                     {}};
    KvCacheOutputs out{
        view({B, T, H, D}, DType::F32, 6), {}, view({B}, DType::I32, 7)};
    KvCacheOptions options;
    options.splits = splits;
    return context->workspaceBytes(
        [&] { kvCacheAttention(*context, in, out, options); });
  };
  const double rows = 16384.0 * 64, slot = rows * (128 + 1) * 4;
  const size_t one = workspace(16384, 1), four = workspace(16384, 4);
  EXPECT_NEAR(double(four - one), 3 * slot, 4096);
  const size_t chosen = workspace(16384, 0);
  EXPECT_LE(double(chosen), double(one) + slot) << "one slot a row at most";
  EXPECT_LT(double(chosen), 1.1 * (1 << 30));
  // A decoding step of one token keeps all 64 slots.
  const size_t step = workspace(1, 0), stepOne = workspace(1, 1);
  EXPECT_NEAR(double(step - stepOne), 63.0 * 64 * (128 + 1) * 4, 4096);
}

TEST_F(KvCacheTest, OneCapturedCallFollowsTheLengthsOnTheDevice) {
  // Where the backend captures graphs (CUDA), one call is captured and
  // replayed; elsewhere the same call is made again. Between runs only the
  // lengths in device memory change; each run's o and caches must be the
  // float64 step from the caches the previous run left.
  const CacheCase c{bf16, 3, 1, 8, 2, 64, 64, 520, 0, 0, 0, bthd};
  CacheProblem p = problem(c, {0, 0, 0}, 21);
  const int64_t B = c.B, H = c.H, G = c.G, D = c.D, S = c.capacity;
  DeviceTensor q = dense(p.in.q, {B, 1, H, D}, c.dtype);
  DeviceTensor k = dense(p.in.k, {B, 1, G, D}, c.dtype);
  DeviceTensor v = dense(p.in.v, {B, 1, G, D}, c.dtype);
  DeviceTensor kCache = dense(p.in.kCache, {B, S, G, D}, c.dtype);
  DeviceTensor vCache = dense(p.in.vCache, {B, S, G, D}, c.dtype);
  DeviceTensor o =
      dense(std::vector<double>(B * H * D, 0), {B, 1, H, D}, c.dtype);
  DeviceTensor lengths = upload(bytesOf<int32_t>({0, 0, 0}), DType::I32);
  lengths.view = TensorView::contiguous(lengths.view.data, DType::I32, {B});
  const KvCacheInputs inputs{q.view,      k.view, v.view,       kCache.view,
                             vCache.view, {},     lengths.view, {},
                             {},          {},     {},           {}};
  runtime::Backend &backend = context->impl().backend();
  const bool graphs = backend.supportsGraphs();
  runtime::StreamHandle stream = graphs ? backend.createStream() : nullptr;
  auto call = [&] {
    kvCacheAttention(*context, inputs, {o.view, {}, {}}, {}, stream);
  };
  call(); // compiles, and sizes the workspace, outside the capture
  context->synchronize(stream);
  std::unique_ptr<runtime::CapturedGraph> graph;
  if (graphs) {
    backend.beginCapture(stream);
    call();
    graph = backend.endCapture(stream);
  }
  // Short, then long enough for the device to split (two parts), then
  // back: the grid never changes, the parts do.
  for (const std::vector<double> &given :
       {std::vector<double>{5, 0, 17}, std::vector<double>{519, 300, 2},
        std::vector<double>{40, 41, 42}}) {
    p.in.cacheLengths = given;
    p.in.kCache = read(kCache, p.in.kCache.size());
    p.in.vCache = read(vCache, p.in.vCache.size());
    const reference::KvCacheOutputs want =
        reference::kvCacheAttention(p.shape, p.in, p.options);
    context->copyToDevice(lengths.view.data, bytesOf<int32_t>(given).data(),
                          4 * B, stream);
    if (graph)
      backend.replay(*graph, stream);
    else
      call();
    context->synchronize(stream);
    EXPECT_LT(relativeError(read(o, B * H * D), want.o), 1e-2);
    EXPECT_EQ(read(kCache, want.kCache.size()), want.kCache);
    EXPECT_EQ(read(vCache, want.vCache.size()), want.vCache);
  }
  if (stream)
    backend.destroyStream(stream);
}

TEST_F(KvCacheTest, AFunctionReturnsTheCacheItUpdatesUnderItsName) {
  // The function's cache result is its argument, updated: named as it,
  // and a call must pass the argument's view for it.
  const char *text = R"(
func.func @main(%q: tensor<?x?x?x16xf32>, %k: tensor<?x?x?x16xf32>,
                %v: tensor<?x?x?x16xf32>, %kc: tensor<?x?x?x16xf32>,
                %vc: tensor<?x?x?x16xf32>, %l: tensor<?xi32>)
    -> (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>) {
  %o, %k2, %v2, %lse, %s = rudnn.kv_cache_attention %q, %k, %v cache(%kc, %vc)
      lengths %l : (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>,
      tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>,
      tensor<?xi32>) -> (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>,
      tensor<?x?x?x16xf32>, tensor<?x?x?xf32>, tensor<?xi32>)
  return %o, %k2, %v2 : tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>,
      tensor<?x?x?x16xf32>
})";
  Function main = Module::parse(*context, text).function("main");
  ASSERT_EQ(main.results().size(), 3u);
  EXPECT_EQ(main.results()[1].name, "k_cache");
  EXPECT_EQ(main.results()[1].updates, "k_cache");
  EXPECT_EQ(main.results()[2].updates, "v_cache");
  EXPECT_EQ(main.results()[0].updates, "");
  std::mt19937 random(2);
  DeviceTensor q = dense(normalValues(16, random), {1, 1, 1, 16});
  DeviceTensor kc = dense(normalValues(64, random), {1, 4, 1, 16});
  DeviceTensor other = dense(normalValues(64, random), {1, 4, 1, 16});
  DeviceTensor vc = dense(normalValues(64, random), {1, 4, 1, 16});
  DeviceTensor o = dense(std::vector<double>(16, 0), {1, 1, 1, 16});
  DeviceTensor lengths = upload(bytesOf<int32_t>({2}), DType::I32);
  lengths.view = TensorView::contiguous(lengths.view.data, DType::I32, {1});
  EXPECT_THAT(
      [&] {
        main.call({q.view, q.view, q.view, kc.view, vc.view, lengths.view},
                  {o.view, other.view, vc.view});
      },
      ::testing::ThrowsMessage<InvalidArgument>(
          HasSubstr("'k_cache' is updated in place: pass the view of "
                    "'k_cache' for it")));
  EXPECT_EQ(read(o, 16), std::vector<double>(16, 0.0));
}

TEST_F(KvCacheTest, ChangingSizesLengthsOrLayoutCompilesNothing) {
  auto call = [&](int B, int T, int H, int G, int S, Layout layout) {
    const CacheCase c{bf16, B, T, H, G, 64, 64, S, 0, 0, 0, layout};
    CacheProblem p = problem(c, coveringLengths(c, unsigned(B + S)), 1);
    run(c, p);
  };
  call(2, 1, 8, 2, 32, bthd);
  const Counters before = context->counters();
  call(5, 3, 4, 4, 70, bhtd);
  call(1, 1, 16, 2, 300, bthd);
  const Counters after = context->counters();
  EXPECT_EQ(kernelsBuilt(after), kernelsBuilt(before));
  EXPECT_EQ(after.planCacheMisses, before.planCacheMisses);
}

TEST_F(KvCacheTest, BadCallsWriteNothing) {
  const int64_t B = 2, T = 1, H = 4, G = 2, S = 8, D = 16;
  std::mt19937 random(9);
  DeviceTensor q = dense(normalValues(B * T * H * D, random), {B, T, H, D});
  DeviceTensor k = dense(normalValues(B * T * G * D, random), {B, T, G, D});
  DeviceTensor v = dense(normalValues(B * T * G * D, random), {B, T, G, D});
  const std::vector<double> cached = normalValues(B * S * G * D, random);
  DeviceTensor kCache = dense(cached, {B, S, G, D});
  DeviceTensor vCache = dense(cached, {B, S, G, D});
  DeviceTensor lengths = upload(bytesOf<int32_t>({1, 2}), DType::I32);
  lengths.view = TensorView::contiguous(lengths.view.data, DType::I32, {B});
  DeviceTensor o = dense(std::vector<double>(B * T * H * D, 7), {B, T, H, D});
  DeviceTensor other = dense(cached, {B, S, G, D});
  const KvCacheInputs good{q.view,      k.view, v.view,       kCache.view,
                           vCache.view, {},     lengths.view, {},
                           {},          {},     {},           {}};
  auto rejects = [&](KvCacheInputs in, const std::string &message,
                     KvCacheOptions options = {}, TensorView out = {}) {
    if (!out.data)
      out = o.view;
    EXPECT_THAT(
        [&] {
          kvCacheAttention(*context, in, {out, {}, {}}, options);
        },
        ::testing::ThrowsMessage<InvalidArgument>(HasSubstr(message)));
  };
  KvCacheInputs in = good;
  in.kCache.dtype = DType::BF16;
  rejects(in, "'k_cache' must be f32, got bf16");
  in = good;
  in.cacheLengths.dtype = DType::F32;
  rejects(in, "'cache_lengths' must be i32");
  in = good;
  in.q.shape[2] = 3; // H = 3 over G = 2
  TensorView o3 = o.view;
  o3.shape[2] = 3;
  rejects(in, "must be a multiple of the key heads G = 2", {}, o3);
  in = good;
  in.vCache = kCache.view; // the same memory for both caches
  rejects(in, "overlaps");
  in = good;
  in.blockTable = lengths.view; // rank 1, not [B, M]
  rejects(in, "'block_table' must have rank 2");
  KvCacheOptions splits;
  splits.splits = 65;
  rejects(good, "'splits' must be 0 (the device chooses) or 1 to 64", splits);
  // The options' own rules: k and v together, the rotary tables together,
  // with new keys and at most D / 2 pairs, a row map only for a contiguous
  // cache, which otherwise has a row an entry.
  in = good;
  in.v.reset();
  rejects(in, "'k' and 'v' together");
  DeviceTensor table = dense(std::vector<double>(8 * 8), {8, 8}),
               wide = dense(std::vector<double>(8 * 9), {8, 9});
  in = good;
  in.rotaryCos = table.view;
  rejects(in, "'rotary_cos' and 'rotary_sin' together");
  in.rotarySin = table.view;
  in.k.reset(), in.v.reset();
  rejects(in, "'rotary' needs 'k' and 'v'");
  in = good;
  in.rotaryCos = wide.view, in.rotarySin = wide.view;
  rejects(in, "at most D / 2 = 8");
  in = good;
  in.cacheBatchIdx = lengths.view;
  in.blockTable = TensorView::contiguous(lengths.view.data, DType::I32, {B, 1});
  rejects(in, "cache_batch_idx");
  in = good;
  DeviceTensor kPool = dense(std::vector<double>(3 * S * G * D), {3, S, G, D}),
               vPool = dense(std::vector<double>(3 * S * G * D), {3, S, G, D});
  in.kCache = kPool.view, in.vCache = vPool.view;
  rejects(in, "without 'cache_batch_idx' they are one each");
  EXPECT_EQ(read(o, B * T * H * D), std::vector<double>(B * T * H * D, 7.0));
  EXPECT_EQ(read(kCache, cached.size()), read(other, cached.size()));
}

} // namespace
