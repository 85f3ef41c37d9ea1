//===- IntrinsicsTest.cpp - The emulation prelude's CUDA semantics --------===//
//
// Every kernel here runs through the emulation backend and is checked against
// exact values computed on the host from CUDA's and the PTX ISA's
// definitions; every kernel source also compiles with NVRTC, so the tests
// exercise text a GPU accepts.
//
//===----------------------------------------------------------------------===//

#include "runtime/compile/NvrtcCompiler.h"
#include "test/emulation/EmulationTestSupport.h"
#include "test/support/DeviceHeaders.h"
#include "test/support/SampleKernels.h"

#include "rudnn/errors.h"

#include <gmock/gmock.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

using namespace rudnn;
using namespace rudnn::runtime;
using ::testing::HasSubstr;

namespace {

using IntrinsicsTest = rudnn::test::EmulationTest;

constexpr unsigned kFull = 0xffffffffu;

//===----------------------------------------------------------------------===//
// Host references for 16-bit floating point, from the format definitions
//===----------------------------------------------------------------------===//

enum class Mode { Nearest, Zero, Down, Up };

/// IEEE-style binary16 (5 exponent bits) or bfloat16 (8) with its value
/// table; rounding searches the table rather than manipulating bits, so it
/// shares nothing with the prelude's implementation.
class Format16 {
public:
  Format16(int exponentBits, int mantissaBits)
      : exponentBits(exponentBits), mantissaBits(mantissaBits),
        infinity(
            static_cast<uint16_t>(((1u << exponentBits) - 1) << mantissaBits)) {
    for (unsigned bits = 0; bits < infinity; ++bits)
      values.push_back(decode(static_cast<uint16_t>(bits)));
    // The value one step above the largest finite one: where rounding to
    // nearest overflows, and an even neighbour for ties.
    values.push_back(std::ldexp(1.0, (1 << (exponentBits - 1))));
  }

  double decode(uint16_t bits) const {
    const int bias = (1 << (exponentBits - 1)) - 1;
    const unsigned field = (bits >> mantissaBits) & ((1u << exponentBits) - 1);
    const unsigned fraction = bits & ((1u << mantissaBits) - 1);
    double magnitude;
    if (field == (1u << exponentBits) - 1)
      magnitude = fraction ? std::numeric_limits<double>::quiet_NaN()
                           : std::numeric_limits<double>::infinity();
    else if (field == 0)
      magnitude = std::ldexp(fraction, 1 - bias - mantissaBits);
    else
      magnitude = std::ldexp(fraction + (1u << mantissaBits),
                             static_cast<int>(field) - bias - mantissaBits);
    return (bits & 0x8000) ? -magnitude : magnitude;
  }

  bool isNan(uint16_t bits) const { return (bits & 0x7fff) > infinity; }

  /// x rounded to this format; NaN gives 0x7fff.
  uint16_t round(double x, Mode mode) const {
    if (std::isnan(x))
      return 0x7fff;
    const bool negative = std::signbit(x);
    const uint16_t sign = negative ? 0x8000 : 0;
    const double a = std::fabs(x);
    if (std::isinf(a))
      return sign | infinity;
    // values[lo] <= a < values[lo + 1]; values.back() stands for infinity.
    const size_t last = values.size() - 1;
    size_t lo =
        std::upper_bound(values.begin(), values.end(), a) - values.begin() - 1;
    if (lo < last && values[lo] == a)
      return sign | static_cast<uint16_t>(lo);
    const bool away =
        (mode == Mode::Up && !negative) || (mode == Mode::Down && negative);
    size_t pick;
    if (lo >= last) // at or beyond the overflow step
      pick = mode == Mode::Nearest || away ? last : last - 1;
    else if (mode == Mode::Nearest) {
      const double middle = (values[lo] + values[lo + 1]) / 2;
      pick = a < middle ? lo : a > middle ? lo + 1 : (lo % 2 ? lo + 1 : lo);
    } else
      pick = away ? lo + 1 : lo;
    return sign | (pick == last ? infinity : static_cast<uint16_t>(pick));
  }

  /// Every finite non-negative value, its midpoint with the next and the
  /// floats just beside that midpoint, with both signs.
  std::vector<float> interestingFloats() const {
    std::vector<float> result;
    for (size_t i = 0; i + 1 < values.size(); ++i) {
      const float value = static_cast<float>(values[i]);
      const float middle = static_cast<float>((values[i] + values[i + 1]) / 2);
      for (float x : {value, middle, std::nextafter(middle, 0.0f),
                      std::nextafter(middle, INFINITY)}) {
        result.push_back(x);
        result.push_back(-x);
      }
    }
    return result;
  }

  const int exponentBits, mantissaBits;
  const uint16_t infinity;
  std::vector<double> values;
};

const Format16 &halfFormat() {
  static const Format16 format(5, 10);
  return format;
}

const Format16 &bfloat16Format() {
  static const Format16 format(8, 7);
  return format;
}

uint32_t floatBits(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  return bits;
}

/// Values k / 4 for |k| <= 8: exact in bf16 and f16, and every sum of 16
/// products plus a multiple of 1/16 below 2^10 is exact in fp32, so an
/// mma result has exactly one right answer.
std::vector<float> smallExactValues(std::mt19937 &random, size_t count,
                                    int range = 8, float scale = 0.25f) {
  std::uniform_int_distribution<int> pick(-range, range);
  std::vector<float> values(count);
  for (float &value : values)
    value = pick(random) * scale;
  return values;
}

/// D (m x n, row-major) = A (m x k, row-major) * B (k x n, row-major) + C.
std::vector<float> gemm(const float *a, const float *b, const float *c, int m,
                        int n, int k) {
  std::vector<float> d(m * n);
  for (int i = 0; i < m; ++i)
    for (int j = 0; j < n; ++j) {
      float sum = c ? c[i * n + j] : 0.0f;
      for (int l = 0; l < k; ++l)
        sum += a[i * k + l] * b[l * n + j];
      d[i * n + j] = sum;
    }
  return d;
}

//===----------------------------------------------------------------------===//
// Warp shuffles
//===----------------------------------------------------------------------===//

constexpr const char *kShuffleSource = R"cuda(
#include "rudnn/device.cuh"

// For widths 32, 16 and 8: idx, up, down, xor inside and across segments, a
// butterfly sum and an inclusive scan; then 8-byte and 16-bit shuffles.
extern "C" __global__ void shuffles(const int *in, long long *out) {
  const unsigned full = 0xffffffffu;
  const int t = threadIdx.x, lane = t % 32;
  const int v = in[t];
  long long *o = out + t * 24;
  for (int w = 0; w < 3; ++w) {
    const int width = 32 >> w;
    o[7 * w + 0] = __shfl_sync(full, v, (lane * 7 + 3) % 37, width);
    o[7 * w + 1] = __shfl_up_sync(full, v, 3, width);
    o[7 * w + 2] = __shfl_down_sync(full, v, 5, width);
    o[7 * w + 3] = __shfl_xor_sync(full, v, 5, width);
    o[7 * w + 4] = __shfl_xor_sync(full, v, 20, width);
    int sum = v;
    for (int offset = width / 2; offset > 0; offset /= 2)
      sum += __shfl_xor_sync(full, sum, offset, width);
    o[7 * w + 5] = sum;
    int scan = v;
    for (int offset = 1; offset < width; offset *= 2) {
      int other = __shfl_up_sync(full, scan, offset, width);
      if (lane % width >= offset)
        scan += other;
    }
    o[7 * w + 6] = scan;
  }
  const double d = __shfl_down_sync(full, v * 0.5, 1);
  o[21] = (long long)(d * 2);
  o[22] = __shfl_sync(full, v * (1ll << 33), 31 - lane) / (1ll << 33);
  const __half h = __shfl_xor_sync(full, __int2half_rn(v), 1);
  const __nv_bfloat16 b = __shfl_sync(full, __float2bfloat16(v), 0);
  o[23] = __half2int_rz(h) * 100000 + __bfloat162int_rz(b);
}
)cuda";

