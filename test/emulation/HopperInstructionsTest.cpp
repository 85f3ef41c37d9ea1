//===- HopperInstructionsTest.cpp - TMA, mbarriers and wgmma emulated -----===//
//
// The sm_90 wrappers (arch/tma.cuh, arch/mbarrier.cuh, arch/wgmma.cuh) on
// the emulator, against plain host arithmetic: a TMA box lands swizzled,
// with zeros outside the tensor, and only through its barrier; wgmma reads
// the tiles TMA wrote through its descriptors and computes the products of
// the logical matrices, at every width N a kernel may ask for.
//
//===----------------------------------------------------------------------===//

#include "test/emulation/EmulationTestSupport.h"

#include "runtime/compile/NvrtcCompiler.h"

#include "rudnn/errors.h"

#include <gmock/gmock.h>

#include <cuda_bf16.h>

#include <random>

using namespace rudnn;
using namespace rudnn::runtime;
using ::testing::HasSubstr;

namespace {

class HopperInstructions : public rudnn::test::EmulationTest {
protected:
  TensorMapBytes matrixMap(DevicePtr data, uint64_t rows, uint64_t cols,
                           uint32_t boxRows) {
    return rudnn::test::matrixMap(*backend, data, rows, cols, boxRows);
  }
};

// One box of a 10 x 64 matrix of 16-bit values into 16 shared rows: row r's
// 16-byte chunk c lands at chunk c ^ (r % 8), and rows past the tensor are
// zeros. (Reads without the wait: TmaOrderTest.cpp.)
constexpr const char *kBoxSource = R"cuda(
#include "rudnn/device.cuh"
using namespace rudnn::arch;
extern "C" __global__ void box(const __grid_constant__ TensorMap map,
                               unsigned short *out) {
  RUDNN_DYNAMIC_SHARED(unsigned char, raw);
  unsigned char *tile = swizzle_aligned(raw);
  unsigned long long *full = (unsigned long long *)(tile + 16 * 128);
  if (threadIdx.x == 0)
    mbarrier_init(full, 1);
  __syncthreads();
  if (threadIdx.x == 0) {
    mbarrier_arrive_expect_tx(full, 16 * 128);
    const int at[3] = {0, 0, 0};
    tma_load<3>(tile, map, at, full);
  }
  mbarrier_wait(full, 0);
  // Thread r copies shared row r out as it lies.
  for (int c = 0; c < 64; ++c)
    out[threadIdx.x * 64 + c] = ((unsigned short *)tile)[threadIdx.x * 64 + c];
}
)cuda";

TEST_F(HopperInstructions, TmaBoxesLandSwizzledWithZerosPastTheTensor) {
  std::vector<uint16_t> matrix(10 * 64);
  for (size_t i = 0; i < matrix.size(); ++i)
    matrix[i] = static_cast<uint16_t>(i + 1);
  DevicePtr data = upload(matrix);
  DevicePtr out = upload(std::vector<uint16_t>(16 * 64, 7));
  ArgPack args;
  args.push(matrixMap(data, 10, 64, 16)).push(out);
  launch(*build("box", kBoxSource), {1}, {16}, args, 16 * 128 + 8 + 1024);
  const std::vector<uint16_t> got = download<uint16_t>(out, 16 * 64);
  for (int r = 0; r < 16; ++r)
    for (int c = 0; c < 64; ++c) {
      // Element (r, c) sits in chunk c / 8 ^ r % 8 of row r.
      const int at = r * 64 + (c / 8 ^ r % 8) * 8 + c % 8;
      EXPECT_EQ(got[at], r < 10 ? matrix[r * 64 + c] : 0) << r << ", " << c;
    }
}

TEST_F(HopperInstructions, TensorMapsFollowTheHardwareRules) {
  DevicePtr data = upload(std::vector<uint16_t>(64 * 64));
  EXPECT_THAT([&] { matrixMap(data + 2, 64, 64, 64); },
              ::testing::ThrowsMessage<InvalidArgument>(
                  HasSubstr("the address is not a multiple of 16 bytes")));
  EXPECT_THAT([&] { matrixMap(data, 64, 60, 64); },
              ::testing::ThrowsMessage<InvalidArgument>(
                  HasSubstr("the stride of dim 1 is 120 bytes")));
}

