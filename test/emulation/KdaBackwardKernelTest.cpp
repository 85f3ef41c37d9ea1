//===- KdaBackwardKernelTest.cpp - The KDA backward kernels vs float64 ----===//
//
// Runs the emitted forward prepare and propagate kernels, then the backward's
// state_gradient and gradients, in emulation on fresh random inputs, and
// compares all six gradients with the float64 token recurrence's.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emit/kda/KdaEmitter.h"
#include "dialects/IR/kda/KdaPolicy.h"
#include "lib/reference/Compare.h"
#include "lib/reference/kda/KdaReference.h"
#include "test/emulation/EmulationTestSupport.h"
#include "test/support/KdaProblem.h"

#include <array>

using namespace rudnn;
using namespace rudnn::runtime;

namespace {

/// The arguments of one call, grouped as the device-side structs group them.
struct Strides {
  long long batch, time, head;
};
struct Forward {
  const float *q, *k, *v, *g, *beta, *initialState;
  float *output, *finalState, *boundaries, *workspace;
  Strides q_s, k_s, v_s, g_s, beta_s, output_s;
  int batch, length, heads;
  float scale;
};
struct Backward {
  Forward forward;
  const float *dOutput, *dFinalState;
  float *dq, *dk, *dv, *dg, *dbeta, *dInitialState, *scratch;
  Strides dOutput_s, dq_s, dk_s, dv_s, dg_s, dbeta_s;
};

struct Case {
  int B, T, H, K, V, C;
  double gMin;
};

class KdaBackwardKernelTest : public rudnn::test::EmulationTest,
                              public ::testing::WithParamInterface<Case> {};

void PrintTo(const Case &, std::ostream *) {}

TEST_P(KdaBackwardKernelTest, MatchesFloat64Gradients) {
  const Case c = GetParam();
  const int B = c.B, T = c.T, H = c.H, K = c.K, V = c.V, C = c.C;
  const int N = (T + C - 1) / C, sequences = B * H, VB = 32;
  reference::KdaShape shape{B, T, H, K, V};
  reference::KdaInputs in =
      test::randomKdaInputs(shape, c.gMin, true, false, unsigned(T + K + V));
  std::mt19937 random(5);
  std::normal_distribution<double> normal;
  std::vector<double> dO(B * T * H * V), dS(B * H * K * V);
  for (double &x : dO)
    x = static_cast<float>(normal(random));
  for (double &x : dS)
    x = static_cast<float>(normal(random));
  const double scale = 1.0 / std::sqrt(double(K));
  reference::KdaGradients want =
      reference::kdaBackward(shape, in, scale, dO, dS);

  auto f32 = [](const std::vector<double> &x) {
    return std::vector<float>(x.begin(), x.end());
  };
  auto ptr = [](DevicePtr p) { return reinterpret_cast<float *>(p); };
  const codegen::KdaKernelSpec spec{
      codegen::DType::F32, codegen::DType::F32, codegen::DType::F32, K, V, C};
  // The backward's prepare keeps its own tiles after the forward's.
  codegen::KdaKernelSpec prepareSpec = spec;
  prepareSpec.backwardTiles = true;
  const long long tiles = codegen::kdaTileFloats(spec) +
                          codegen::kdaBackwardTileFloats(spec),
                  grads = codegen::kdaGradientTileFloats(spec);
  Strides sk{(long long)T * H * K, H * K, K},
      sv{(long long)T * H * V, H * V, V}, sb{(long long)T * H, H, 1};
  Forward fw{ptr(upload(f32(in.q))),
             ptr(upload(f32(in.k))),
             ptr(upload(f32(in.v))),
             ptr(upload(f32(in.g))),
             ptr(upload(f32(in.beta))),
             ptr(upload(f32(in.initialState))),
             ptr(upload(std::vector<float>(B * T * H * V))),
             nullptr,
             ptr(upload(std::vector<float>(size_t(N) * sequences * K * V))),
             ptr(upload(std::vector<float>(size_t(N) * sequences * tiles))),
             sk,
             sk,
             sv,
             sk,
             sb,
             sv,
             B,
             T,
             H,
             static_cast<float>(scale)};
  DevicePtr dq = upload(std::vector<float>(B * T * H * K, NAN)),
            dk = upload(std::vector<float>(B * T * H * K, NAN)),
            dv = upload(std::vector<float>(B * T * H * V, NAN)),
            dg = upload(std::vector<float>(B * T * H * K, NAN)),
            db = upload(std::vector<float>(B * T * H, NAN)),
            ds0 = upload(std::vector<float>(B * H * K * V, NAN));
  Backward bw{fw,
              ptr(upload(f32(dO))),
              ptr(upload(f32(dS))),
              ptr(dq),
              ptr(dk),
              ptr(dv),
              ptr(dg),
              ptr(db),
              ptr(ds0),
              ptr(upload(std::vector<float>(size_t(N) * sequences * grads))),
              sv,
              sk,
              sk,
              sv,
              sk,
              sb};

  // The emitted kernels, called with their flat argument lists.
  auto kernel = [&](codegen::KdaStage stage, const codegen::KdaKernelSpec &of) {
    auto emitted = codegen::emitKdaKernel(of, stage);
    return build(emitted.entry, emitted.source);
  };
  auto pushStrides = [](ArgPack &args, const Strides &s) {
    args.push(s.batch).push(s.time).push(s.head);
  };
  // Every entry starts with the forward's arguments.
  auto pushForward = [&](ArgPack &args) {
    args.push(fw.q).push(fw.k).push(fw.v).push(fw.g).push(fw.beta);
    args.push(fw.initialState).push(fw.output).push(fw.finalState);
    args.push(fw.boundaries).push(fw.workspace);
    for (const Strides *s :
         {&fw.q_s, &fw.k_s, &fw.v_s, &fw.g_s, &fw.beta_s, &fw.output_s})
      pushStrides(args, *s);
    args.push(fw.batch).push(fw.length).push(fw.heads).push(fw.scale);
  };
  ArgPack forwardArgs, backwardArgs;
  pushForward(forwardArgs);
  pushForward(backwardArgs);
  backwardArgs.push(bw.dOutput).push(bw.dFinalState).push(bw.dq).push(bw.dk);
  backwardArgs.push(bw.dv).push(bw.dg).push(bw.dbeta).push(bw.dInitialState);
  backwardArgs.push(bw.scratch);
  for (const Strides *s :
       {&bw.dOutput_s, &bw.dq_s, &bw.dk_s, &bw.dv_s, &bw.dg_s, &bw.dbeta_s})
    pushStrides(backwardArgs, *s);

  const unsigned vBlocks = (V + VB - 1) / VB;
  launch(*kernel(codegen::KdaStage::Prepare, prepareSpec),
         {unsigned(N), unsigned(sequences)}, {128}, backwardArgs,
         uint32_t(mlir::rudnn::kdaPrepareSharedBytes(C, K, V, sizeof(float))));
  launch(*kernel(codegen::KdaStage::Propagate, spec),
         {unsigned(sequences), vBlocks}, {128}, forwardArgs);
  launch(*kernel(codegen::KdaStage::StateGradient, spec),
         {unsigned(sequences), vBlocks}, {128}, backwardArgs);
  launch(
      *kernel(codegen::KdaStage::Gradients, spec),
      {unsigned(N), unsigned(sequences)},
      {unsigned(codegen::kKdaGradientsThreads)}, backwardArgs,
      uint32_t(mlir::rudnn::kdaGradientsSharedBytes(C, K, V, sizeof(float))));

  auto read = [&](DevicePtr p, size_t n) {
    std::vector<float> x = download<float>(p, n);
    return std::vector<double>(x.begin(), x.end());
  };
  EXPECT_LT(reference::relativeError(read(dq, want.dq.size()), want.dq), 1e-4);
  EXPECT_LT(reference::relativeError(read(dk, want.dk.size()), want.dk), 1e-4);
  EXPECT_LT(reference::relativeError(read(dv, want.dv.size()), want.dv), 1e-4);
  EXPECT_LT(reference::relativeError(read(dg, want.dg.size()), want.dg), 1e-4);
  EXPECT_LT(reference::relativeError(read(db, want.dbeta.size()), want.dbeta),
            1e-4);
  EXPECT_LT(reference::relativeError(read(ds0, want.dInitialState.size()),
                                     want.dInitialState),
            1e-4);
}

INSTANTIATE_TEST_SUITE_P(Shapes, KdaBackwardKernelTest,
                         ::testing::Values(Case{2, 37, 2, 8, 12, 16, -1},
                                           Case{1, 64, 1, 16, 16, 32, -1},
                                           Case{2, 5, 3, 4, 4, 16, -1},
                                           Case{1, 70, 2, 16, 40, 64, -20},
                                           Case{2, 1, 2, 8, 8, 16, -1}),
                         [](const ::testing::TestParamInfo<Case> &info) {
                           const Case &c = info.param;
                           return "T" + std::to_string(c.T) + "_K" +
                                  std::to_string(c.K) + "_V" +
                                  std::to_string(c.V) + "_C" +
                                  std::to_string(c.C) +
                                  (c.gMin <= -20 ? "_steep" : "");
                         });

} // namespace

#include "runtime/compile/NvrtcCompiler.h"

#include "test/support/DeviceHeaders.h"
#include <gmock/gmock.h>

namespace {

TEST(KdaBackwardKernelNvrtc, CompilesForSm90AtTheLargestShapes) {
  NvrtcCompiler compiler(samples::deviceHeaders());
  for (int64_t features : {128, 256})
    for (codegen::KdaStage stage :
         {codegen::KdaStage::Restore, codegen::KdaStage::StateGradient,
          codegen::KdaStage::Gradients}) {
      auto kernel =
          codegen::emitKdaKernel({codegen::DType::BF16, codegen::DType::F32,
                                  codegen::DType::BF16, features, features, 64},
                                 stage);
      CudaBinary binary =
          compiler.compile({kernel.entry, kernel.source}, "sm_90");
      EXPECT_THAT(binary.ptx, ::testing::HasSubstr(".entry " + kernel.entry));
      // 16-bit inputs: every stage's products on tensor cores.
      EXPECT_THAT(binary.ptx, ::testing::HasSubstr("mma.sync.aligned"));
    }
}

} // namespace