TEST_F(IntrinsicsTest, ShufflesFollowCudaForEveryWidth) {
  std::mt19937 random(11);
  std::uniform_int_distribution<int> pick(-1000, 1000);
  const int threads = 64; // two warps: shuffles never cross a warp
  std::vector<int> in(threads);
  for (int &v : in)
    v = pick(random) / 8 * 8; // multiples of 8: exact in bf16 too
  auto kernel = build("shuffles", kShuffleSource);
  DevicePtr dIn = upload(in);
  DevicePtr dOut = upload(std::vector<long long>(threads * 24, -1));
  ArgPack args;
  args.push(dIn).push(dOut);
  launch(*kernel, {1}, {threads}, args);
  std::vector<long long> out = download<long long>(dOut, threads * 24);

  for (int t = 0; t < threads; ++t) {
    const int warp = t / 32 * 32, lane = t % 32;
    auto at = [&](int l) { return static_cast<long long>(in[warp + l]); };
    for (int w = 0; w < 3; ++w) {
      // CUDA: each width-lane segment is a separate shuffle domain.
      const int width = 32 >> w, base = lane / width * width,
                position = lane % width;
      const long long *o = &out[t * 24 + 7 * w];
      SCOPED_TRACE("thread " + std::to_string(t) + " width " +
                   std::to_string(width));
      EXPECT_EQ(o[0], at(base + (lane * 7 + 3) % 37 % width));
      EXPECT_EQ(o[1], position >= 3 ? at(lane - 3) : at(lane));
      EXPECT_EQ(o[2], position + 5 < width ? at(lane + 5) : at(lane));
      EXPECT_EQ(o[3], at(lane ^ 5));
      // A lane beyond the caller's segment yields the caller's own value;
      // earlier segments are readable.
      EXPECT_EQ(o[4], (lane ^ 20) < base + width ? at(lane ^ 20) : at(lane));
      long long sum = 0, scan = 0;
      for (int l = base; l < base + width; ++l) {
        sum += at(l);
        if (l <= lane)
          scan += at(l);
      }
      EXPECT_EQ(o[5], sum);
      EXPECT_EQ(o[6], scan);
    }
    EXPECT_EQ(out[t * 24 + 21], lane < 31 ? at(lane + 1) : at(lane));
    EXPECT_EQ(out[t * 24 + 22], at(31 - lane));
    EXPECT_EQ(out[t * 24 + 23], at(lane ^ 1) * 100000 + at(0));
  }
}

TEST_F(IntrinsicsTest, DeviceLibraryWarpReductions) {
  auto kernel = build("reductions", R"cuda(
#include "rudnn/device.cuh"
extern "C" __global__ void reductions(const int *in, float *sums, int *maxima) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  const float sum = rudnn::warp_sum(in[t] * 0.125f);
  const int max = rudnn::warp_max(in[t]);
  sums[t] = sum;
  maxima[t] = max;
}
)cuda");
  std::mt19937 random(5);
  std::uniform_int_distribution<int> pick(-100000, 100000);
  const int blocks = 3, threads = 96;
  std::vector<int> in(blocks * threads);
  for (int &v : in)
    v = pick(random);
  DevicePtr dIn = upload(in);
  DevicePtr sums = upload(std::vector<float>(in.size(), 0));
  DevicePtr maxima = upload(std::vector<int>(in.size(), 0));
  ArgPack args;
  args.push(dIn).push(sums).push(maxima);
  launch(*kernel, {blocks}, {threads}, args);
  std::vector<float> gotSums = download<float>(sums, in.size());
  std::vector<int> gotMaxima = download<int>(maxima, in.size());
  for (size_t warp = 0; warp < in.size(); warp += 32) {
    // Multiples of 1/8 below 2^21: the sum is exact in any order.
    float sum = 0;
    int max = in[warp];
    for (size_t l = warp; l < warp + 32; ++l) {
      sum += in[l] * 0.125f;
      max = std::max(max, in[l]);
    }
    for (size_t l = warp; l < warp + 32; ++l) {
      EXPECT_EQ(gotSums[l], sum) << l;
      EXPECT_EQ(gotMaxima[l], max) << l;
    }
  }
}

//===----------------------------------------------------------------------===//
// Votes, matches and warp reductions
//===----------------------------------------------------------------------===//

constexpr const char *kVoteSource = R"cuda(
extern "C" __global__ void votes(const unsigned *pred, unsigned *out) {
  const int t = threadIdx.x, lane = t % 32;
  // The lanes that exist: a full mask names absent lanes of a partial warp,
  // which take no part.
  const unsigned active = __ballot_sync(0xffffffffu, 1);
  const unsigned p = pred[t];
  unsigned *o = out + t * 12;
  // Converged or not, only the caller is sure to be active.
  o[0] = __activemask();
  o[1] = __ballot_sync(active, p);
  o[2] = __any_sync(active, p);
  o[3] = __all_sync(active, p);
  o[4] = __all_sync(active, 1);
  o[5] = __any_sync(active, 0);
  // Only the even lanes take part, and name exactly themselves.
  if (lane % 2 == 0)
    o[6] = __ballot_sync(active & 0x55555555u, p > 3);
  __syncwarp(active);
  o[7] = __match_any_sync(active, p % 4);
  int same = -1;
  o[8] = __match_all_sync(active, p / 8, &same);
  o[9] = same;
  o[10] = __reduce_add_sync(active, p);
  o[11] = __reduce_max_sync(active, p) * 1000 + __reduce_min_sync(active, p);
}
)cuda";

TEST_F(IntrinsicsTest, VotesMatchesAndReductionsOverFullAndPartialWarps) {
  std::mt19937 random(3);
  std::uniform_int_distribution<unsigned> pick(0, 7);
  const int threads = 48; // the second warp has 16 lanes
  std::vector<unsigned> pred(threads);
  for (unsigned &p : pred)
    p = pick(random);
  pred[40] = 0; // some lane of the partial warp votes false
  auto kernel = build("votes", kVoteSource);
  DevicePtr dPred = upload(pred);
  DevicePtr dOut = upload(std::vector<unsigned>(threads * 12, 0xdeadbeef));
  ArgPack args;
  args.push(dPred).push(dOut);
  launch(*kernel, {1}, {threads}, args);
  std::vector<unsigned> out = download<unsigned>(dOut, threads * 12);

  for (int t = 0; t < threads; ++t) {
    const int warp = t / 32 * 32, lane = t % 32;
    const int lanes = std::min(32, threads - warp);
    const unsigned active = lanes == 32 ? kFull : (1u << lanes) - 1;
    unsigned ballot = 0, evenBallot = 0, match = 0, sum = 0, max = 0, min = ~0u;
    bool allSame = true;
    for (int l = 0; l < lanes; ++l) {
      const unsigned p = pred[warp + l];
      ballot |= (p != 0) << l;
      if (l % 2 == 0)
        evenBallot |= (p > 3) << l;
      match |= (p % 4 == pred[t] % 4) << l;
      allSame &= p / 8 == pred[warp] / 8;
      sum += p;
      max = std::max(max, p);
      min = std::min(min, p);
    }
    const unsigned *o = &out[t * 12];
    SCOPED_TRACE("thread " + std::to_string(t));
    EXPECT_EQ(o[0], 1u << lane);
    EXPECT_EQ(o[1], ballot);
    EXPECT_EQ(o[2], ballot != 0);
    EXPECT_EQ(o[3], ballot == active);
    EXPECT_EQ(o[4], 1u);
    EXPECT_EQ(o[5], 0u);
    EXPECT_EQ(o[6], lane % 2 == 0 ? evenBallot : 0xdeadbeef);
    EXPECT_EQ(o[7], match);
    EXPECT_EQ(o[8], allSame ? active : 0u);
    EXPECT_EQ(o[9], allSame ? 1u : 0u);
    EXPECT_EQ(o[10], sum);
    EXPECT_EQ(o[11], max * 1000 + min);
  }
}

//===----------------------------------------------------------------------===//
// mma.sync m16n8k16
//===----------------------------------------------------------------------===//

/// One 16x8x16 problem per warp, fragments loaded exactly as the PTX ISA
/// lays them out. D1 = A B + C; D2 = C + 2 A B accumulated in place (d is c).
/// `swap` exchanges a[1] and a[2], a layout mistake that must show.
constexpr const char *kMmaSource = R"cuda(
#include "rudnn/device.cuh"