// A warpgroup's products of 64 x 64 bf16 tiles TMA brought in: A·Bᵀ with
// both operands K-major in shared memory (as the scores Q·Kᵀ), A·V with A
// from registers in the mma A layout and V MN-major (as P·V), and Bᵀ·V
// with both MN-major (as the backward's dS·K from dSᵀ), four 16-deep steps
// each.
constexpr const char *kProductSource = R"cuda(
#include "rudnn/device.cuh"
using namespace rudnn::arch;
extern "C" __global__ void products(const __grid_constant__ TensorMap a_map,
                                    const __grid_constant__ TensorMap b_map,
                                    const __grid_constant__ TensorMap v_map,
                                    const __nv_bfloat16 *a, float *abt,
                                    float *av, float *btv) {
  RUDNN_DYNAMIC_SHARED(unsigned char, raw);
  __nv_bfloat16 *ta = swizzle_aligned<__nv_bfloat16>(raw);
  __nv_bfloat16 *tb = ta + 64 * 64, *tv = tb + 64 * 64;
  unsigned long long *full = (unsigned long long *)(tv + 64 * 64);
  if (threadIdx.x == 0)
    mbarrier_init(full, 1);
  __syncthreads();
  if (threadIdx.x == 0) {
    mbarrier_arrive_expect_tx(full, 3 * 64 * 64 * 2);
    const int at[3] = {0, 0, 0};
    tma_load<3>(ta, a_map, at, full);
    tma_load<3>(tb, b_map, at, full);
    tma_load<3>(tv, v_map, at, full);
  }
  mbarrier_wait(full, 0);
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  // A's fragments are written before the fence, as every register a wgmma
  // reads must be.
  unsigned f[4][4];
  for (int k = 0; k < 4; ++k)
    for (int r = 0; r < 4; ++r) {
      const __nv_bfloat16 *at = a + (16 * warp + Mma16816::a_row(lane, 2 * r)) * 64 +
                                16 * k + Mma16816::a_col(lane, 2 * r);
      f[k][r] = pack_bf16x2(__bfloat162float(at[0]), __bfloat162float(at[1]));
    }
  float d[32] = {}, e[32] = {}, g[32] = {};
  wgmma_fence();
  for (int k = 0; k < 4; ++k)
    wgmma_ss<__nv_bfloat16>(
        d, wgmma_descriptor(ta + 16 * k, 16, 1024),
        wgmma_descriptor(tb + 16 * k, 16, 1024));
  for (int k = 0; k < 4; ++k)
    wgmma_rs<__nv_bfloat16>(
        e, f[k], wgmma_descriptor(tv + 16 * 64 * k, 64 * 128, 1024));
  // Bᵀ·V: B's tile read as an MN-major A (its rows the depth).
  for (int k = 0; k < 4; ++k)
    wgmma_ss_transposed<__nv_bfloat16>(
        g, wgmma_descriptor(tb + 16 * 64 * k, 64 * 128, 1024),
        wgmma_descriptor(tv + 16 * 64 * k, 64 * 128, 1024));
  wgmma_commit();
  wgmma_wait<0>();
  for (int i = 0; i < 32; ++i) {
    const int row = 16 * warp + lane / 4 + 8 * (i % 4 / 2),
              col = 8 * (i / 4) + 2 * (lane % 4) + i % 2;
    abt[row * 64 + col] = d[i];
    av[row * 64 + col] = e[i];
    btv[row * 64 + col] = g[i];
  }
}
)cuda";

