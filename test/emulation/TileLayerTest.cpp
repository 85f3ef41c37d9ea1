//===- TileLayerTest.cpp - The device library's tile layer ----------------===//
//
// A block GEMM written on the tile layer alone (cp.async tile copies with
// zero-filled edges, the two-stage pipeline, swizzled shared tiles, ldmatrix
// fragments, warp tiles of several accumulators) against a float64 product
// on odd sizes, for both A and B layouts and both 16-bit types; fp32 tiles
// on FMA and on TF32 tensor cores (operands rounded as cvt.rna does);
// the shared-tile layouts conflict-free for ldmatrix; and the same kernel
// under NVRTC with ldmatrix, cp.async and no spills.
//
//===----------------------------------------------------------------------===//

#include "runtime/compile/CudaToolkit.h"
#include "runtime/compile/NvrtcCompiler.h"
#include "runtime/plans/KernelReport.h"
#include "test/emulation/EmulationTestSupport.h"
#include "test/support/Ptxas.h"

#include <gmock/gmock.h>

#include <cmath>
#include <cstring>
#include <random>
#include <set>
#include <string>
#include <vector>

using namespace rudnn;
using namespace rudnn::runtime;

namespace {

/// C[M x N] = A[M x K] · B, B stored [N][K] (NK) or [K][N] (KN); 64x64
/// block tiles, four warps of 32x32, 32 deep per stage, two stages.
constexpr const char *kGemmSource = R"cuda(
#include "rudnn/device.cuh"
using namespace rudnn::tile;

template <typename T, ALayout LayoutA, BLayout Layout, bool Tf32 = false>
__device__ void gemm(const T *A, const T *B, float *C, int M, int N, int K) {
  constexpr int BM = 64, BN = 64, BK = 32;
  constexpr bool mk = LayoutA == ALayout::MK;
  using TileA = SharedTile<T, mk ? BM : BK, mk ? BK : BM>;
  using TileB = SharedTile<T, Layout == BLayout::NK ? BN : BK,
                           Layout == BLayout::NK ? BK : BN>;
  __shared__ __align__(16) T sa[2][TileA::kElements];
  __shared__ __align__(16) T sb[2][TileB::kElements];
  const int m0 = blockIdx.y * BM, n0 = blockIdx.x * BN;
  const int warp = threadIdx.x / 32, wm = warp / 2 * 32, wn = warp % 2 * 32;
  const int steps = (K + BK - 1) / BK;
  auto issue = [&](int step, int stage) {
    const int k0 = step * BK;
    if (mk)
      load_tile_async(TileA{sa[stage]}, A + (long long)m0 * K + k0, K, M - m0,
                      K - k0);
    else
      load_tile_async(TileA{sa[stage]}, A + (long long)k0 * M + m0, M, K - k0,
                      M - m0);
    if (Layout == BLayout::NK)
      load_tile_async(TileB{sb[stage]}, B + (long long)n0 * K + k0, K, N - n0,
                      K - k0);
    else
      load_tile_async(TileB{sb[stage]}, B + (long long)k0 * N + n0, N, K - k0,
                      N - n0);
  };
  WarpTile<T, 32, 32, Tf32> tile;
  tile.clear();
  two_stage_pipeline(steps, issue, [&](int, int stage) {
    const TileA a{sa[stage]};
    const TileB b{sb[stage]};
    for (int k = 0; k < BK; k += 16)
      tile.template mma<Layout, LayoutA>(a, wm, b, wn, k);
  });
  tile.for_each([&](int r, int c, float value) {
    const int row = m0 + wm + r, col = n0 + wn + c;
    if (row < M && col < N)
      C[(long long)row * N + col] = value;
  });
}

#define GEMM(T, name, a, b)                                                    \
  extern "C" __global__ void name(const T *A, const T *B, float *C, int M,    \
                                  int N, int K) {                              \
    gemm<T, ALayout::a, BLayout::b>(A, B, C, M, N, K);                         \
  }
GEMM(__nv_bfloat16, gemm_bf16_nk, MK, NK)
GEMM(__nv_bfloat16, gemm_bf16_kn, MK, KN)
GEMM(__half, gemm_f16_nk, MK, NK)
GEMM(__half, gemm_f16_kn, MK, KN)
GEMM(__nv_bfloat16, gemm_bf16_km_kn, KM, KN)
GEMM(__half, gemm_f16_km_nk, KM, NK)
GEMM(float, gemm_f32_nk, MK, NK)
GEMM(float, gemm_f32_km_kn, KM, KN)

#define GEMM_TF32(name, a, b)                                                  \
  extern "C" __global__ void name(const float *A, const float *B, float *C,   \
                                  int M, int N, int K) {                       \
    gemm<float, ALayout::a, BLayout::b, true>(A, B, C, M, N, K);               \
  }
GEMM_TF32(gemm_tf32_nk, MK, NK)
GEMM_TF32(gemm_tf32_km_kn, KM, KN)

// cvt.rna.tf32.f32 of each value, as the register's bits.
extern "C" __global__ void tf32_round(const float *in, unsigned *out, int n) {
  if (threadIdx.x < n)
    out[threadIdx.x] = rudnn::arch::to_tf32(in[threadIdx.x]);
}

// The tile's whole Rows x Cols (zeros past the copied part) back out.
extern "C" __global__ void float_tile_copy(const float *source, float *out,
                                           int pitch, int rows, int cols) {
  using Tile = SharedTile<float, 40, 24>;
  __shared__ __align__(16) float data[Tile::kElements];
  const Tile tile{data};
  load_tile_async(tile, source, pitch, rows, cols);
  rudnn::arch::cp_async_commit();
  rudnn::arch::cp_async_wait<0>();
  __syncthreads();
  for (int e = threadIdx.x; e < 40 * 24; e += blockDim.x)
    out[e] = tile(e / 24, e % 24);
}
)cuda";

