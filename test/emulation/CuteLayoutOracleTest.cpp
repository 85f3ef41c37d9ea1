//===- CuteLayoutOracleTest.cpp - The emulator's layouts against CuTe -----===//
//
// An oracle written by others for the layouts the emulator must get right:
// CUTLASS's CuTe layout algebra, compiled on the host. A TMA box lands where
// CuTe's 128-byte-swizzle atom puts each element; wgmma reads tiles laid
// out by CuTe's K-major and MN-major swizzle atoms through the emulator's
// descriptors, takes its register A operand in CuTe's A layout and leaves
// its accumulators in CuTe's C layout: each product is exact against the
// host's, at the widths the kernels use (m64nNk16, N = 64, 128, 256).
// Without the CuTe headers (fetched when the build is configured)
// the tests are skipped, saying so.
//
//===----------------------------------------------------------------------===//

#include "test/emulation/EmulationTestSupport.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#if RUDNN_HAVE_CUTE
#include <cute/atom/mma_traits_sm90_gmma.hpp>
#include <cute/tensor.hpp>
#endif

using namespace rudnn::runtime;

namespace {

#if RUDNN_HAVE_CUTE

using Bf16 = cute::bfloat16_t;

/// Where CuTe puts element (mn, k) of an MN x 64 16-bit tile built from
/// `atom` (its offset in elements): K-major tiles are (M or N, K), MN-major
/// ones (M or N, K) with M or N contiguous. Atoms are repeated down K
/// first: an MN-major tile is blocks of 64 MN-columns, each all of K.
template <typename Atom, int MN = 64> int cuteOffset(int mn, int k) {
  auto tile =
      cute::tile_to_shape(Atom{}, cute::Shape<cute::Int<MN>, cute::_64>{},
                          cute::Step<cute::_2, cute::_1>{});
  // The atom's swizzle acts on the shared-memory address (its smem_ptr
  // flag), in bytes: on the element offset's bytes, not the offset itself.
  const int bytes =
      static_cast<int>(cute::get_nonswizzle_portion(tile)(mn, k)) * 2;
  return static_cast<int>(cute::get_swizzle_portion(tile)(bytes)) / 2;
}
template <int MN> int kMajorOffset(int mn, int k) {
  return cuteOffset<cute::GMMA::Layout_K_SW128_Atom<Bf16>, MN>(mn, k);
}
template <int MN> int mnMajorOffset(int mn, int k) {
  return cuteOffset<cute::GMMA::Layout_MN_SW128_Atom<Bf16>, MN>(mn, k);
}

template <int N> struct Wgmma;
template <> struct Wgmma<64> {
  using Ss = cute::SM90_64x64x16_F32BF16BF16_SS<cute::GMMA::Major::K,
                                                cute::GMMA::Major::K>;
};
template <> struct Wgmma<128> {
  using Ss = cute::SM90_64x128x16_F32BF16BF16_SS<cute::GMMA::Major::K,
                                                 cute::GMMA::Major::K>;
};
template <> struct Wgmma<256> {
  using Ss = cute::SM90_64x256x16_F32BF16BF16_SS<cute::GMMA::Major::K,
                                                 cute::GMMA::Major::K>;
};
using RsTraits =
    cute::MMA_Traits<cute::SM90_64x64x16_F32BF16BF16_RS<cute::GMMA::Major::K,
                                                        cute::GMMA::Major::MN>>;

/// (m, n) of accumulator `value` of warpgroup thread `thread` of an
/// m64nNk16, from CuTe's C layout (which numbers the 64 x N tile
/// column-major).
template <int N>
std::pair<int, int> accumulatorCoordinate(int thread, int value) {
  using Traits = cute::MMA_Traits<typename Wgmma<N>::Ss>;
  const int index = static_cast<int>(typename Traits::CLayout{}(thread, value));
  return {index % 64, index / 64};
}

/// (m, k) of A register element `value` (register value / 2, its low or
/// high half) of thread `thread`, from CuTe's register-A layout.
std::pair<int, int> registerACoordinate(int thread, int value) {
  const int index =
      static_cast<int>(typename RsTraits::ALayout{}(thread, value));
  return {index % 64, index / 64};
}

std::vector<float> smallIntegers(std::mt19937 &random, int size = 64 * 64) {
  std::uniform_int_distribution<int> small(-4, 4);
  std::vector<float> values(size);
  for (float &value : values)
    value = static_cast<float>(small(random));
  return values;
}

uint16_t bf16Bits(float value) {
  const Bf16 bits(value);
  uint16_t raw;
  std::memcpy(&raw, &bits, 2);
  return raw;
}

/// An MN x 64 matrix (row-major [mn][k]) as CuTe lays it out in shared
/// memory, in bf16 bits.
template <typename Offset>
std::vector<uint16_t> image(const std::vector<float> &matrix, Offset offset) {
  const int rows = static_cast<int>(matrix.size()) / 64;
  std::vector<uint16_t> bits(matrix.size());
  for (int mn = 0; mn < rows; ++mn)
    for (int k = 0; k < 64; ++k)
      bits[offset(mn, k)] = bf16Bits(matrix[mn * 64 + k]);
  return bits;
}

// A 64 x 64 bf16 box through TMA, copied out of shared memory as it lies.
constexpr const char *kBoxSource = R"cuda(
#include "rudnn/core.cuh"
using namespace rudnn::arch;
extern "C" __global__ void box(const __grid_constant__ TensorMap map,
                               unsigned short *out) {
  RUDNN_DYNAMIC_SHARED(unsigned char, raw);
  unsigned short *tile = swizzle_aligned<unsigned short>(raw);
  unsigned long long *full = (unsigned long long *)(tile + 64 * 64);
  if (threadIdx.x == 0)
    mbarrier_init(full, 1);
  __syncthreads();
  if (threadIdx.x == 0) {
    mbarrier_arrive_expect_tx(full, 64 * 64 * 2);
    const int at[3] = {0, 0, 0};
    tma_load<3>(tile, map, at, full);
  }
  mbarrier_wait(full, 0);
  for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x)
    out[i] = tile[i];
}
)cuda";