TEST_F(HopperInstructions, WgmmaComputesTheProductsOfTheTilesTmaWrote) {
  // Small integers: every product and sum is exact in bf16 and fp32.
  std::mt19937 random(5);
  std::uniform_int_distribution<int> small(-4, 4);
  auto matrix = [&] {
    std::vector<float> values(64 * 64);
    for (float &value : values)
      value = static_cast<float>(small(random));
    return values;
  };
  const std::vector<float> A = matrix(), B = matrix(), V = matrix();
  auto bf16 = [](const std::vector<float> &values) {
    std::vector<__nv_bfloat16> bits;
    for (float value : values)
      bits.push_back(__float2bfloat16(value));
    return bits;
  };
  DevicePtr a = upload(bf16(A)), b = upload(bf16(B)), v = upload(bf16(V));
  DevicePtr abt = upload(std::vector<float>(64 * 64, NAN)),
            av = upload(std::vector<float>(64 * 64, NAN)),
            btv = upload(std::vector<float>(64 * 64, NAN));
  ArgPack args;
  args.push(matrixMap(a, 64, 64, 64))
      .push(matrixMap(b, 64, 64, 64))
      .push(matrixMap(v, 64, 64, 64))
      .push(a)
      .push(abt)
      .push(av)
      .push(btv);
  launch(*build("products", kProductSource), {1}, {128}, args,
         3 * 64 * 64 * 2 + 8 + 1024);
  const std::vector<float> gotAbt = download<float>(abt, 64 * 64),
                           gotAv = download<float>(av, 64 * 64),
                           gotBtv = download<float>(btv, 64 * 64);
  for (int m = 0; m < 64; ++m)
    for (int n = 0; n < 64; ++n) {
      float wantAbt = 0, wantAv = 0, wantBtv = 0;
      for (int k = 0; k < 64; ++k) {
        wantAbt += A[m * 64 + k] * B[n * 64 + k];
        wantAv += A[m * 64 + k] * V[k * 64 + n];
        wantBtv += B[k * 64 + m] * V[k * 64 + n];
      }
      ASSERT_EQ(gotAbt[m * 64 + n], wantAbt) << m << ", " << n;
      ASSERT_EQ(gotAv[m * 64 + n], wantAv) << m << ", " << n;
      ASSERT_EQ(gotBtv[m * 64 + n], wantBtv) << m << ", " << n;
    }
}

// A·Bᵀ, then A·V, at width N (m64nNk16, N = 16, 176 and 256: the narrowest,
// one whose column blocks of V end mid-block, the widest), the tiles
// written by the threads in the 128-byte swizzle: A 64 x 64 and B N x 64
// K-major, V 64 x N MN-major in column blocks of 64. The first step of
// A·Bᵀ runs without scale-d over accumulators that hold 1e30 (never read);
// A·V adds to 0.5.
constexpr const char *kWideSource = R"cuda(
#include "rudnn/device.cuh"
using namespace rudnn::arch;
// Element (r, c) of a 64-column block of 128-byte swizzled rows.
__device__ int swizzled(int r, int c) {
  return r * 64 + ((c / 8) ^ (r % 8)) * 8 + c % 8;
}
// This thread's accumulators of a 64 x N product into out (row-major).
template <int N> __device__ void store_accumulators(const float *d, float *out) {
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  for (int i = 0; i < N / 2; ++i)
    out[(16 * warp + lane / 4 + 8 * (i % 4 / 2)) * N + 8 * (i / 4) +
        2 * (lane % 4) + i % 2] = d[i];
}
template <int N>
__device__ void products_at(const float *A, const float *B, const float *V,
                     float *abt, float *av) {
  constexpr int blocks = (N + 63) / 64; // V's column blocks
  RUDNN_DYNAMIC_SHARED(unsigned char, raw);
  __nv_bfloat16 *ta = swizzle_aligned<__nv_bfloat16>(raw);
  __nv_bfloat16 *tb = ta + 64 * 64, *tv = tb + N * 64;
  for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x)
    ta[swizzled(i / 64, i % 64)] = __float2bfloat16(A[i]);
  for (int i = threadIdx.x; i < N * 64; i += blockDim.x)
    tb[swizzled(i / 64, i % 64)] = __float2bfloat16(B[i]);
  for (int i = threadIdx.x; i < 64 * blocks * 64; i += blockDim.x) {
    const int k = i / (blocks * 64), n = i % (blocks * 64);
    tv[n / 64 * 64 * 64 + swizzled(k, n % 64)] =
        __float2bfloat16(n < N ? V[k * N + n] : 0.f);
  }
  fence_proxy_async_shared();
  __syncthreads();
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  unsigned f[4][4];
  for (int k = 0; k < 4; ++k)
    for (int r = 0; r < 4; ++r) {
      const float *at = A + (16 * warp + Mma16816::a_row(lane, 2 * r)) * 64 +
                        16 * k + Mma16816::a_col(lane, 2 * r);
      f[k][r] = pack_bf16x2(at[0], at[1]);
    }
  // One product at a time: two sets of 128 accumulators would not fit.
  float d[N / 2];
  for (int i = 0; i < N / 2; ++i)
    d[i] = 1e30f;
  wgmma_fence_operand(d);
  wgmma_fence();
  for (int k = 0; k < 4; ++k)
    wgmma_ss<__nv_bfloat16>(d, wgmma_descriptor(ta + 16 * k, 16, 1024),
                            wgmma_descriptor(tb + 16 * k, 16, 1024), k > 0);
  wgmma_commit();
  wgmma_wait<0>();
  wgmma_fence_operand(d);
  store_accumulators<N>(d, abt);
  for (int i = 0; i < N / 2; ++i)
    d[i] = 0.5f;
  for (int k = 0; k < 4; ++k)
    wgmma_fence_operand(f[k]);
  wgmma_fence_operand(d);
  wgmma_fence();
  for (int k = 0; k < 4; ++k)
    wgmma_rs<__nv_bfloat16>(
        d, f[k], wgmma_descriptor(tv + 16 * 64 * k, 64 * 128, 1024));
  wgmma_commit();
  wgmma_wait<0>();
  wgmma_fence_operand(d);
  store_accumulators<N>(d, av);
}
extern "C" __global__ void wide(int N, const float *A, const float *B,
                                const float *V, float *abt, float *av) {
  if (N == 16)
    products_at<16>(A, B, V, abt, av);
  else if (N == 176)
    products_at<176>(A, B, V, abt, av);
  else
    products_at<256>(A, B, V, abt, av);
}
)cuda";