extern "C" __global__ void mma_tiles(const float *a, const float *b,
                                     const float *c, float *d1, float *d2,
                                     int bf16, int swap) {
  const int warp = (blockIdx.x * blockDim.x + threadIdx.x) / 32;
  const int lane = threadIdx.x % 32, g = lane / 4, t2 = 2 * (lane % 4);
  const float *A = a + warp * 256, *B = b + warp * 128, *C = c + warp * 128;
  auto pack = [&](float low, float high) {
    return bf16 ? rudnn::arch::pack_bf16x2(low, high)
                : rudnn::arch::pack_f16x2(low, high);
  };
  auto at = [&](int row, int col) { return A[row * 16 + col]; };
  auto bt = [&](int k, int n) { return B[k * 8 + n]; };
  unsigned fa[4] = {pack(at(g, t2), at(g, t2 + 1)),
                    pack(at(g + 8, t2), at(g + 8, t2 + 1)),
                    pack(at(g, t2 + 8), at(g, t2 + 9)),
                    pack(at(g + 8, t2 + 8), at(g + 8, t2 + 9))};
  if (swap) {
    unsigned keep = fa[1];
    fa[1] = fa[2];
    fa[2] = keep;
  }
  unsigned fb[2] = {pack(bt(t2, g), bt(t2 + 1, g)),
                    pack(bt(t2 + 8, g), bt(t2 + 9, g))};
  float fc[4] = {C[g * 8 + t2], C[g * 8 + t2 + 1], C[(g + 8) * 8 + t2],
                 C[(g + 8) * 8 + t2 + 1]};
  float fd[4], acc[4] = {fc[0], fc[1], fc[2], fc[3]};
  if (bf16) {
    rudnn::arch::mma_m16n8k16_bf16(fd, fa, fb, fc);
    rudnn::arch::mma_m16n8k16_bf16(acc, fa, fb, acc);
    rudnn::arch::mma_m16n8k16_bf16(acc, fa, fb, acc);
  } else {
    rudnn::arch::mma_m16n8k16_f16(fd, fa, fb, fc);
    rudnn::arch::mma_m16n8k16_f16(acc, fa, fb, acc);
    rudnn::arch::mma_m16n8k16_f16(acc, fa, fb, acc);
  }
  const int rows[4] = {g, g, g + 8, g + 8}, cols[4] = {t2, t2 + 1, t2, t2 + 1};
  for (int i = 0; i < 4; ++i) {
    d1[warp * 128 + rows[i] * 8 + cols[i]] = fd[i];
    d2[warp * 128 + rows[i] * 8 + cols[i]] = acc[i];
  }
}
)cuda";

class MmaTest : public IntrinsicsTest,
                public ::testing::WithParamInterface<bool> {};

TEST_P(MmaTest, MatchesTripleLoopGemmOnRandomTiles) {
  const bool bf16 = GetParam();
  const int warps = 6; // 3 blocks of 2 warps
  std::mt19937 random(bf16 ? 17 : 19);
  std::vector<float> a = smallExactValues(random, warps * 256);
  std::vector<float> b = smallExactValues(random, warps * 128);
  std::vector<float> c = smallExactValues(random, warps * 128, 64, 0.0625f);
  auto kernel = build("mma_tiles", kMmaSource);
  DevicePtr dA = upload(a), dB = upload(b), dC = upload(c);
  auto run = [&](bool swap) {
    DevicePtr d1 = upload(std::vector<float>(warps * 128, NAN));
    DevicePtr d2 = upload(std::vector<float>(warps * 128, NAN));
    ArgPack args;
    args.push(dA).push(dB).push(dC).push(d1).push(d2).push(int(bf16)).push(
        int(swap));
    launch(*kernel, {3}, {64}, args);
    return std::make_pair(download<float>(d1, warps * 128),
                          download<float>(d2, warps * 128));
  };
  auto [d1, d2] = run(false);
  for (int w = 0; w < warps; ++w) {
    std::vector<float> expected =
        gemm(&a[w * 256], &b[w * 128], &c[w * 128], 16, 8, 16);
    std::vector<float> twice(128);
    for (int i = 0; i < 128; ++i)
      twice[i] = 2 * expected[i] - c[w * 128 + i];
    EXPECT_EQ(
        std::vector<float>(d1.begin() + w * 128, d1.begin() + (w + 1) * 128),
        expected)
        << "warp " << w;
    EXPECT_EQ(
        std::vector<float>(d2.begin() + w * 128, d2.begin() + (w + 1) * 128),
        twice)
        << "warp " << w;
  }
  auto [wrong, unused] = run(true);
  EXPECT_NE(std::vector<float>(wrong.begin(), wrong.begin() + 128),
            gemm(&a[0], &b[0], &c[0], 16, 8, 16))
      << "fragments in the wrong registers gave the right product";
}

INSTANTIATE_TEST_SUITE_P(Types, MmaTest, ::testing::Values(true, false),
                         [](const auto &info) {
                           return info.param ? "bf16" : "f16";
                         });

//===----------------------------------------------------------------------===//
// ldmatrix
//===----------------------------------------------------------------------===//

/// Four 8x8 b16 matrices in shared memory, rows padded to 48 bytes and the
/// matrices in reverse order, so only the row addresses locate them. Lanes
/// beyond the 8 * count that ldmatrix reads pass misaligned addresses.
constexpr const char *kLdmatrixSource = R"cuda(
#include "rudnn/device.cuh"

extern "C" __global__ void ldmatrix_all(const unsigned short *in,
                                        unsigned *out) {
  __shared__ __align__(16) unsigned short tile[4][8][24];
  const int lane = threadIdx.x;
  for (int i = lane; i < 256; i += 32)
    tile[3 - i / 64][i / 8 % 8][i % 8] = in[i];
  __syncwarp();
  const unsigned short *row = &tile[3 - lane / 8][lane % 8][0];
  const char *bad = reinterpret_cast<const char *>(row) + 2;
  unsigned r1[1], r2[2], r4[4];
  unsigned *o = out + lane * 4;
  rudnn::arch::ldmatrix_x1(r1, lane < 8 ? (const void *)row : bad);
  o[0 * 128] = r1[0];
  rudnn::arch::ldmatrix_x2(r2, lane < 16 ? (const void *)row : bad);
  o[1 * 128] = r2[0];
  o[1 * 128 + 1] = r2[1];
  rudnn::arch::ldmatrix_x4(r4, row);
  for (int i = 0; i < 4; ++i)
    o[2 * 128 + i] = r4[i];
  rudnn::arch::ldmatrix_x1_trans(r1, lane < 8 ? (const void *)row : bad);
  o[3 * 128] = r1[0];
  rudnn::arch::ldmatrix_x2_trans(r2, lane < 16 ? (const void *)row : bad);
  o[4 * 128] = r2[0];
  o[4 * 128 + 1] = r2[1];
  rudnn::arch::ldmatrix_x4_trans(r4, row);
  for (int i = 0; i < 4; ++i)
    o[5 * 128 + i] = r4[i];
}
)cuda";

TEST_F(IntrinsicsTest, LdmatrixRegistersFollowThePtxLayout) {
  std::mt19937 random(23);
  std::uniform_int_distribution<unsigned> pick(0, 0xffff);
  std::vector<unsigned short> in(256);
  for (unsigned short &v : in)
    v = static_cast<unsigned short>(pick(random));
  auto kernel = build("ldmatrix_all", kLdmatrixSource);
  DevicePtr dIn = upload(in);
  DevicePtr dOut = upload(std::vector<unsigned>(6 * 128, 0));
  ArgPack args;
  args.push(dIn).push(dOut);
  launch(*kernel, {1}, {32}, args);
  std::vector<unsigned> out = download<unsigned>(dOut, 6 * 128);

  // Matrix m, row r, column c as the kernel stored it.
  auto element = [&](int m, int r, int c) -> unsigned {
    return in[m * 64 + r * 8 + c];
  };
  const int counts[3] = {1, 2, 4};
  for (int variant = 0; variant < 6; ++variant) {
    const bool transposed = variant >= 3;
    const int count = counts[variant % 3];
    for (int lane = 0; lane < 32; ++lane)
      for (int m = 0; m < 4; ++m) {
        // Register m of lane l: row l/4, columns 2(l%4) and 2(l%4)+1 of
        // matrix m, the lower column in the low half; .trans swaps rows and
        // columns.
        const int r = lane / 4, c = 2 * (lane % 4);
        unsigned expected = m >= count ? 0u
                            : transposed
                                ? element(m, c, r) | element(m, c + 1, r) << 16
                                : element(m, r, c) | element(m, r, c + 1) << 16;
        EXPECT_EQ(out[variant * 128 + lane * 4 + m], expected)
            << "x" << count << (transposed ? ".trans" : "") << " lane " << lane
            << " register " << m;
      }
  }
}

