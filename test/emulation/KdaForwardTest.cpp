//===- KdaForwardTest.cpp - KDA forward kernels vs the float64 reference --===//
//
// Instantiates the device library's KDA kernels the way emitted code does
// (one translation unit per kernel, every specialization a constant), runs
// them in emulation on fresh random inputs drawn as real callers provide
// them (L2-normalised keys, beta in (0,1), g ≤ 0), and compares output,
// final state and boundaries with the float64 recurrence.
//
//===----------------------------------------------------------------------===//

#include "lib/reference/KdaReference.h"
#include "runtime/NvrtcCompiler.h"
#include "test/emulation/EmulationTestSupport.h"

#include <gmock/gmock.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>

using namespace rudnn;
using namespace rudnn::runtime;

namespace {

/// Mirrors rudnn::kda::ForwardParams (every pointer is 8 bytes).
struct Params {
  const void *q, *k, *v, *g, *beta;
  const float *initialState;
  void *output;
  float *finalState, *boundaries, *workspace;
  long long strides[6][3]; // q, k, v, g, beta, output: batch, time, head
  int batch, length, heads;
  float scale;
};

enum class Layout { BTHD, BHTD };

struct Case {
  int T, K, V, C;
  bool bf16;
  bool initialState;
  float gMin; // g uniform in [gMin, 0]
  Layout layout;
  bool recurrent;
};

// Test names say what a case is; keep gtest from printing its bytes.
void PrintTo(const Case &, std::ostream *) {}

std::string dtypeName(bool bf16) { return bf16 ? "__nv_bfloat16" : "float"; }

uint16_t toBf16(float x) {
  uint32_t bits;
  std::memcpy(&bits, &x, 4);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}
float fromBf16(uint16_t x) {
  uint32_t bits = uint32_t(x) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

double relativeError(const std::vector<double> &got,
                     const std::vector<double> &want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    num += (got[i] - want[i]) * (got[i] - want[i]);
    den += want[i] * want[i];
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

class KdaForwardTest : public rudnn::test::EmulationTest,
                       public ::testing::WithParamInterface<Case> {
protected:
  std::shared_ptr<LoadedKernel> kernel(const std::string &name,
                                       const std::string &call, const Case &c) {
    std::string dtype = dtypeName(c.bf16);
    std::string entry = "kda_" + name;
    std::string source = "#include \"rudnn/device.cuh\"\n"
                         "using Params = rudnn::kda::ForwardParams<" +
                         dtype + ", float, " + dtype + ">;\n" +
                         "extern \"C\" __global__ void " + entry +
                         "(Params p) { rudnn::kda::" + call + "(p); }\n";
    return build(entry, source);
  }
};

TEST_P(KdaForwardTest, MatchesFloat64Recurrence) {
  const Case c = GetParam();
  const int B = 2, H = 3, T = c.T, K = c.K, V = c.V, C = c.C, VB = 32;
  const int N = (T + C - 1) / C, sequences = B * H;
  std::mt19937 random(T * 131 + K * 7 + V + C);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unit(0, 1);

  reference::KdaShape shape{B, T, H, K, V};
  reference::KdaInputs in;
  in.q.resize(B * T * H * K);
  in.k.resize(B * T * H * K);
  in.g.resize(B * T * H * K);
  in.v.resize(B * T * H * V);
  in.beta.resize(B * T * H);
  for (double &x : in.q)
    x = normal(random);
  for (double &x : in.v)
    x = normal(random);
  for (double &x : in.g)
    x = c.gMin * unit(random);
  for (double &x : in.beta)
    x = 0.05 + 0.9 * unit(random);
  for (int row = 0; row < B * T * H; ++row) {
    double norm = 0;
    for (int d = 0; d < K; ++d) {
      double x = normal(random);
      in.k[row * K + d] = x;
      norm += x * x;
    }
    for (int d = 0; d < K; ++d)
      in.k[row * K + d] /= std::sqrt(norm);
  }
  if (c.initialState) {
    in.initialState.resize(B * H * K * V);
    for (double &x : in.initialState)
      x = 0.5 * normal(random);
  }
  // bf16 inputs: the reference sees the rounded values.
  auto quantize = [&](std::vector<double> &data) {
    if (c.bf16)
      for (double &x : data)
        x = fromBf16(toBf16(static_cast<float>(x)));
  };
  quantize(in.q);
  quantize(in.k);
  quantize(in.v);
  quantize(in.beta);
  for (double &x : in.g) // g is f32 in every case
    x = static_cast<float>(x);
  const double scale = 1.0 / std::sqrt(double(K));
  reference::KdaOutputs want = reference::kdaForward(shape, in, scale, C);

  // Device copies in the requested layout.
  auto strides = [&](int width) -> std::array<long long, 3> {
    if (c.layout == Layout::BTHD)
      return {(long long)T * H * width, (long long)H * width, width};
    return {(long long)H * T * width, width, (long long)T * width};
  };
  auto place = [&](const std::vector<double> &data, int width, bool asBf16) {
    auto s = strides(width);
    std::vector<float> f32(data.size());
    std::vector<uint16_t> b16(data.size());
    for (int b = 0; b < B; ++b)
      for (int t = 0; t < T; ++t)
        for (int h = 0; h < H; ++h)
          for (int d = 0; d < width; ++d) {
            double x = data[((b * T + t) * H + h) * width + d];
            long long at = b * s[0] + t * s[1] + h * s[2] + d;
            f32[at] = static_cast<float>(x);
            b16[at] = toBf16(static_cast<float>(x));
          }
    return asBf16 ? upload(b16) : upload(f32);
  };
  DevicePtr q = place(in.q, K, c.bf16), k = place(in.k, K, c.bf16);
  DevicePtr v = place(in.v, V, c.bf16), g = place(in.g, K, false);
  DevicePtr beta = place(in.beta, 1, c.bf16);
  DevicePtr output =
      place(std::vector<double>(B * T * H * V, std::nan("")), V, c.bf16);
  std::vector<float> initial(in.initialState.begin(), in.initialState.end());
  DevicePtr initialState = c.initialState ? upload(initial) : 0;
  DevicePtr finalState =
      upload(std::vector<float>(B * H * K * V, std::nanf("")));
  DevicePtr boundaries =
      upload(std::vector<float>(size_t(N) * B * H * K * V, std::nanf("")));
  const long long tileFloats =
      (long long)C * (4 * K + 2 * V + C) + K; // ChunkTiles::kFloats
  DevicePtr workspace =
      upload(std::vector<float>(size_t(N) * sequences * tileFloats, 0.f));

  Params p{};
  p.q = reinterpret_cast<void *>(q);
  p.k = reinterpret_cast<void *>(k);
  p.v = reinterpret_cast<void *>(v);
  p.g = reinterpret_cast<void *>(g);
  p.beta = reinterpret_cast<void *>(beta);
  p.initialState = reinterpret_cast<float *>(initialState);
  p.output = reinterpret_cast<void *>(output);
  p.finalState = reinterpret_cast<float *>(finalState);
  p.boundaries = reinterpret_cast<float *>(boundaries);
  p.workspace = reinterpret_cast<float *>(workspace);
  for (int i : {0, 1, 3}) // q, k, g: width K
    std::copy_n(strides(K).begin(), 3, p.strides[i]);
  std::copy_n(strides(V).begin(), 3, p.strides[2]);
  std::copy_n(strides(1).begin(), 3, p.strides[4]);
  std::copy_n(strides(V).begin(), 3, p.strides[5]);
  p.batch = B;
  p.length = T;
  p.heads = H;
  p.scale = static_cast<float>(scale);

  std::string dims =
      std::to_string(K) + ", " + std::to_string(V) + ", " + std::to_string(C);
  const unsigned vBlocks = (V + VB - 1) / VB;
  ArgPack args;
  args.push(p);
  if (c.recurrent) {
    launch(*kernel("recurrent", "recurrent<" + dims + ", 32>", c),
           {unsigned(sequences), vBlocks}, {32}, args);
  } else {
    launch(*kernel("prepare", "prepare<" + dims + ">", c),
           {unsigned(N), unsigned(sequences)}, {128}, args);
    launch(*kernel("propagate", "propagate<" + dims + ", 32>", c),
           {unsigned(sequences), vBlocks}, {128}, args);
    launch(*kernel("output", "output<" + dims + ">", c),
           {unsigned(N), unsigned(sequences)}, {128}, args);
  }

  // Read back in [B,T,H,V] order.
  std::vector<double> got(B * T * H * V);
  auto s = strides(V);
  size_t span = size_t(B) * s[0];
  std::vector<float> f32;
  std::vector<uint16_t> b16;
  if (c.bf16)
    b16 = download<uint16_t>(output, span);
  else
    f32 = download<float>(output, span);
  for (int b = 0; b < B; ++b)
    for (int t = 0; t < T; ++t)
      for (int h = 0; h < H; ++h)
        for (int d = 0; d < V; ++d) {
          long long at = b * s[0] + t * s[1] + h * s[2] + d;
          got[((b * T + t) * H + h) * V + d] =
              c.bf16 ? fromBf16(b16[at]) : f32[at];
        }
  auto widen = [](const std::vector<float> &x) {
    return std::vector<double>(x.begin(), x.end());
  };
  const double tolerance = c.bf16 ? 1e-2 : 1e-4;
  EXPECT_LT(relativeError(got, want.output), tolerance) << "output";
  EXPECT_LT(relativeError(widen(download<float>(finalState, B * H * K * V)),
                          want.finalState),
            tolerance)
      << "final state";
  EXPECT_LT(relativeError(
                widen(download<float>(boundaries, size_t(N) * B * H * K * V)),
                want.boundaries),
            tolerance)
      << "boundaries";
}

std::string caseName(const ::testing::TestParamInfo<Case> &info) {
  const Case &c = info.param;
  return std::string(c.recurrent ? "Recurrent" : "Chunked") + "_T" +
         std::to_string(c.T) + "_K" + std::to_string(c.K) + "_V" +
         std::to_string(c.V) + "_C" + std::to_string(c.C) +
         (c.bf16 ? "_bf16" : "_f32") + (c.initialState ? "_S0" : "") +
         (c.layout == Layout::BHTD ? "_BHTD" : "") +
         (c.gMin < -5 ? "_steep" : "");
}

INSTANTIATE_TEST_SUITE_P(
    Kernels, KdaForwardTest,
    ::testing::Values(
        Case{1, 16, 16, 16, false, true, -1, Layout::BTHD, true},
        Case{2, 64, 60, 16, false, false, -20, Layout::BHTD, true},
        Case{63, 16, 60, 16, false, true, -1, Layout::BTHD, false},
        Case{64, 64, 64, 64, false, true, -20, Layout::BTHD, false},
        Case{65, 60, 100, 32, false, true, -1, Layout::BHTD, false},
        Case{200, 64, 64, 64, true, true, -1, Layout::BTHD, false},
        Case{130, 128, 128, 64, false, false, -20, Layout::BTHD, false},
        Case{70, 100, 16, 32, true, false, -1, Layout::BHTD, false}),
    caseName);

} // namespace

namespace {

TEST(KdaForwardNvrtc, EveryKernelCompilesForSm90WithoutSpills) {
  NvrtcCompiler compiler(samples::deviceHeaders());
  for (const char *call :
       {"prepare<128, 128, 64>", "propagate<128, 128, 64, 32>",
        "output<128, 128, 64>", "recurrent<128, 128, 64, 32>"}) {
    std::string source =
        "#include \"rudnn/device.cuh\"\n"
        "using Params = rudnn::kda::ForwardParams<__nv_bfloat16, float, "
        "__nv_bfloat16>;\n"
        "extern \"C\" __global__ void kda(Params p) { rudnn::kda::" +
        std::string(call) + "(p); }\n";
    CudaBinary binary = compiler.compile({"kda", source}, "sm_90");
    EXPECT_THAT(binary.ptx, ::testing::HasSubstr(".entry kda")) << call;
    // ptxas's resource report: no local-memory spills.
    std::string path = ::testing::TempDir() + "kda.ptx";
    std::ofstream(path) << binary.ptx;
    std::string command = std::string(RUDNN_PTXAS) +
                          " -arch=sm_90 -v -o /dev/null " + path + " 2>&1";
    FILE *pipe = ::popen(command.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string report;
    char buffer[512];
    while (std::fgets(buffer, sizeof(buffer), pipe))
      report += buffer;
    EXPECT_EQ(::pclose(pipe), 0) << report;
    EXPECT_THAT(report, ::testing::HasSubstr("0 bytes spill stores")) << call;
    EXPECT_THAT(report, ::testing::Not(::testing::ContainsRegex(
                            "[1-9][0-9]* bytes spill stores")))
        << call;
  }
}

} // namespace