TEST_F(HopperInstructions, EveryWgmmaWidthComputesItsProducts) {
  std::mt19937 random(11);
  std::uniform_int_distribution<int> small(-4, 4);
  auto matrix = [&](size_t size) {
    std::vector<float> values(size);
    for (float &value : values)
      value = static_cast<float>(small(random));
    return values;
  };
  const std::shared_ptr<runtime::LoadedKernel> kernel =
      build("wide", kWideSource);
  for (int N : {16, 176, 256}) {
    const std::vector<float> A = matrix(64 * 64), B = matrix(N * 64),
                             V = matrix(64 * N);
    DevicePtr a = upload(A), b = upload(B), v = upload(V);
    DevicePtr abt = upload(std::vector<float>(64 * N, NAN)),
              av = upload(std::vector<float>(64 * N, NAN));
    ArgPack args;
    args.push(N).push(a).push(b).push(v).push(abt).push(av);
    const int blocks = (N + 63) / 64;
    launch(*kernel, {1}, {128}, args,
           (64 * 64 + N * 64 + 64 * blocks * 64) * 2 + 1024);
    const std::vector<float> gotAbt = download<float>(abt, 64 * N),
                             gotAv = download<float>(av, 64 * N);
    for (int m = 0; m < 64; ++m)
      for (int n = 0; n < N; ++n) {
        // Small integers: every sum is exact, in any order.
        double wantAbt = 0, wantAv = 0.5;
        for (int k = 0; k < 64; ++k) {
          wantAbt += double(A[m * 64 + k]) * B[n * 64 + k];
          wantAv += double(A[m * 64 + k]) * V[k * N + n];
        }
        ASSERT_EQ(gotAbt[m * N + n], wantAbt) << N << ": " << m << ", " << n;
        ASSERT_EQ(gotAv[m * N + n], wantAv) << N << ": " << m << ", " << n;
      }
  }
}

TEST(HopperWgmmaPtx, EachWidthAssemblesAsItsOwnShape) {
  NvrtcCompiler nvrtc(samples::deviceHeaders());
  const CudaBinary binary = nvrtc.compile({"wide", kWideSource}, "sm_90a");
  for (int N : {16, 176, 256}) {
    const std::string shape = "m64n" + std::to_string(N) + "k16.f32.bf16.bf16";
    EXPECT_THAT(binary.ptx, HasSubstr("wgmma.mma_async.sync.aligned." + shape))
        << N;
  }
  // Nothing serialized, no arrive injected (ptxas's C75xx notes).
  EXPECT_EQ(binary.log.find("C75"), std::string::npos) << binary.log;
}

} // namespace
