//===- WelfordTest.cpp - The moments building blocks on the emulator ------===//
//
// Welford's update, Chan's merge and their warp and block trees, run as
// device code: the order summaries merge in does not matter beyond
// rounding, counts stay exact past 2^24, and data far from zero keeps its
// variance.
//
//===----------------------------------------------------------------------===//

#include "test/emulation/EmulationTestSupport.h"

#include <cmath>
#include <random>

using namespace rudnn;
using namespace rudnn::runtime;
using namespace rudnn::test;

namespace {

class WelfordTest : public EmulationTest {};

/// Each thread pushes its `per` values, then the block of 256 merges; every
/// thread writes (count, mean, m2) of the block. Block 1 merges the same
/// summaries with the lanes and warps taken in reverse order.
constexpr const char *kBlockSource = R"cuda(
#include "rudnn/device.cuh"
using rudnn::norm::Welford;
extern "C" __global__ void moments(const float *x, int per, float *out) {
  __shared__ rudnn::norm::BlockScratch scratch;
  const int t = blockIdx.x ? 255 - threadIdx.x : threadIdx.x;
  Welford w;
  for (int i = 0; i < per; ++i)
    w.push(x[t * per + i]);
  w = rudnn::norm::block_merge<256>(w, scratch);
  float *o = out + (blockIdx.x * 256 + threadIdx.x) * 3;
  o[0] = static_cast<float>(w.count);
  o[1] = w.mean;
  o[2] = w.m2;
}
)cuda";

TEST_F(WelfordTest, BlockMergeMatchesTheTwoPassMomentsInAnyOrder) {
  auto kernel = build("moments", kBlockSource);
  const int per = 37;
  std::mt19937 random(1);
  std::normal_distribution<double> normal;
  std::vector<float> x(256 * per);
  for (float &v : x)
    v = static_cast<float>(3.0 + 2.0 * normal(random));
  double mean = 0, m2 = 0;
  for (float v : x)
    mean += v;
  mean /= x.size();
  for (float v : x)
    m2 += (v - mean) * (v - mean);
  DevicePtr in = upload(x), out = upload(std::vector<float>(2 * 256 * 3));
  ArgPack args;
  args.push(in).push(per).push(out);
  launch(*kernel, {2}, {256}, args);
  const std::vector<float> got = download<float>(out, 2 * 256 * 3);
  for (int t = 0; t < 2 * 256; ++t) {
    EXPECT_EQ(got[t * 3], 256.0f * per);
    EXPECT_NEAR(got[t * 3 + 1], mean, 1e-6 * std::abs(mean));
    EXPECT_NEAR(got[t * 3 + 2], m2, 2e-5 * m2);
    // Every thread of a block holds the same summary, bit for bit.
    EXPECT_EQ(got[t * 3 + 1], got[t / 256 * 256 * 3 + 1]);
    EXPECT_EQ(got[t * 3 + 2], got[t / 256 * 256 * 3 + 2]);
  }
  // Forward and reverse orders agree to rounding.
  EXPECT_NEAR(got[1], got[256 * 3 + 1], 1e-6 * std::abs(mean));
  EXPECT_NEAR(got[2], got[256 * 3 + 2], 1e-5 * m2);
}

/// Merges summaries of `counts[i]` values of mean means[i], M2 m2s[i] in
/// order i = 0, 1, … (out[0..2]) and in reverse (out[3..5]).
constexpr const char *kMergeSource = R"cuda(
#include "rudnn/device.cuh"
using rudnn::norm::Welford;
extern "C" __global__ void merged(const unsigned *counts, const float *means,
                                  const float *m2s, int n, float *out) {
  Welford forward, backward;
  for (int i = 0; i < n; ++i) {
    Welford a, b;
    a.count = counts[i];
    a.mean = means[i];
    a.m2 = m2s[i];
    b.count = counts[n - 1 - i];
    b.mean = means[n - 1 - i];
    b.m2 = m2s[n - 1 - i];
    forward = rudnn::norm::merge(forward, a);
    backward = rudnn::norm::merge(b, backward);
  }
  const Welford both[2] = {forward, backward};
  for (int k = 0; k < 2; ++k) {
    out[k * 4] = __uint_as_float(both[k].count);
    out[k * 4 + 1] = both[k].mean;
    out[k * 4 + 2] = both[k].m2;
    out[k * 4 + 3] = both[k].variance();
  }
}
)cuda";

// Summaries of 2^22 values each: their merged count passes 2^24, where a
// float count would stop counting, and stays exact as an integer.
TEST_F(WelfordTest, MergedCountsPass2To24Exactly) {
  auto kernel = build("merged", kMergeSource);
  const int n = 9;
  std::vector<unsigned> counts(n, 1u << 22);
  counts[4] = 3; // and a small one between them
  std::vector<float> means(n), m2s(n);
  double total = 0, mean = 0;
  for (int i = 0; i < n; ++i) {
    means[i] = 10.0f + 0.25f * i;
    m2s[i] = 0.5f * counts[i];
    total += counts[i];
    mean += double(counts[i]) * means[i];
  }
  mean /= total;
  double m2 = 0;
  for (int i = 0; i < n; ++i)
    m2 += m2s[i] + counts[i] * (means[i] - mean) * (means[i] - mean);
  ArgPack args;
  DevicePtr out = upload(std::vector<float>(8));
  args.push(upload(counts))
      .push(upload(means))
      .push(upload(m2s))
      .push(n)
      .push(out);
  launch(*kernel, {1}, {1}, args);
  const std::vector<float> got = download<float>(out, 8);
  for (int k = 0; k < 2; ++k) {
    unsigned count;
    std::memcpy(&count, &got[k * 4], sizeof count);
    EXPECT_EQ(count, (8u << 22) + 3u); // 33554435: past 2^25
    EXPECT_NEAR(got[k * 4 + 1], mean, 1e-6 * mean);
    EXPECT_NEAR(got[k * 4 + 2], m2, 1e-5 * m2);
    EXPECT_NEAR(got[k * 4 + 3], m2 / total, 1e-5 * m2 / total);
  }
}

/// 1/n by the approximation and one Newton–Raphson step.
constexpr const char *kReciprocalSource = R"cuda(
#include "rudnn/device.cuh"
extern "C" __global__ void reciprocals(float *out) {
  const int n = blockIdx.x * blockDim.x + threadIdx.x + 1;
  out[n - 1] = rudnn::fast_reciprocal(static_cast<float>(n));
}
)cuda";

TEST_F(WelfordTest, ReciprocalOfCountsWithinOneUlp) {
  auto kernel = build("reciprocals", kReciprocalSource);
  const int n = 4096;
  DevicePtr out = upload(std::vector<float>(n));
  ArgPack args;
  args.push(out);
  launch(*kernel, {n / 256}, {256}, args);
  const std::vector<float> got = download<float>(out, n);
  for (int i = 1; i <= n; ++i) {
    const float exact = 1.0f / static_cast<float>(i);
    EXPECT_LE(std::abs(got[i - 1] - exact), std::nextafter(exact, 1.0f) - exact)
        << "1/" << i;
  }
}

} // namespace
