//===- AttentionBackwardKernelTest.cpp - The backward kernels emulated ----===//
//
// rudnn::attention::row_terms, the sm_80 gradients (one pass over each key
// tile, 64 or 128 keys a block) and convert_query_gradients launched
// directly on the emulator, from the float64 forward's o and lse, against
// the float64 gradient: masks, GQA, tails, f32 and bf16, dQ by reductions
// and in the deterministic order, which a second run repeats bit for bit.
//
//===----------------------------------------------------------------------===//

#include "dialects/IR/attention/AttentionPolicy.h"
#include "lib/reference/attention/AttentionReference.h"
#include "test/emulation/EmulationTestSupport.h"
#include "test/support/KdaProblem.h"

#include <cuda_bf16.h>

#include <cmath>
#include <random>
#include <string>

using namespace rudnn;
using namespace rudnn::runtime;

namespace {

/// Three entries over dense [B, T, H, D]-style tensors, their parameters
/// the shapes and attributes.
constexpr const char *kSource = R"cuda(
#include "rudnn/device.cuh"
using namespace rudnn;
using namespace rudnn::attention;
#define ARGS const TYPE *q, const TYPE *k, const TYPE *v, const int *lengths, \
    const unsigned char *mask, TYPE *o, float *lse, const TYPE *d_o,           \
    float *terms, TYPE *dq, TYPE *dk, TYPE *dv, float *dq_accum,              \
    int *semaphores, int B, int T, int S, int H, int G, float scale,          \
    float softcap, int left, int right
#define PASS q, k, v, lengths, mask, o, lse, d_o, terms, dq, dk, dv, dq_accum, \
    semaphores, B, T, S, H, G, scale, softcap, left, right
__device__ BackwardParams<TYPE> params(ARGS) {
  const int D = HEAD_DIM, E = VALUE_DIM;
  const SequenceStrides qs{(long long)T * H * D, H * D, D},
      ks{(long long)S * G * D, G * D, D}, vs{(long long)S * G * E, G * E, E},
      os{(long long)T * H * E, H * E, E};
  const ForwardParams<TYPE> f = {q, k, v, lengths, mask, nullptr, nullptr, o,
                                 lse, qs, ks, vs, os, S, (long long)H * T, T,
                                 B, T, S, H, G, scale, softcap, left, right};
  return {f, d_o, os, terms, dq, dk, dv, qs, ks, vs, dq_accum, qs};
}
extern "C" __global__ void terms_entry(ARGS) {
  row_terms<TYPE, VALUE_DIM>(params(PASS));
}
extern "C" __global__ void gradients_entry(ARGS) {
  gradients<TYPE, HEAD_DIM, VALUE_DIM, KEYS, CAUSAL, false,
            tile::Alignment::Checked, DETERMINISTIC>(params(PASS), semaphores);
}
extern "C" __global__ void convert_entry(ARGS) {
  convert_query_gradients<TYPE, HEAD_DIM>(params(PASS));
}
)cuda";

struct BackwardCase {
  bool bf16;
  int B, T, S, H, G, D, E;
  bool causal, lengths, mask;
  int left, right;
  float softcap;
  int keys;
  /// The deterministic order's persistent grid; 0: reductions.
  unsigned blocks;
};

void PrintTo(const BackwardCase &, std::ostream *) {}

class AttentionBackwardKernels
    : public rudnn::test::EmulationTest,
      public ::testing::WithParamInterface<BackwardCase> {
protected:
  std::string source(const BackwardCase &c) {
    return "#define TYPE " + std::string(c.bf16 ? "__nv_bfloat16" : "float") +
           "\n#define HEAD_DIM " + std::to_string(c.D) +
           "\n#define VALUE_DIM " + std::to_string(c.E) + "\n#define CAUSAL " +
           (c.causal ? "true" : "false") + "\n#define KEYS " +
           std::to_string(c.keys) + "\n#define DETERMINISTIC " +
           (c.blocks ? "true" : "false") + "\n" + kSource;
  }
  /// Values in the input type: float or bf16 bits.
  DevicePtr tensor(const std::vector<double> &values, bool bf16) {
    if (!bf16) {
      std::vector<float> data(values.begin(), values.end());
      return upload(data);
    }
    std::vector<__nv_bfloat16> data;
    for (double value : values)
      data.push_back(__float2bfloat16(static_cast<float>(value)));
    return upload(data);
  }
  std::vector<double> read(DevicePtr pointer, size_t count, bool bf16) {
    std::vector<double> values;
    if (!bf16) {
      for (float value : download<float>(pointer, count))
        values.push_back(value);
    } else {
      for (__nv_bfloat16 value : download<__nv_bfloat16>(pointer, count))
        values.push_back(__bfloat162float(value));
    }
    return values;
  }
};