using TileLayerTest = rudnn::test::EmulationTest;

struct GemmCase {
  const char *entry;
  bool bf16, nk;
  int M, N, K;
  bool km = false;  // A stored [K][M]
  bool f32 = false; // fp32 tiles: the same warp tiles on FMA
};

/// The bits of `x` in bf16 or binary16; x must be exact in both (here a
/// multiple of 2^-6 below 2 in magnitude), so no rounding is involved.
uint16_t encode16(double x, bool bf16) {
  if (bf16) {
    const float value = static_cast<float>(x);
    uint32_t bits;
    std::memcpy(&bits, &value, 4);
    return static_cast<uint16_t>(bits >> 16);
  }
  if (x == 0)
    return 0;
  const uint16_t sign = x < 0 ? 0x8000 : 0;
  const int exponent = std::ilogb(std::fabs(x));
  const double fraction = std::fabs(x) / std::ldexp(1.0, exponent) - 1;
  return sign | static_cast<uint16_t>((exponent + 15) << 10) |
         static_cast<uint16_t>(fraction * 1024);
}

TEST_F(TileLayerTest, BlockGemmMatchesFloat64OnOddSizes) {
  const std::vector<GemmCase> cases = {
      // K a multiple of 8 (16-byte rows): cp.async with a partial last stage.
      {"gemm_bf16_nk", true, true, 70, 45, 40},
      {"gemm_f16_kn", false, false, 37, 72, 56},
      // Rows not 16-byte aligned: the element-wise path, every edge ragged.
      {"gemm_bf16_kn", true, false, 65, 67, 37},
      {"gemm_f16_nk", false, true, 19, 9, 21},
      // One 16-deep step and a single row.
      {"gemm_bf16_nk", true, true, 1, 64, 16},
      // A transposed (ldmatrix .trans), aligned and element-wise.
      {"gemm_bf16_km_kn", true, false, 72, 40, 45, true},
      {"gemm_f16_km_nk", false, true, 33, 17, 50, true},
      // fp32 on FMA: rows of 29 floats element-wise, of 20 by cp.async.
      {"gemm_f32_nk", false, true, 37, 45, 29, false, true},
      {"gemm_f32_km_kn", false, false, 20, 33, 50, true, true},
  };
  std::mt19937 random(11);
  std::uniform_int_distribution<int> sixtyfourths(-96, 96);
  for (const GemmCase &c : cases) {
    SCOPED_TRACE(std::string(c.entry) + " M=" + std::to_string(c.M) +
                 " N=" + std::to_string(c.N) + " K=" + std::to_string(c.K));
    std::vector<uint16_t> a(c.M * c.K), b(c.K * c.N);
    std::vector<double> ra(a.size()), rb(b.size());
    for (size_t i = 0; i < a.size(); ++i)
      a[i] = encode16(ra[i] = sixtyfourths(random) / 64.0, c.bf16);
    for (size_t i = 0; i < b.size(); ++i)
      b[i] = encode16(rb[i] = sixtyfourths(random) / 64.0, c.bf16);
    auto kernel = build(c.entry, kGemmSource);
    DevicePtr dA =
        c.f32 ? upload(std::vector<float>(ra.begin(), ra.end())) : upload(a);
    DevicePtr dB =
        c.f32 ? upload(std::vector<float>(rb.begin(), rb.end())) : upload(b);
    DevicePtr dC = upload(std::vector<float>(c.M * c.N, NAN));
    ArgPack args;
    args.push(dA).push(dB).push(dC).push(c.M).push(c.N).push(c.K);
    launch(*kernel, {unsigned((c.N + 63) / 64), unsigned((c.M + 63) / 64)},
           {128}, args);
    std::vector<float> got = download<float>(dC, c.M * c.N);
    int wrong = 0;
    for (int i = 0; i < c.M; ++i)
      for (int j = 0; j < c.N; ++j) {
        double sum = 0, magnitude = 0;
        for (int k = 0; k < c.K; ++k) {
          const double p = (c.km ? ra[k * c.M + i] : ra[i * c.K + k]) *
                           (c.nk ? rb[j * c.K + k] : rb[k * c.N + j]);
          sum += p;
          magnitude += std::fabs(p);
        }
        // fp32 accumulation (truncated in check mode): relative to the sum
        // of magnitudes.
        if (!(std::fabs(got[i * c.N + j] - sum) <= 1e-5 * magnitude + 1e-30) &&
            ++wrong <= 5)
          ADD_FAILURE() << "C(" << i << "," << j << ") = " << got[i * c.N + j]
                        << ", expected " << sum;
      }
    EXPECT_EQ(wrong, 0);
  }
}