// ldmatrix loads the rows as the warp meets: each lane then clearing the
// row it addressed changes nothing any lane loaded, in any order.
TEST_F(IntrinsicsTest, LdmatrixLoadsRowsBeforeAnyLaneChangesThem) {
  auto kernel = build("ldmatrix_then_clear", R"cuda(
#include "rudnn/device.cuh"
extern "C" __global__ void ldmatrix_then_clear(const unsigned short *in,
                                               unsigned *out) {
  __shared__ __align__(16) unsigned short tile[8][8];
  const int lane = threadIdx.x;
  for (int i = lane; i < 64; i += 32)
    tile[i / 8][i % 8] = in[i];
  __syncwarp();
  unsigned short *row = &tile[lane % 8][0];
  unsigned r[1];
  rudnn::arch::ldmatrix_x1(r, row);
  if (lane < 8) // the lane that addressed the row clears it
    for (int c = 0; c < 8; ++c)
      row[c] = 0;
  out[lane] = r[0];
}
)cuda");
  std::vector<unsigned short> in(64);
  std::iota(in.begin(), in.end(), 1);
  DevicePtr dIn = upload(in);
  DevicePtr dOut = upload(std::vector<unsigned>(32, 0));
  ArgPack args;
  args.push(dIn).push(dOut);
  launch(*kernel, {1}, {32}, args);
  std::vector<unsigned> out = download<unsigned>(dOut, 32);
  for (int lane = 0; lane < 32; ++lane) {
    const int r = lane / 4, c = 2 * (lane % 4);
    EXPECT_EQ(out[lane], in[r * 8 + c] | unsigned(in[r * 8 + c + 1]) << 16)
        << "lane " << lane;
  }
}

/// The way a GEMM kernel uses them: A (16x16 row-major) through
/// ldmatrix.x4, B through ldmatrix.x2.trans when stored k-major and through
/// ldmatrix.x2 when stored n-major, then mma.
constexpr const char *kLdmatrixMmaSource = R"cuda(
#include "rudnn/device.cuh"

extern "C" __global__ void ldmatrix_mma(const float *a, const float *b,
                                        float *d) {
  __shared__ __align__(16) __nv_bfloat16 sa[16][24], sb[16][8], sbt[8][24];
  const int lane = threadIdx.x, g = lane / 4, t2 = 2 * (lane % 4);
  for (int i = lane; i < 256; i += 32)
    sa[i / 16][i % 16] = __float2bfloat16(a[i]);
  for (int i = lane; i < 128; i += 32) {
    sb[i / 8][i % 8] = __float2bfloat16(b[i]);
    sbt[i % 8][i / 8] = __float2bfloat16(b[i]);
  }
  __syncwarp();
  unsigned fa[4], fb[2], fbt[2];
  rudnn::arch::ldmatrix_x4(fa, &sa[lane % 16][lane / 16 * 8]);
  rudnn::arch::ldmatrix_x2_trans(fb, &sb[lane % 16][0]);
  rudnn::arch::ldmatrix_x2(fbt, &sbt[lane % 8][lane / 8 % 2 * 8]);
  float zero[4] = {0, 0, 0, 0}, d0[4], d1[4];
  rudnn::arch::mma_m16n8k16_bf16(d0, fa, fb, zero);
  rudnn::arch::mma_m16n8k16_bf16(d1, fa, fbt, zero);
  const int rows[4] = {g, g, g + 8, g + 8}, cols[4] = {t2, t2 + 1, t2, t2 + 1};
  for (int i = 0; i < 4; ++i) {
    d[rows[i] * 8 + cols[i]] = d0[i];
    d[128 + rows[i] * 8 + cols[i]] = d1[i];
  }
}
)cuda";

TEST_F(IntrinsicsTest, LdmatrixFeedsMmaAsInAGemmKernel) {
  std::mt19937 random(29);
  std::vector<float> a = smallExactValues(random, 256);
  std::vector<float> b = smallExactValues(random, 128);
  auto kernel = build("ldmatrix_mma", kLdmatrixMmaSource);
  DevicePtr dA = upload(a), dB = upload(b);
  DevicePtr dD = upload(std::vector<float>(256, NAN));
  ArgPack args;
  args.push(dA).push(dB).push(dD);
  launch(*kernel, {1}, {32}, args);
  std::vector<float> d = download<float>(dD, 256);
  std::vector<float> expected = gemm(a.data(), b.data(), nullptr, 16, 8, 16);
  EXPECT_EQ(std::vector<float>(d.begin(), d.begin() + 128), expected)
      << "B k-major through ldmatrix.x2.trans";
  EXPECT_EQ(std::vector<float>(d.begin() + 128, d.end()), expected)
      << "B n-major through ldmatrix.x2";
}

//===----------------------------------------------------------------------===//
// cp.async
//===----------------------------------------------------------------------===//

/// A two-stage pipeline: tile k+1 is in flight while tile k is read, and
/// every thread reads a 16-byte chunk another thread copied.
constexpr const char *kPipelineSource = R"cuda(
#include "rudnn/device.cuh"

extern "C" __global__ void pipeline(const int4 *in, int4 *out, int tiles) {
  RUDNN_DYNAMIC_SHARED(int4, stage);
  const int t = threadIdx.x, n = blockDim.x;
  const int4 *src = in + blockIdx.x * tiles * n;
  rudnn::arch::cp_async_16(&stage[t], &src[t]);
  rudnn::arch::cp_async_commit();
  for (int k = 0; k < tiles; ++k) {
    if (k + 1 < tiles)
      rudnn::arch::cp_async_16(&stage[(k + 1) % 2 * n + t],
                               &src[(k + 1) * n + t]);
    rudnn::arch::cp_async_commit();
    rudnn::arch::cp_async_wait<1>();
    __syncthreads();
    const int4 v = stage[k % 2 * n + (n - 1 - t)];
    out[(blockIdx.x * tiles + k) * n + t] =
        make_int4(v.x + 1, v.y * 2, v.z - 3, v.w ^ k);
    __syncthreads();
  }
  rudnn::arch::cp_async_wait<0>();
}
)cuda";

struct Int4 {
  alignas(16) int x;
  int y, z, w;
};

class CpAsyncTest : public IntrinsicsTest {
protected:
  /// Runs the pipeline kernel built from `source` and counts the 16-byte
  /// chunks of its output that are wrong.
  int pipelineErrors(const std::string &source);
};

int CpAsyncTest::pipelineErrors(const std::string &source) {
  const int blocks = 5, threads = 64, tiles = 7;
  std::mt19937 random(31);
  std::uniform_int_distribution<int> pick(-(1 << 20), 1 << 20);
  std::vector<Int4> in(blocks * tiles * threads);
  for (Int4 &v : in)
    v = {pick(random), pick(random), pick(random), pick(random)};
  auto kernel = build("pipeline", source);
  DevicePtr dIn = upload(in);
  DevicePtr dOut = upload(std::vector<Int4>(in.size(), Int4{0, 0, 0, 0}));
  ArgPack args;
  args.push(dIn).push(dOut).push(tiles);
  launch(*kernel, {blocks}, {threads}, args, 2 * threads * 16);
  std::vector<Int4> out = download<Int4>(dOut, in.size());
  int errors = 0;
  for (int b = 0; b < blocks; ++b)
    for (int k = 0; k < tiles; ++k)
      for (int t = 0; t < threads; ++t) {
        const Int4 &v = in[(b * tiles + k) * threads + (threads - 1 - t)];
        const Int4 &got = out[(b * tiles + k) * threads + t];
        errors += got.x != v.x + 1 || got.y != v.y * 2 || got.z != v.z - 3 ||
                  got.w != (v.w ^ k);
      }
  return errors;
}