TEST_P(AttentionBackwardKernels, MatchFloat64Gradients) {
  const BackwardCase c = GetParam();
  const int64_t B = c.B, T = c.T, S = c.S, H = c.H, G = c.G, D = c.D, E = c.E;
  std::mt19937 random(unsigned(T * 31 + S * 7 + D));
  reference::AttentionShape shape{B, T, S, H, G, D, E};
  reference::AttentionInputs in;
  in.q = rudnn::test::normalValues(B * T * H * D, random);
  in.k = rudnn::test::normalValues(B * S * G * D, random);
  in.v = rudnn::test::normalValues(B * S * G * E, random);
  std::vector<double> dO = rudnn::test::normalValues(B * T * H * E, random);
  if (c.bf16)
    for (std::vector<double> *values : {&in.q, &in.k, &in.v, &dO})
      for (double &value : *values)
        value = __bfloat162float(__float2bfloat16(static_cast<float>(value)));
  std::vector<int> lengths;
  if (c.lengths)
    for (int64_t b = 0; b < B; ++b) {
      lengths.push_back(b + 1 == B && B > 1 ? 0 : int(S - (S / 3) * b));
      in.keyLengths.push_back(lengths.back());
    }
  std::vector<unsigned char> mask;
  if (c.mask)
    for (int64_t i = 0; i < B * S; ++i) {
      mask.push_back(i % 4 != 2);
      in.keyMask.push_back(mask.back());
    }
  const auto options = reference::AttentionOptions::forHeadDim(
      D, c.causal, c.left, c.right, c.softcap);
  const reference::AttentionOutputs forward =
      reference::attentionForward(shape, in, options);
  const reference::AttentionGradients want =
      reference::attentionBackward(shape, in, dO, options);

  DevicePtr q = tensor(in.q, c.bf16), k = tensor(in.k, c.bf16),
            v = tensor(in.v, c.bf16), o = tensor(forward.o, c.bf16),
            d_o = tensor(dO, c.bf16);
  std::vector<float> lse(forward.lse.begin(), forward.lse.end());
  DevicePtr dLse = upload(lse), terms = upload(std::vector<float>(B * H * T));
  DevicePtr dLengths = c.lengths ? upload(lengths) : 0,
            dMask = c.mask ? upload(mask) : 0;
  const uint32_t shared = static_cast<uint32_t>(
      mlir::rudnn::attentionGradientSharedBytes(D, E, c.bf16 ? 2 : 4, c.keys));
  const int64_t step = mlir::rudnn::attentionGradientStep(D, E, c.bf16 ? 2 : 4);
  auto kernels = [&] {
    auto terms_ = build("terms_entry", source(c));
    auto gradients_ = build("gradients_entry", source(c));
    auto convert_ = build("convert_entry", source(c));
    return std::vector{terms_, gradients_, convert_};
  }();

  std::vector<std::vector<double>> runs;
  for (int run = 0; run < 2; ++run) {
    const std::vector<double> nan(1, NAN);
    DevicePtr dq = tensor(std::vector<double>(B * T * H * D, NAN), c.bf16),
              dk = tensor(std::vector<double>(B * S * G * D, NAN), c.bf16),
              dv = tensor(std::vector<double>(B * S * G * E, NAN), c.bf16);
    DevicePtr accum = upload(std::vector<float>(B * T * H * D)),
              semaphores =
                  upload(std::vector<int>(B * H * ((T + step - 1) / step)));
    ArgPack args;
    args.push(q)
        .push(k)
        .push(v)
        .push(dLengths)
        .push(dMask)
        .push(o)
        .push(dLse)
        .push(d_o)
        .push(terms)
        .push(dq)
        .push(dk)
        .push(dv)
        .push(accum)
        .push(semaphores)
        .push(int(B))
        .push(int(T))
        .push(int(S))
        .push(int(H))
        .push(int(G))
        .push(float(options.scale))
        .push(c.softcap)
        .push(c.left)
        .push(c.right);
    launch(*kernels[0], {unsigned(T + 3) / 4, unsigned(B * H)}, {128}, args);
    const unsigned threads = 2 * c.keys;
    if (c.blocks)
      launch(*kernels[1], {c.blocks}, {threads}, args, shared,
             /*cooperative=*/true);
    else
      launch(*kernels[1], {unsigned(S + c.keys - 1) / c.keys, unsigned(B * G)},
             {threads}, args, shared);
    launch(*kernels[2], {unsigned(T + 3) / 4, unsigned(B * H)}, {128}, args);
    std::vector<double> all = read(dq, B * T * H * D, c.bf16);
    for (DevicePtr gradient : {dk, dv}) {
      const size_t count = gradient == dk ? B * S * G * D : B * S * G * E;
      std::vector<double> part = read(gradient, count, c.bf16);
      all.insert(all.end(), part.begin(), part.end());
    }
    runs.push_back(all);
    const double tolerance = c.bf16 ? 2e-2 : 1e-4;
    EXPECT_LT(
        rudnn::test::relativeError(read(dq, B * T * H * D, c.bf16), want.dq),
        tolerance);
    EXPECT_LT(
        rudnn::test::relativeError(read(dk, B * S * G * D, c.bf16), want.dk),
        tolerance);
    EXPECT_LT(
        rudnn::test::relativeError(read(dv, B * S * G * E, c.bf16), want.dv),
        tolerance);
  }
  // The deterministic order: a second run gives the same bits.
  ASSERT_EQ(runs[0].size(), runs[1].size());
  if (c.blocks) {
    for (size_t i = 0; i < runs[0].size(); ++i)
      ASSERT_EQ(std::memcmp(&runs[0][i], &runs[1][i], sizeof(double)), 0) << i;
  }
}

// The kernels alone on the two paths of their products; the API's tests
// cover the rest of the feature matrix end to end.
INSTANTIATE_TEST_SUITE_P(
    Emulated, AttentionBackwardKernels,
    ::testing::Values(
        // f32 on FMA: everything at once, GQA, tails, dV then dK (D + E
        // past 256 columns), dQ in order over three resident blocks.
        BackwardCase{false, 3, 66, 80, 4, 2, 40, 24, true, true, true, 30, -1,
                     3, 64, 0},
        BackwardCase{false, 2, 37, 45, 3, 1, 200, 72, false, false, true, -1,
                     -1, 0, 64, 3},
        // bf16 on tensor cores at D = 128, 128 keys a block (eight warps,
        // the 32-query steps), and at D = 72 in the deterministic order.
        BackwardCase{true, 1, 70, 150, 2, 2, 128, 128, true, false, false, -1,
                     -1, 0, 128, 0},
        BackwardCase{true, 2, 53, 130, 3, 1, 72, 40, false, true, false, -1, -1,
                     0, 128, 2}));

} // namespace