TEST(CuteLayoutOracle, TmaBoxesLandWhereTheSwizzleAtomPutsThem) {
  rudnn::test::Emulator emulator(/*check=*/true);
  std::vector<uint16_t> matrix(64 * 64);
  for (size_t i = 0; i < matrix.size(); ++i)
    matrix[i] = static_cast<uint16_t>(i + 1);
  DevicePtr data = emulator.upload(matrix);
  DevicePtr out = emulator.upload(std::vector<uint16_t>(64 * 64, 0));
  ArgPack args;
  args.push(rudnn::test::matrixMap(*emulator.backend, data, 64, 64, 64))
      .push(out);
  emulator.run("box", kBoxSource, {1}, {128}, args, 1024 + 64 * 64 * 2 + 8);
  const std::vector<uint16_t> got = emulator.download<uint16_t>(out, 64 * 64);
  for (int r = 0; r < 64; ++r)
    for (int c = 0; c < 64; ++c)
      ASSERT_EQ(got[kMajorOffset<64>(r, c)], matrix[r * 64 + c])
          << r << ", " << c;
}

// One warpgroup: shared tiles copied in byte for byte from images laid out
// by CuTe; D = A·Bᵀ over 64 deep with A (64 x 64) and B (N x 64) K-major in
// shared memory (SS), and E = A·V with A in registers, each thread's eight
// elements given by CuTe's A layout (a_index: m + 64 k), and V (64 x N)
// MN-major (RS), at width N.
constexpr const char *kProductSource = R"cuda(
#include "rudnn/core.cuh"
using namespace rudnn::arch;
template <int N>
__device__ void products_at(const unsigned short *a_image,
                            const unsigned short *b_image,
                            const unsigned short *v_image, const float *a,
                            const int *a_index, float *d_out, float *e_out) {
  RUDNN_DYNAMIC_SHARED(unsigned char, raw);
  unsigned short *ta = swizzle_aligned<unsigned short>(raw);
  unsigned short *tb = ta + 64 * 64, *tv = tb + N * 64;
  for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x)
    ta[i] = a_image[i];
  for (int i = threadIdx.x; i < N * 64; i += blockDim.x)
    tb[i] = b_image[i], tv[i] = v_image[i];
  fence_proxy_async_shared();
  __syncthreads();
  unsigned f[4][4]; // written before the fence
  for (int k = 0; k < 4; ++k)
    for (int r = 0; r < 4; ++r) {
      const int *at = a_index + 8 * threadIdx.x + 2 * r;
      f[k][r] = pack_bf16x2(a[at[0] % 64 * 64 + 16 * k + at[0] / 64],
                            a[at[1] % 64 * 64 + 16 * k + at[1] / 64]);
    }
  float d[N / 2] = {}, e[N / 2] = {};
  wgmma_fence();
  for (int k = 0; k < 4; ++k)
    wgmma_ss<__nv_bfloat16>(
        d, wgmma_descriptor(ta + 16 * k, 16, 1024),
        wgmma_descriptor(tb + 16 * k, 16, 1024));
  for (int k = 0; k < 4; ++k)
    wgmma_rs<__nv_bfloat16>(
        e, f[k], wgmma_descriptor(tv + 16 * 64 * k, 64 * 128, 1024));
  wgmma_commit();
  wgmma_wait<0>();
  for (int i = 0; i < N / 2; ++i)
    d_out[N / 2 * threadIdx.x + i] = d[i], e_out[N / 2 * threadIdx.x + i] = e[i];
}
extern "C" __global__ void products(int n, const unsigned short *a_image,
                                    const unsigned short *b_image,
                                    const unsigned short *v_image,
                                    const float *a, const int *a_index,
                                    float *d_out, float *e_out) {
  if (n == 64)
    products_at<64>(a_image, b_image, v_image, a, a_index, d_out, e_out);
  else if (n == 128)
    products_at<128>(a_image, b_image, v_image, a, a_index, d_out, e_out);
  else
    products_at<256>(a_image, b_image, v_image, a, a_index, d_out, e_out);
}
)cuda";