TEST_F(CpAsyncTest, TwoStagePipelineDeliversEveryTile) {
  EXPECT_EQ(pipelineErrors(kPipelineSource), 0);
}

// Copies are in flight until a wait retires their group, as the PTX ISA
// says: without the wait (a barrier alone), or waiting for too few groups,
// a stage is read before its data arrives.
TEST_F(CpAsyncTest, DataArrivesOnlyThroughAWait) {
  const std::string source = kPipelineSource;
  const std::string wait = "rudnn::arch::cp_async_wait<1>();";
  ASSERT_NE(source.find(wait), std::string::npos);
  std::string barrierOnly = source, tooFewRetired = source;
  barrierOnly.replace(barrierOnly.find(wait), wait.size(), "");
  tooFewRetired.replace(tooFewRetired.find(wait), wait.size(),
                        "rudnn::arch::cp_async_wait<2>();");
  // Every tile but the last is read in flight; a barrier completes nothing.
  EXPECT_GT(pipelineErrors(barrierOnly), 5 * 6 * 64 - 1);
  EXPECT_GT(pipelineErrors(tooFewRetired), 5 * 6 * 64 - 1);
}

TEST_F(IntrinsicsTest, MisalignedCpAsyncFaultsLikeTheGpu) {
  auto kernel = build("misaligned_copy", R"cuda(
#include "rudnn/device.cuh"
extern "C" __global__ void misaligned_copy(const int4 *in) {
  __shared__ __align__(16) int stage[8];
  rudnn::arch::cp_async_16(&stage[1], in);
  rudnn::arch::cp_async_wait<0>();
}
)cuda");
  DevicePtr dIn = upload(std::vector<int>(4, 0));
  ArgPack args;
  args.push(dIn);
  EXPECT_THAT([&] { launch(*kernel, {1}, {1}, args); },
              ::testing::ThrowsMessage<DeviceError>(HasSubstr("misaligned")));
}

//===----------------------------------------------------------------------===//
// Atomics under contention
//===----------------------------------------------------------------------===//

constexpr const char *kAtomicsSource = R"cuda(
extern "C" __global__ void atomics(const int *values, int *ints,
                                   unsigned long long *wide, float *floats,
                                   double *doubles, unsigned *bits, int *lock,
                                   volatile int *guarded) {
  const int gid = blockIdx.x * blockDim.x + threadIdx.x;
  const int v = values[gid];
  // Repeated, so that blocks on different OS threads really collide.
  for (int round = 0; round < 16; ++round) {
    atomicAdd(&ints[0], v);
    atomicSub(&ints[1], v);
    atomicAdd(&wide[0], (unsigned long long)v * 1000003ull + (1ull << 40));
    atomicAdd(&floats[0], 0.5f);
    atomicAdd(&floats[1], (float)(v % 64));
    atomicAdd(&doubles[0], 0.25);
  }
  atomicMax(&ints[2], v);
  atomicMin(&ints[3], v);
  atomicMax(&wide[1], (unsigned long long)(v + 1000) * (v + 1000));
  atomicOr(&bits[0], 1u << (gid % 32));
  atomicXor(&bits[1], (unsigned)v);
  atomicAnd(&bits[2], ~(1u << (gid % 29)));
  atomicInc(&bits[3], 99u);
  atomicAdd(&bits[4], 3u);

  // Shared-memory atomics, then one global add per block.
  __shared__ int count;
  if (threadIdx.x == 0)
    count = 0;
  __syncthreads();
  atomicAdd(&count, 1);
  __syncthreads();
  if (threadIdx.x == 0) {
    atomicAdd(&ints[4], count);
    // A spin lock taken by one thread per block: blocks race on OS threads.
    while (atomicCAS(lock, 0, 1) != 0) {
    }
    __threadfence();
    *guarded = *guarded + 1;
    __threadfence();
    atomicExch(lock, 0);
  }
}
)cuda";

TEST_F(IntrinsicsTest, AtomicsUnderContentionGiveExactTotals) {
  const int blocks = 64, threads = 128, n = blocks * threads;
  std::mt19937 random(37);
  std::uniform_int_distribution<int> pick(-1000, 1000);
  std::vector<int> values(n);
  for (int &v : values)
    v = pick(random);
  auto kernel = build("atomics", kAtomicsSource);
  DevicePtr dValues = upload(values);
  DevicePtr ints =
      upload(std::vector<int>{0, 0, std::numeric_limits<int>::min(),
                              std::numeric_limits<int>::max(), 0});
  DevicePtr wide = upload(std::vector<unsigned long long>{0, 0});
  DevicePtr floats = upload(std::vector<float>{0, 0});
  DevicePtr doubles = upload(std::vector<double>{0});
  DevicePtr bits = upload(std::vector<unsigned>{0, 0, ~0u, 0, 0});
  DevicePtr lock = upload(std::vector<int>{0});
  DevicePtr guarded = upload(std::vector<int>{0});
  ArgPack args;
  args.push(dValues)
      .push(ints)
      .push(wide)
      .push(floats)
      .push(doubles)
      .push(bits)
      .push(lock)
      .push(guarded);
  launch(*kernel, {blocks}, {threads}, args);

  const int rounds = 16;
  long long sum = 0;
  unsigned long long wideSum = 0, wideMax = 0;
  float smallSum = 0;
  unsigned xorAll = 0;
  for (int v : values) {
    sum += rounds * v;
    wideSum += rounds *
               (static_cast<unsigned long long>(v) * 1000003ull + (1ull << 40));
    wideMax = std::max(wideMax,
                       static_cast<unsigned long long>(v + 1000) * (v + 1000));
    // Integers below 2^24: exact in any order.
    smallSum += static_cast<float>(rounds * (v % 64));
    xorAll ^= static_cast<unsigned>(v);
  }
  EXPECT_EQ(
      download<int>(ints, 5),
      (std::vector<int>{static_cast<int>(sum), static_cast<int>(-sum),
                        *std::max_element(values.begin(), values.end()),
                        *std::min_element(values.begin(), values.end()), n}));
  EXPECT_EQ(download<unsigned long long>(wide, 2),
            (std::vector<unsigned long long>{wideSum, wideMax}));
  EXPECT_EQ(download<float>(floats, 2),
            (std::vector<float>{rounds * n * 0.5f, smallSum}));
  EXPECT_EQ(download<double>(doubles, 1),
            std::vector<double>{rounds * n * 0.25});
  EXPECT_EQ(download<unsigned>(bits, 5),
            (std::vector<unsigned>{~0u, xorAll, ~((1u << 29) - 1),
                                   static_cast<unsigned>(n % 100), 3u * n}));
  EXPECT_EQ(download<int>(guarded, 1), std::vector<int>{blocks});
  EXPECT_EQ(download<int>(lock, 1), std::vector<int>{0});
}

//===----------------------------------------------------------------------===//
// __half and __nv_bfloat16
//===----------------------------------------------------------------------===//

constexpr const char *kConvertSource = R"cuda(
#include <cuda_bf16.h>
#include <cuda_fp16.h>

extern "C" __global__ void convert(const float *x, const double *xd,
                                   unsigned short *out, unsigned short *outd,
                                   int n, int nd) {
  const int stride = gridDim.x * blockDim.x;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
    const float v = x[i];
    unsigned short *o = out + i * 12;
    o[0] = __half_as_ushort(__float2half_rn(v));
    o[1] = __half_as_ushort(__float2half(v));
    o[2] = __half_as_ushort(__float2half_rz(v));
    o[3] = __half_as_ushort(__float2half_rd(v));
    o[4] = __half_as_ushort(__float2half_ru(v));
    const __half implicit = v;
    o[5] = __half_as_ushort(implicit);
    o[6] = __bfloat16_as_ushort(__float2bfloat16_rn(v));
    o[7] = __bfloat16_as_ushort(__float2bfloat16(v));
    o[8] = __bfloat16_as_ushort(__float2bfloat16_rz(v));
    o[9] = __bfloat16_as_ushort(__float2bfloat16_rd(v));
    o[10] = __bfloat16_as_ushort(__float2bfloat16_ru(v));
    const __nv_bfloat16 constructed(v);
    o[11] = __bfloat16_as_ushort(constructed);
  }
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < nd; i += stride) {
    outd[2 * i] = __half_as_ushort(__double2half(xd[i]));
    outd[2 * i + 1] = __bfloat16_as_ushort(__double2bfloat16(xd[i]));
  }
}
)cuda";