/// x rounded as cvt.rna.tf32.f32 rounds it: to 10 fraction bits, ties away
/// from zero (finite x).
double tf32(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  bits = (bits + 0x1000u) & ~0x1fffu;
  float rounded;
  std::memcpy(&rounded, &bits, 4);
  return rounded;
}

TEST_F(TileLayerTest, Tf32WarpTilesRoundTheirOperandsAsCvtRnaDoes) {
  // Full 24-bit fractions: the products of the operands rounded to TF32,
  // summed in fp32, and not the exact products, which FMA would give;
  // both layouts, ragged edges, a depth that is no multiple of 16.
  const struct {
    const char *entry;
    bool km, nk;
    int M, N, K;
  } cases[] = {{"gemm_tf32_nk", false, true, 37, 45, 29},
               {"gemm_tf32_km_kn", true, false, 20, 33, 50}};
  std::mt19937 random(12);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (const auto &c : cases) {
    SCOPED_TRACE(c.entry);
    std::vector<float> a(c.M * c.K), b(c.K * c.N);
    for (float &x : a)
      x = uniform(random);
    for (float &x : b)
      x = uniform(random);
    auto kernel = build(c.entry, kGemmSource);
    DevicePtr dC = upload(std::vector<float>(c.M * c.N, NAN));
    ArgPack args;
    args.push(upload(a)).push(upload(b)).push(dC).push(c.M).push(c.N).push(c.K);
    launch(*kernel, {unsigned((c.N + 63) / 64), unsigned((c.M + 63) / 64)},
           {128}, args);
    std::vector<float> got = download<float>(dC, c.M * c.N);
    int wrong = 0;
    double furthestFromExact = 0;
    for (int i = 0; i < c.M; ++i)
      for (int j = 0; j < c.N; ++j) {
        double rounded = 0, exact = 0, magnitude = 0;
        for (int k = 0; k < c.K; ++k) {
          const float x = c.km ? a[k * c.M + i] : a[i * c.K + k];
          const float y = c.nk ? b[j * c.K + k] : b[k * c.N + j];
          rounded += tf32(x) * tf32(y);
          exact += double(x) * y;
          magnitude += std::fabs(double(x) * y);
        }
        const double value = got[i * c.N + j];
        furthestFromExact =
            std::max(furthestFromExact, std::fabs(value - exact) / magnitude);
        // fp32 accumulation of the rounded products; within TF32's bound of
        // the exact ones (each operand within 2^-11).
        if (!(std::fabs(value - rounded) <= 1e-5 * magnitude &&
              std::fabs(value - exact) <= 0x1p-10 * magnitude) &&
            ++wrong <= 5)
          ADD_FAILURE() << "C(" << i << "," << j << ") = " << value
                        << ", expected " << rounded << " (exact " << exact
                        << ")";
      }
    EXPECT_EQ(wrong, 0);
    // Rounding to TF32 shows: far beyond fp32's accumulation error.
    EXPECT_GT(furthestFromExact, 1e-4);
  }
}