/// The products at width N on `emulator`, each accumulator of each thread
/// against the host's, placed by CuTe's C layout.
template <int N>
void expectCuteProducts(rudnn::test::Emulator &emulator, std::mt19937 &random,
                        const std::vector<int> &aIndex) {
  // A and B row-major [m or n][k]; V row-major [k][n].
  const std::vector<float> A = smallIntegers(random),
                           B = smallIntegers(random, N * 64),
                           V = smallIntegers(random, 64 * N);
  // V as the MN-major atom wants it: (n, k) with n contiguous.
  std::vector<float> vByN(64 * N);
  for (int k = 0; k < 64; ++k)
    for (int n = 0; n < N; ++n)
      vByN[n * 64 + k] = V[k * N + n];
  DevicePtr aImage = emulator.upload(image(A, kMajorOffset<64>)),
            bImage = emulator.upload(image(B, kMajorOffset<N>)),
            vImage = emulator.upload(image(vByN, mnMajorOffset<N>)),
            a = emulator.upload(A), index = emulator.upload(aIndex),
            d = emulator.upload(std::vector<float>(64 * N, NAN)),
            e = emulator.upload(std::vector<float>(64 * N, NAN));
  ArgPack args;
  args.push(N).push(aImage).push(bImage).push(vImage).push(a).push(index);
  args.push(d).push(e);
  emulator.run("products", kProductSource, {1}, {128}, args,
               1024 + (64 + 2 * N) * 64 * 2);
  const std::vector<float> gotD = emulator.download<float>(d, 64 * N),
                           gotE = emulator.download<float>(e, 64 * N);
  for (int thread = 0; thread < 128; ++thread)
    for (int value = 0; value < N / 2; ++value) {
      const auto [m, n] = accumulatorCoordinate<N>(thread, value);
      float wantD = 0, wantE = 0;
      for (int k = 0; k < 64; ++k) {
        wantD += A[m * 64 + k] * B[n * 64 + k];
        wantE += A[m * 64 + k] * V[k * N + n];
      }
      ASSERT_EQ(gotD[N / 2 * thread + value], wantD)
          << "N " << N << ", thread " << thread << ", accumulator " << value;
      ASSERT_EQ(gotE[N / 2 * thread + value], wantE)
          << "N " << N << ", thread " << thread << ", accumulator " << value;
    }
}

TEST(CuteLayoutOracle,
     WgmmaReadsCuteTilesAndRegistersAndLeavesCuteAccumulators) {
  std::mt19937 random(11);
  std::vector<int> aIndex(128 * 8);
  for (int thread = 0; thread < 128; ++thread)
    for (int value = 0; value < 8; ++value) {
      const auto [m, k] = registerACoordinate(thread, value);
      aIndex[8 * thread + value] = m + 64 * k;
    }
  for (bool check : {false, true}) {
    rudnn::test::Emulator emulator(check, check ? "reverse" : "forward");
    expectCuteProducts<64>(emulator, random, aIndex);
    expectCuteProducts<128>(emulator, random, aIndex);
    expectCuteProducts<256>(emulator, random, aIndex);
  }
}

#else

TEST(CuteLayoutOracle, NeedsTheCuteHeaders) {
  GTEST_SKIP() << "CUTLASS's CuTe headers were not found when the build was "
                  "configured (the nvidia-cutlass wheel from PyPI): the "
                  "emulator's layouts are not compared with CuTe's";
}

#endif

} // namespace