TEST_F(IntrinsicsTest, FloatAndDoubleTo16BitRoundExactlyAsTheGpu) {
  const Format16 &half = halfFormat(), &bf16 = bfloat16Format();
  // Every value, midpoint and neighbour of a midpoint of both formats
  // (subnormals, ties, the overflow threshold), specials and random floats.
  std::vector<float> x = half.interestingFloats();
  std::vector<float> more = bf16.interestingFloats();
  x.insert(x.end(), more.begin(), more.end());
  const float specials[] = {0.0f,
                            -0.0f,
                            INFINITY,
                            -INFINITY,
                            NAN,
                            -NAN,
                            std::numeric_limits<float>::signaling_NaN(),
                            std::numeric_limits<float>::denorm_min(),
                            -std::numeric_limits<float>::denorm_min(),
                            std::numeric_limits<float>::min(),
                            std::numeric_limits<float>::max(),
                            -std::numeric_limits<float>::max(),
                            65504.0f,
                            65519.996f,
                            65520.0f,
                            1e-8f,
                            0x1p-24f,
                            0x1p-25f,
                            0x1.000002p-25f,
                            0x1.8p-25f};
  x.insert(x.end(), std::begin(specials), std::end(specials));
  std::mt19937 random(41);
  std::uniform_int_distribution<uint32_t> anyBits;
  for (int i = 0; i < 50000; ++i) {
    uint32_t bits = anyBits(random);
    float value;
    std::memcpy(&value, &bits, 4);
    x.push_back(value);
  }
  // Doubles a float would round onto a midpoint: rounding through float
  // would then break the tie the wrong way.
  std::vector<double> xd;
  for (const Format16 *format : {&half, &bf16})
    for (size_t i = 0; i + 1 < format->values.size(); i += 7) {
      const double middle = (format->values[i] + format->values[i + 1]) / 2;
      for (double scale : {1 + 0x1p-40, 1 - 0x1p-40}) {
        xd.push_back(middle * scale);
        xd.push_back(-middle * scale);
      }
    }
  std::uniform_real_distribution<double> exponent(-140, 140);
  for (int i = 0; i < 20000; ++i)
    xd.push_back(std::exp2(exponent(random)) * (i % 2 ? -1 : 1));
  xd.push_back(NAN);
  xd.push_back(-INFINITY);
  xd.push_back(1e300);

  auto kernel = build("convert", kConvertSource);
  DevicePtr dX = upload(x), dXd = upload(xd);
  DevicePtr dOut = upload(std::vector<uint16_t>(x.size() * 12, 0));
  DevicePtr dOutd = upload(std::vector<uint16_t>(xd.size() * 2, 0));
  ArgPack args;
  args.push(dX)
      .push(dXd)
      .push(dOut)
      .push(dOutd)
      .push(int(x.size()))
      .push(int(xd.size()));
  launch(*kernel, {64}, {128}, args);
  std::vector<uint16_t> out = download<uint16_t>(dOut, x.size() * 12);
  std::vector<uint16_t> outd = download<uint16_t>(dOutd, xd.size() * 2);

  auto same = [](const Format16 &format, uint16_t got, uint16_t expected) {
    return format.isNan(expected) ? format.isNan(got) : got == expected;
  };
  const Mode modes[] = {Mode::Nearest, Mode::Nearest, Mode::Zero,
                        Mode::Down,    Mode::Up,      Mode::Nearest};
  int failures = 0;
  for (size_t i = 0; i < x.size() && failures < 20; ++i)
    for (int k = 0; k < 12; ++k) {
      const Format16 &format = k < 6 ? half : bf16;
      const uint16_t expected = format.round(x[i], modes[k % 6]);
      const uint16_t got = out[i * 12 + k];
      if (!same(format, got, expected)) {
        ADD_FAILURE() << std::hexfloat << x[i] << " (0x" << std::hex
                      << floatBits(x[i]) << ") conversion " << std::dec << k
                      << ": got 0x" << std::hex << got << ", expected 0x"
                      << expected;
        ++failures;
      }
    }
  for (size_t i = 0; i < xd.size() && failures < 40; ++i)
    for (int k = 0; k < 2; ++k) {
      const Format16 &format = k == 0 ? half : bf16;
      const uint16_t expected = format.round(xd[i], Mode::Nearest);
      const uint16_t got = outd[2 * i + k];
      if (!same(format, got, expected)) {
        ADD_FAILURE() << std::hexfloat << xd[i] << " to "
                      << (k ? "bf16" : "half") << ": got 0x" << std::hex << got
                      << ", expected 0x" << expected;
        ++failures;
      }
    }
}

TEST_F(IntrinsicsTest, Every16BitPatternConvertsToFloatExactly) {
  auto kernel = build("widen", R"cuda(
#include <cuda_bf16.h>
#include <cuda_fp16.h>
extern "C" __global__ void widen(float *half, float *bf16) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  half[i] = __half2float(__ushort_as_half((unsigned short)i));
  const __nv_bfloat16 b = __ushort_as_bfloat16((unsigned short)i);
  bf16[i] = b; // the implicit conversion
}
)cuda");
  DevicePtr half = upload(std::vector<float>(65536, 0));
  DevicePtr bf16 = upload(std::vector<float>(65536, 0));
  ArgPack args;
  args.push(half).push(bf16);
  launch(*kernel, {256}, {256}, args);
  std::vector<float> gotHalf = download<float>(half, 65536);
  std::vector<float> gotBf16 = download<float>(bf16, 65536);
  for (unsigned bits = 0; bits < 65536; ++bits) {
    for (auto [format, got] :
         {std::make_pair(&halfFormat(), gotHalf[bits]),
          std::make_pair(&bfloat16Format(), gotBf16[bits])}) {
      const double expected = format->decode(static_cast<uint16_t>(bits));
      if (std::isnan(expected))
        EXPECT_TRUE(std::isnan(got)) << std::hex << bits;
      else
        EXPECT_EQ(floatBits(got), floatBits(static_cast<float>(expected)))
            << std::hex << bits;
    }
  }
}

constexpr const char *kArithmeticSource = R"cuda(
#include <cuda_bf16.h>
#include <cuda_fp16.h>

extern "C" __global__ void arithmetic(const unsigned short *in,
                                      unsigned short *out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  const unsigned short *p = in + 3 * i;
  unsigned short *o = out + 10 * i;
  const __half a = __ushort_as_half(p[0]), b = __ushort_as_half(p[1]),
               c = __ushort_as_half(p[2]);
  o[0] = __half_as_ushort(a + b);
  o[1] = __half_as_ushort(a * b);
  o[2] = __half_as_ushort(__hdiv(a, b));
  o[3] = __half_as_ushort(__hfma(a, b, c));
  o[4] = (a < b) | (a == b) << 1 | (a != b) << 2 | __hgtu(a, b) << 3;
  const __nv_bfloat16 x = __ushort_as_bfloat16(p[0]),
                      y = __ushort_as_bfloat16(p[1]),
                      z = __ushort_as_bfloat16(p[2]);
  o[5] = __bfloat16_as_ushort(x - y);
  o[6] = __bfloat16_as_ushort(__hmul(x, y));
  o[7] = __bfloat16_as_ushort(x / y);
  o[8] = __bfloat16_as_ushort(__hfma(x, y, z));
  o[9] = (x < y) | (x == y) << 1 | (x != y) << 2 | __hgtu(x, y) << 3;
}
)cuda";