TEST_F(TileLayerTest, Tf32RoundingTiesAwayFromZeroAndKeepsInfinitiesAndNaN) {
  // Bits in, bits out: ties away from zero (1 + 2^-11 goes up, where
  // round-to-even would go down), below a tie down, a subnormal tie, the
  // largest finite value past TF32's range to infinity, infinities kept.
  const std::vector<std::pair<uint32_t, uint32_t>> cases = {
      {0x3f801000u, 0x3f802000u}, {0xbf801000u, 0xbf802000u},
      {0x3f800fffu, 0x3f800000u}, {0x3f805000u, 0x3f806000u},
      {0x00001000u, 0x00002000u}, {0x7f7fffffu, 0x7f800000u},
      {0x7f800000u, 0x7f800000u}, {0xff800000u, 0xff800000u},
      {0x00000000u, 0x00000000u}, {0x80000000u, 0x80000000u}};
  const std::vector<uint32_t> nans = {0x7fc00001u, 0xffc12345u, 0x7f800001u};
  std::vector<float> in;
  auto asFloat = [](uint32_t bits) {
    float value;
    std::memcpy(&value, &bits, 4);
    return value;
  };
  for (const auto &[bits, _] : cases)
    in.push_back(asFloat(bits));
  for (uint32_t bits : nans)
    in.push_back(asFloat(bits));
  auto kernel = build("tf32_round", kGemmSource);
  DevicePtr out = upload(std::vector<uint32_t>(in.size(), 0xdeadbeefu));
  ArgPack args;
  args.push(upload(in)).push(out).push(static_cast<int>(in.size()));
  launch(*kernel, {1}, {32}, args);
  const std::vector<uint32_t> got = download<uint32_t>(out, in.size());
  for (size_t i = 0; i < cases.size(); ++i)
    EXPECT_EQ(got[i], cases[i].second) << std::hex << cases[i].first;
  // NaN stays NaN, its low 13 bits dropped as a TF32 register's are.
  for (size_t i = 0; i < nans.size(); ++i) {
    const uint32_t bits = got[cases.size() + i];
    EXPECT_TRUE(std::isnan(asFloat(bits))) << std::hex << nans[i];
    EXPECT_EQ(bits & 0x1fffu, 0u) << std::hex << nans[i];
  }
}

TEST_F(TileLayerTest, FloatTilesCopyWholeChunksAndZeroTheRest) {
  // 37 x 21 of a pitch-28 matrix: the chunk at the column edge is partial,
  // rows past 37 and columns past 21 become zeros.
  const int pitch = 28, rows = 37, cols = 21;
  std::vector<float> source(rows * pitch);
  for (size_t i = 0; i < source.size(); ++i)
    source[i] = 1.0f + static_cast<float>(i);
  auto kernel = build("float_tile_copy", kGemmSource);
  DevicePtr out = upload(std::vector<float>(40 * 24, NAN));
  ArgPack args;
  args.push(upload(source)).push(out).push(pitch).push(rows).push(cols);
  launch(*kernel, {1}, {64}, args);
  std::vector<float> got = download<float>(out, 40 * 24);
  for (int r = 0; r < 40; ++r)
    for (int c = 0; c < 24; ++c)
      EXPECT_EQ(got[r * 24 + c],
                r < rows && c < cols ? source[r * pitch + c] : 0.0f)
          << "(" << r << ", " << c << ")";
}