TEST_F(IntrinsicsTest, ArithmeticIsCorrectlyRounded) {
  const Format16 &half = halfFormat(), &bf16 = bfloat16Format();
  std::mt19937 random(43);
  // Magnitudes 2^-5 .. 2^6 keep a*b+c exact in double for the reference.
  std::uniform_int_distribution<int> exponent(-5, 5), mantissa(0, 1023),
      sign(0, 1), special(0, 40);
  auto randomBits = [&](const Format16 &format) -> uint16_t {
    switch (special(random)) {
    case 0:
      return 0x7fff; // NaN
    case 1:
      return format.infinity;
    case 2:
      return 0x8000; // -0
    default:
      break;
    }
    const double value =
        std::ldexp(1 + mantissa(random) / 1024.0, exponent(random)) *
        (sign(random) ? -1 : 1);
    return format.round(value, Mode::Nearest);
  };
  const int n = 20000;
  std::vector<uint16_t> in(3 * n);
  for (int i = 0; i < n; ++i)
    for (int k = 0; k < 3; ++k)
      in[3 * i + k] = randomBits(i % 2 ? half : bf16);
  auto kernel = build("arithmetic", kArithmeticSource);
  DevicePtr dIn = upload(in);
  DevicePtr dOut = upload(std::vector<uint16_t>(10 * n, 0));
  ArgPack args;
  args.push(dIn).push(dOut).push(n);
  launch(*kernel, {(n + 127) / 128}, {128}, args);
  std::vector<uint16_t> out = download<uint16_t>(dOut, 10 * n);

  int failures = 0;
  for (int i = 0; i < n && failures < 20; ++i) {
    for (int k = 0; k < 10; ++k) {
      const Format16 &format = k < 5 ? half : bf16;
      const double a = format.decode(in[3 * i]),
                   b = format.decode(in[3 * i + 1]),
                   c = format.decode(in[3 * i + 2]);
      uint16_t expected;
      switch (k % 5) {
      case 0:
        expected = format.round(k < 5 ? a + b : a - b, Mode::Nearest);
        break;
      case 1:
        expected = format.round(a * b, Mode::Nearest);
        break;
      case 2:
        expected = format.round(a / b, Mode::Nearest);
        break;
      case 3:
        expected = format.round(a * b + c, Mode::Nearest);
        break;
      default:
        expected = (a < b) | (a == b) << 1 | (a != b) << 2 | !(a <= b) << 3;
      }
      const uint16_t got = out[10 * i + k];
      const bool ok = k % 5 != 4 && format.isNan(expected) ? format.isNan(got)
                                                           : got == expected;
      if (!ok) {
        ADD_FAILURE() << "operation " << k << " on " << a << ", " << b << ", "
                      << c << ": got 0x" << std::hex << got << ", expected 0x"
                      << expected;
        ++failures;
      }
    }
  }
}

//===----------------------------------------------------------------------===//
// Math and bit intrinsics
//===----------------------------------------------------------------------===//

constexpr const char *kMathSource = R"cuda(
#include "rudnn/device.cuh"

extern "C" __global__ void math(const float *x, float *f, int *i,
                                unsigned *u) {
  const float tiny = x[0], huge = x[1], nan = x[2], big = x[3];
  f[0] = rudnn::arch::rcp_approx(tiny);    // ftz: 1/+0
  f[1] = rudnn::arch::rcp_approx(huge);    // ftz: a subnormal result
  f[2] = rudnn::arch::ex2_approx(-130.0f); // ftz: a subnormal result
  f[3] = rudnn::arch::ex2_approx(tiny);    // 2^0
  f[4] = rudnn::fast_reciprocal(3.0f);
  f[5] = rudnn::fast_exp(1.0f);
  f[6] = __fdividef(1.0f, huge);           // documented: 0
  f[7] = __saturatef(nan);
  f[8] = __saturatef(1.5f) + __saturatef(-2.0f) * 10 + __saturatef(0.25f) * 100;
  f[9] = rsqrtf(16.0f);
  f[10] = __int_as_float(__float_as_int(2.5f)) + __uint_as_float(0x3f800000u);
  f[11] = min(2.0f, -3.0f) + max(1.0f, nan);
  i[0] = __float2int_rn(2.5f);
  i[1] = __float2int_rn(3.5f);
  i[2] = __float2int_rn(-2.5f);
  i[3] = __float2int_rz(-2.7f);
  i[4] = __float2int_rd(-2.2f);
  i[5] = __float2int_ru(2.2f);
  i[6] = __float2int_rn(big);
  i[7] = __float2int_rn(-big);
  i[8] = __float2int_rn(nan);
  i[9] = __clz(0) * 100 + __clz(1);
  i[10] = __ffs(0) * 100 + __ffs(0x50);
  i[11] = __popc(0xf0f0f0f1u) * 100 + __popcll(~0ull);
  i[12] = __mulhi(-(1 << 30), 12);
  i[13] = __mul24(0x00ffffff, 2);         // signed 24-bit operands: -1 * 2
  i[14] = min(-5, 3) * 10 + max(-5, 3);
  u[0] = __brev(0x1u);
  u[1] = __byte_perm(0x33221100u, 0x77665544u, 0x5140u);
  u[2] = __funnelshift_l(0x89abcdefu, 0x01234567u, 8);
  u[3] = __funnelshift_r(0x89abcdefu, 0x01234567u, 8);
  u[4] = __funnelshift_lc(0x89abcdefu, 0x01234567u, 40);
  u[5] = __umulhi(0xffffffffu, 0xffffffffu);
  u[6] = __float2uint_rz(-1.0f);
  u[7] = __float2uint_rn(1e20f);
}
)cuda";

TEST_F(IntrinsicsTest, MathAndBitIntrinsicsFollowCudaDefinitions) {
  auto kernel = build("math", kMathSource);
  const float huge = 0x1.8p127f;
  DevicePtr x = upload(std::vector<float>{
      std::numeric_limits<float>::denorm_min(), huge, NAN, 3e9f});
  DevicePtr f = upload(std::vector<float>(12, -1));
  DevicePtr i = upload(std::vector<int>(15, -1));
  DevicePtr u = upload(std::vector<unsigned>(8, 1));
  ArgPack args;
  args.push(x).push(f).push(i).push(u);
  launch(*kernel, {1}, {1}, args);
  std::vector<float> gotF = download<float>(f, 12);
  EXPECT_EQ(gotF[0], INFINITY);
  EXPECT_EQ(floatBits(gotF[1]), 0u);
  EXPECT_EQ(floatBits(gotF[2]), 0u);
  EXPECT_EQ(gotF[3], 1.0f);
  EXPECT_NEAR(gotF[4], 1.0f / 3.0f, 2e-7f);
  EXPECT_NEAR(gotF[5], std::exp(1.0f), 2e-6f);
  EXPECT_EQ(gotF[6], 0.0f);
  EXPECT_EQ(gotF[7], 0.0f);
  EXPECT_EQ(gotF[8], 1.0f + 0.0f + 25.0f);
  EXPECT_NEAR(gotF[9], 0.25f, 2 * 0x1p-25f); // rsqrtf: within 2 ulps
  EXPECT_EQ(gotF[10], 3.5f);
  EXPECT_EQ(gotF[11], -2.0f);
  EXPECT_EQ(
      download<int>(i, 15),
      (std::vector<int>{2, 4, -2, -2, -3, 3, std::numeric_limits<int>::max(),
                        std::numeric_limits<int>::min(), 0, 3231, 5, 1764, -3,
                        -2, -47}));
  EXPECT_EQ(
      download<unsigned>(u, 8),
      (std::vector<unsigned>{0x80000000u, 0x55114400u, 0x23456789u, 0x6789abcdu,
                             0x89abcdefu, 0xfffffffeu, 0u, 0xffffffffu}));
}

constexpr const char *kPolynomialExpSource = R"cuda(
#include "rudnn/device.cuh"

extern "C" __global__ void polynomial(const float *x, float *y, int n) {
  for (int i = threadIdx.x; i < n; i += blockDim.x)
    y[i] = rudnn::polynomial_exp2(x[i]);
}
)cuda";

TEST_F(IntrinsicsTest, PolynomialExp2IsAsAccurateAsEx2Approx) {
  auto kernel = build("polynomial", kPolynomialExpSource);
  // Every argument a kernel gives it lies in [−∞, 0]: a dense sweep, the
  // half-integers where the rounding to j ties, and the flushed range.
  std::vector<float> x;
  for (int i = 0; i <= 200000; ++i)
    x.push_back(-127.0f * float(i) / 200000);
  for (int j = 0; j <= 254; ++j)
    x.push_back(-0.5f * float(j));
  std::mt19937 random(2026);
  std::uniform_real_distribution<float> unit(-1.0f, 0.0f);
  for (int i = 0; i < 20000; ++i)
    x.push_back(unit(random) * (i % 2 ? 1.0f : 130.0f));
  const std::vector<float> special = {-0.0f,   -126.0f,   -126.4f,
                                      -126.6f, -127.0f,   -130.0f,
                                      -1e30f,  -INFINITY, std::nanf("")};
  x.insert(x.end(), special.begin(), special.end());
  const int n = static_cast<int>(x.size());
  DevicePtr dx = upload(x), dy = upload(std::vector<float>(n, -1.0f));
  ArgPack args;
  args.push(dx).push(dy).push(n);
  launch(*kernel, {1}, {256}, args);
  const std::vector<float> y = download<float>(dy, n);
  double worst = 0;
  for (int i = 0; i < n; ++i) {
    if (std::isnan(x[i])) {
      EXPECT_TRUE(std::isnan(y[i]));
      continue;
    }
    const double exact = std::exp2(double(x[i]));
    if (x[i] < -126.5f) { // 2^-126.5 and below: flushed
      EXPECT_EQ(y[i], 0.0f) << "2^" << x[i];
      continue;
    }
    if (exact < 0x1p-126) { // subnormal or flushed, as ex2.approx.ftz
      EXPECT_LE(y[i], 0x1p-126f) << "2^" << x[i];
      continue;
    }
    const double error = std::abs(y[i] / exact - 1);
    worst = std::max(worst, error);
    EXPECT_LE(error, 0x1p-22)
        << "2^" << x[i] << " = " << exact << ", got " << y[i];
  }
  EXPECT_GT(worst, 0.0);          // the polynomial is not exact
  EXPECT_EQ(y[n - 9], 1.0f);      // 2^-0
  EXPECT_EQ(y[n - 8], 0x1p-126f); // 2^-126, the smallest normal
}

//===----------------------------------------------------------------------===//
// Kernel parameters, vector types, traps
//===----------------------------------------------------------------------===//

constexpr const char *kParametersSource = R"cuda(
#include <cuda_bf16.h>
#include <cuda_fp16.h>

static_assert(sizeof(float4) == 16 && alignof(float4) == 16, "float4");
static_assert(sizeof(int2) == 8 && alignof(int2) == 8, "int2");
static_assert(alignof(uint4) == 16 && alignof(double2) == 16, "16-byte");
static_assert(sizeof(float3) == 12 && alignof(float3) == 4, "float3");
static_assert(sizeof(char4) == 4 && alignof(char4) == 4, "char4");
static_assert(sizeof(dim3) == 12, "dim3");
static_assert(sizeof(__half) == 2 && sizeof(__nv_bfloat16) == 2, "16-bit");
static_assert(alignof(__half2) == 4 && alignof(__nv_bfloat162) == 4, "pairs");

struct Pair {
  int a;
  double b;
};

extern "C" __global__ void parameters(char c, short s, int i, long long ll,
                                      float f, double d, float4 v, Pair p,
                                      __half h, const int *pointer,
                                      double *out) {
  out[0] = c;
  out[1] = s;
  out[2] = i;
  out[3] = (double)ll;
  out[4] = f;
  out[5] = d;
  out[6] = v.x + 10 * v.y + 100 * v.z + 1000 * v.w;
  out[7] = p.a + p.b;
  out[8] = __half2float(h);
  out[9] = *pointer;
  const int3 packed = make_int3(1, 2, 3);
  const dim3 grid(4);
  out[10] = packed.x + packed.y * 10 + packed.z * 100 + grid.x * 1000 +
            grid.y * 10000 + grid.z * 100000;
}
)cuda";

TEST_F(IntrinsicsTest, KernelParametersArriveByValue) {
  struct alignas(16) Float4 {
    float x, y, z, w;
  };
  struct Pair {
    int a;
    double b;
  };
  auto kernel = build("parameters", kParametersSource);
  DevicePtr pointer = upload(std::vector<int>{-77});
  DevicePtr out = upload(std::vector<double>(11, 0));
  ArgPack args;
  args.push(char(-5))
      .push(short(-30000))
      .push(2000000000)
      .push(-(1ll << 50))
      .push(1.5f)
      .push(-0.125)
      .push(Float4{1, 2, 3, 4})
      .push(Pair{7, 0.5})
      .push(uint16_t(0x3c00)) // __half 1.0
      .push(pointer)
      .push(out);
  launch(*kernel, {1}, {1}, args);
  EXPECT_EQ(download<double>(out, 11),
            (std::vector<double>{-5, -30000, 2000000000, -std::ldexp(1.0, 50),
                                 1.5, -0.125, 4321, 7.5, 1.0, -77, 114321}));
}

// NVRTC declares assert without any include.
constexpr const char *kAssertSource = R"cuda(
extern "C" __global__ void asserting(const int *values) {
  const int value = values[threadIdx.x];
  assert(value != 7);
}
)cuda";

TEST_F(IntrinsicsTest, FailedDeviceAssertEndsTheLaunchWithItsMessage) {
  auto kernel = build("asserting", kAssertSource);
  DevicePtr ok = upload(std::vector<int>(32, 1));
  ArgPack fine;
  fine.push(ok);
  EXPECT_NO_THROW(launch(*kernel, {1}, {32}, fine));
  std::vector<int> values(32, 1);
  values[12] = 7;
  DevicePtr bad = upload(values);
  ArgPack failing;
  failing.push(bad);
  EXPECT_THAT([&] { launch(*kernel, {1}, {32}, failing); },
              ::testing::ThrowsMessage<DeviceError>(::testing::AllOf(
                  HasSubstr("thread (12,0,0)"), HasSubstr("value != 7"))));
}

//===----------------------------------------------------------------------===//
// The same text on NVRTC
//===----------------------------------------------------------------------===//

TEST_F(IntrinsicsTest, MmaTileSampleCompilesForSm90AndRunsInEmulation) {
  NvrtcCompiler nvrtc(samples::deviceHeaders());
  CudaBinary binary =
      nvrtc.compile({samples::kMmaTileEntry, samples::kMmaTileSource}, "sm_90");
  EXPECT_FALSE(binary.cubin.empty());
  EXPECT_THAT(binary.ptx,
              HasSubstr("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"));

  std::mt19937 random(47);
  std::vector<float> a = smallExactValues(random, 256);
  std::vector<float> b = smallExactValues(random, 128); // k-major
  // bf16 bits of exactly representable values: the float's upper half.
  auto toBf16 = [](const std::vector<float> &values) {
    std::vector<uint16_t> bits;
    for (float v : values)
      bits.push_back(static_cast<uint16_t>(floatBits(v) >> 16));
    return bits;
  };
  std::vector<float> bColumnMajor(128);
  for (int k = 0; k < 16; ++k)
    for (int n = 0; n < 8; ++n)
      bColumnMajor[n * 16 + k] = b[k * 8 + n];
  auto kernel = build(samples::kMmaTileEntry, samples::kMmaTileSource);
  DevicePtr dA = upload(toBf16(a)), dB = upload(toBf16(bColumnMajor));
  DevicePtr dD = upload(std::vector<float>(128, NAN));
  ArgPack args;
  args.push(dA).push(dB).push(dD);
  launch(*kernel, {1}, {32}, args);
  EXPECT_EQ(download<float>(dD, 128),
            gemm(a.data(), b.data(), nullptr, 16, 8, 16));
}

TEST(IntrinsicsNvrtc, EveryKernelHereCompilesForSm80AndSm90) {
  NvrtcCompiler nvrtc(samples::deviceHeaders());
  const std::pair<const char *, const char *> kernels[] = {
      {"shuffles", kShuffleSource},
      {"votes", kVoteSource},
      {"mma_tiles", kMmaSource},
      {"ldmatrix_all", kLdmatrixSource},
      {"ldmatrix_mma", kLdmatrixMmaSource},
      {"pipeline", kPipelineSource},
      {"atomics", kAtomicsSource},
      {"convert", kConvertSource},
      {"arithmetic", kArithmeticSource},
      {"math", kMathSource},
      {"polynomial", kPolynomialExpSource},
      {"parameters", kParametersSource},
      {"asserting", kAssertSource}};
  for (const char *arch : {"sm_80", "sm_90"})
    for (auto [entry, source] : kernels)
      EXPECT_NO_THROW(nvrtc.compile({entry, source}, arch))
          << entry << " for " << arch;
}

} // namespace