TEST(TileLayout, LdmatrixPhasesHitEightDistinctBankGroups) {
  // The byte offset of chunk c of row r, as SharedTile places it (mirrors
  // the device code, checked here for every width a kernel uses).
  auto check = [](int cols) {
    const int chunks = cols / 8;
    const bool swizzled = (chunks & (chunks - 1)) == 0;
    const int pitch = swizzled || chunks % 2 ? chunks : chunks + 1;
    auto stored = [&](int r, int c) {
      if (!swizzled || chunks == 1)
        return c;
      if (chunks >= 8)
        return c ^ (r % 8);
      return c ^ (r / (8 / chunks) % chunks);
    };
    for (int r0 = 0; r0 < 64; r0 += 8)
      for (int c = 0; c < chunks; ++c) {
        std::set<int> groups; // 16-byte groups of banks, 8 per 128 bytes
        for (int r = r0; r < r0 + 8; ++r)
          groups.insert(((r * pitch + stored(r, c)) * 16) % 128 / 16);
        EXPECT_EQ(groups.size(), 8u)
            << cols << " columns, rows " << r0 << "+, chunk " << c;
      }
  };
  for (int cols : {8, 16, 24, 32, 40, 48, 64, 96, 128, 256})
    check(cols);
}

TEST(TileLayerNvrtc, GemmUsesLdmatrixAndCpAsyncWithoutSpills) {
  NvrtcCompiler nvrtc(samples::deviceHeaders());
  const bool ptxas = !CudaToolkit::get().ptxas.empty();
  for (const char *entry : {"gemm_bf16_nk", "gemm_f16_kn"})
    for (const char *arch : {"sm_80", "sm_90"}) {
      SCOPED_TRACE(std::string(entry) + " " + arch);
      CudaBinary binary = nvrtc.compile({entry, kGemmSource}, arch);
      EXPECT_THAT(binary.ptx, ::testing::HasSubstr("ldmatrix.sync.aligned"));
      EXPECT_THAT(binary.ptx,
                  ::testing::HasSubstr("cp.async.cg.shared.global"));
      EXPECT_THAT(binary.ptx,
                  ::testing::HasSubstr("mma.sync.aligned.m16n8k16"));
      if (ptxas) {
        EXPECT_THAT(samples::ptxasReport(entry, binary.ptx, arch),
                    ::testing::HasSubstr("0 bytes spill stores"));
        // The kernel report's view of the same kernel.
        const KernelResources resources =
            ptxasResources(entry, binary.ptx, arch);
        EXPECT_GT(resources.registers, 0);
        EXPECT_EQ(resources.spillStores, 0);
        EXPECT_GT(resources.staticShared, 2 * 2 * 64 * 32 * 2 - 1);
        const int blocks =
            residentBlocks(resources, 128, 0, TargetLimits::forArch(arch));
        EXPECT_GT(blocks, 0);
        EXPECT_LE(blocks, 32);
      }
      const InstructionMix mix = sassInstructionMix(binary.cubin);
      if (mix.unavailable.empty()) {
        EXPECT_GT(mix.ldmatrix, 0);
        EXPECT_GT(mix.cpAsync, 0);
        EXPECT_GT(mix.tensor, 0);
        EXPECT_GT(mix.globalStores.count(32), 0u); // fp32 results
        EXPECT_GT(mix.total, mix.tensor + mix.ldmatrix + mix.cpAsync);
      }
    }
}

TEST(TileLayerNvrtc, Tf32GemmRoundsOperandsOnTensorCoresWithoutSpills) {
  NvrtcCompiler nvrtc(samples::deviceHeaders());
  // One layout: the other's fragments come from the same instructions.
  const char *entry = "gemm_tf32_km_kn";
  CudaBinary binary = nvrtc.compile({entry, kGemmSource}, "sm_90");
  EXPECT_THAT(binary.ptx, ::testing::HasSubstr("cvt.rna.tf32.f32"));
  EXPECT_THAT(binary.ptx, ::testing::HasSubstr(
                              "mma.sync.aligned.m16n8k8.row.col.f32.tf32"));
  if (!CudaToolkit::get().ptxas.empty()) {
    EXPECT_THAT(samples::ptxasReport(entry, binary.ptx, "sm_90"),
                ::testing::HasSubstr("0 bytes spill stores"));
  }
  const InstructionMix mix = sassInstructionMix(binary.cubin);
  if (mix.unavailable.empty()) {
    EXPECT_GT(mix.tensor, 0);
  }
}

} // namespace
