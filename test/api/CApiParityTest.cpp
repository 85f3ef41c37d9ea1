//===- CApiParityTest.cpp - Each C operator equals its C++ entry point ----===//
//
// Every operator of the C API called on the same inputs as its C++ entry
// point, on one emulation context: the results are bit-identical (a field
// read from the wrong member, or an option dropped, changes them). The
// shapes are small and uneven so that swapped dims would not fit.
//
//===----------------------------------------------------------------------===//

#include "lib/capi/CApi.h"

#include "rudnn/rudnn.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

using namespace rudnn;

namespace {

/// A tensor of the context's memory, owning its buffer.
struct Tensor {
  std::shared_ptr<DeviceBuffer> buffer;
  TensorView view;

  /// The C view of `view` (its arrays stay owned here).
  rudnn_tensor_t c() const {
    return {view.data, static_cast<rudnn_dtype_t>(view.dtype),
            static_cast<int32_t>(view.rank()), view.shape.data(),
            view.strides.data()};
  }
};

class CApiNumerics : public ::testing::Test {
protected:
  void SetUp() override {
    rudnn_context_options_t options{
        RUDNN_BACKEND_EMULATION, 0, "", nullptr, nullptr, nullptr};
    ASSERT_EQ(rudnn_context_create(&options, &c), RUDNN_STATUS_OK)
        << rudnn_last_error();
  }
  void TearDown() override {
    EXPECT_EQ(rudnn_context_destroy(c), RUDNN_STATUS_OK);
  }

  Context &cxx() { return c->context; }

  /// Uniform values in [low, high), or the given ones, as `dtype`.
  Tensor tensor(std::vector<int64_t> shape, float low = -1, float high = 1,
                DType dtype = DType::F32) {
    int64_t count = 1;
    for (int64_t size : shape)
      count *= size;
    std::vector<unsigned char> bytes(count * dtypeSize(dtype));
    std::uniform_real_distribution<float> uniform(low, high);
    for (int64_t i = 0; i < count; ++i) {
      if (dtype == DType::I32) {
        int32_t value = static_cast<int32_t>(uniform(generator));
        std::memcpy(&bytes[i * 4], &value, 4);
      } else {
        float value = uniform(generator);
        std::memcpy(&bytes[i * 4], &value, 4);
      }
    }
    return upload(bytes, dtype, std::move(shape));
  }

  Tensor ints(std::vector<int32_t> values) {
    std::vector<unsigned char> bytes(values.size() * 4);
    std::memcpy(bytes.data(), values.data(), bytes.size());
    return upload(bytes, DType::I32, {static_cast<int64_t>(values.size())});
  }

  Tensor zeros(std::vector<int64_t> shape, DType dtype = DType::F32) {
    int64_t count = 1;
    for (int64_t size : shape)
      count *= size;
    return upload(std::vector<unsigned char>(count * dtypeSize(dtype)), dtype,
                  std::move(shape));
  }

  /// A tensor shaped like `other`, holding zeros.
  Tensor zerosLike(const Tensor &other) {
    return upload(std::vector<unsigned char>(other.buffer->size()),
                  other.view.dtype, other.view.shape);
  }

  /// A copy of `other`'s contents in a buffer of its own.
  Tensor copyOf(const Tensor &other) {
    return upload(bytes(other), other.view.dtype, other.view.shape);
  }

  std::vector<unsigned char> bytes(const Tensor &tensor) {
    std::vector<unsigned char> host(tensor.buffer->size());
    cxx().copyToHost(host.data(), tensor.buffer->data(), host.size());
    cxx().synchronize();
    return host;
  }

  /// Each of `cxxResults` equals its twin in `cResults`, byte for byte.
  void expectSame(const std::vector<const Tensor *> &cxxResults,
                  const std::vector<const Tensor *> &cResults) {
    ASSERT_EQ(cxxResults.size(), cResults.size());
    for (size_t i = 0; i < cxxResults.size(); ++i) {
      std::vector<unsigned char> a = bytes(*cxxResults[i]),
                                 b = bytes(*cResults[i]);
      EXPECT_EQ(a, b) << "result " << i << " differs";
      EXPECT_NE(a, std::vector<unsigned char>(a.size()))
          << "result " << i << " is all zero";
    }
  }

  static void expectOk(rudnn_status_t status) {
    EXPECT_EQ(status, RUDNN_STATUS_OK) << rudnn_last_error();
  }

  /// The C backward `run` of `forward` from dO: its dq, dk and dv must be
  /// the C++ call's `gradients`, byte for byte.
  template <typename BackwardCall, typename ForwardCall>
  void expectSameBackward(rudnn_status_t (*run)(rudnn_context_t,
                                                const BackwardCall *,
                                                rudnn_stream_t),
                          const ForwardCall &forward, const Tensor &dO,
                          const Tensor &dq, const Tensor &dk,
                          const Tensor &dv) {
    Tensor dq2 = zerosLike(dq), dk2 = zerosLike(dk), dv2 = zerosLike(dv);
    rudnn_tensor_t cdO = dO.c(), cdq = dq2.c(), cdk = dk2.c(), cdv = dv2.c();
    BackwardCall backward{};
    backward.forward = forward;
    backward.d_output = &cdO;
    backward.dq = &cdq, backward.dk = &cdk, backward.dv = &cdv;
    expectOk(run(c, &backward, nullptr));
    expectSame({&dq, &dk, &dv}, {&dq2, &dk2, &dv2});
  }

  rudnn_context_t c = nullptr;
  std::mt19937 generator{2026};

private:
  Tensor upload(const std::vector<unsigned char> &bytes, DType dtype,
                std::vector<int64_t> shape) {
    auto buffer = std::make_shared<DeviceBuffer>(cxx(), bytes.size());
    cxx().copyToDevice(buffer->data(), bytes.data(), bytes.size());
    return {buffer,
            TensorView::contiguous(buffer->data(), dtype, std::move(shape))};
  }
};

TEST_F(CApiNumerics, KdaForwardAndBackward) {
  const int64_t B = 1, T = 21, H = 2, K = 4, V = 6;
  Tensor q = tensor({B, T, H, K}), k = tensor({B, T, H, K}),
         v = tensor({B, T, H, V}), g = tensor({B, T, H, K}, -0.4f, 0),
         beta = tensor({B, T, H}, 0, 1), s0 = tensor({B, H, K, V});
  KdaOptions options;
  options.chunk = 16;
  options.scale = 0.3f;
  KdaSavedShapes saved = kdaSavedShapes(
      cxx(), {q.view, k.view, v.view, g.view, beta.view, s0.view}, options);
  // Outputs start equal (zero): words a kernel leaves alone compare too.
  Tensor o = zeros({B, T, H, V}), sN = zeros({B, H, K, V}),
         bounds = zeros(saved.boundaries), tiles = zeros(saved.tiles);
  Tensor o2 = zerosLike(o), sN2 = zerosLike(sN), bounds2 = zerosLike(bounds),
         tiles2 = zerosLike(tiles);
  kdaForward(cxx(), {q.view, k.view, v.view, g.view, beta.view, s0.view},
             {o.view, sN.view, bounds.view, tiles.view}, options);
  rudnn_tensor_t cq = q.c(), ck = k.c(), cv = v.c(), cg = g.c(),
                 cbeta = beta.c(), cs0 = s0.c(), co = o2.c(), csN = sN2.c(),
                 cbounds = bounds2.c(), ctiles = tiles2.c();
  rudnn_kda_forward_call_t forward{};
  forward.q = &cq, forward.k = &ck, forward.v = &cv, forward.g = &cg;
  forward.beta = &cbeta, forward.initial_state = &cs0;
  forward.output = &co, forward.final_state = &csN;
  forward.boundaries = &cbounds, forward.tiles = &ctiles;
  forward.scale = 0.3f, forward.chunk = 16;
  expectOk(rudnn_kda_forward(c, &forward, nullptr));
  expectSame({&o, &sN, &bounds, &tiles}, {&o2, &sN2, &bounds2, &tiles2});

  Tensor dO = tensor({B, T, H, V}), dsN = tensor({B, H, K, V});
  Tensor dq = zeros({B, T, H, K}), dk = zeros({B, T, H, K}),
         dv = zeros({B, T, H, V}), dg = zeros({B, T, H, K}),
         dbeta = zeros({B, T, H}), ds0 = zeros({B, H, K, V});
  Tensor dq2 = zerosLike(dq), dk2 = zerosLike(dk), dv2 = zerosLike(dv),
         dg2 = zerosLike(dg), dbeta2 = zerosLike(dbeta), ds02 = zerosLike(ds0);
  kdaBackward(cxx(),
              {{q.view, k.view, v.view, g.view, beta.view, s0.view},
               dO.view,
               dsN.view,
               bounds.view,
               tiles.view},
              {dq.view, dk.view, dv.view, dg.view, dbeta.view, ds0.view},
              options);
  rudnn_tensor_t cdO = dO.c(), cdsN = dsN.c(), cdq = dq2.c(), cdk = dk2.c(),
                 cdv = dv2.c(), cdg = dg2.c(), cdbeta = dbeta2.c(),
                 cds0 = ds02.c(), csavedBounds = bounds.c(),
                 csavedTiles = tiles.c();
  rudnn_kda_backward_call_t backward{};
  backward.forward = forward;
  backward.forward.boundaries = &csavedBounds;
  backward.forward.tiles = &csavedTiles;
  backward.d_output = &cdO, backward.d_final_state = &cdsN;
  backward.dq = &cdq, backward.dk = &cdk, backward.dv = &cdv;
  backward.dg = &cdg, backward.dbeta = &cdbeta;
  backward.d_initial_state = &cds0;
  expectOk(rudnn_kda_backward(c, &backward, nullptr));
  expectSame({&dq, &dk, &dv, &dg, &dbeta, &ds0},
             {&dq2, &dk2, &dv2, &dg2, &dbeta2, &ds02});
}

TEST_F(CApiNumerics, KdaPackedWithTransformsForwardAndBackward) {
  // Two packed sequences, the gate from raw projections, q and k
  // normalised inside, beta as logits: every field the C call gained.
  const int64_t T = 13, H = 2, K = 4, V = 6;
  Tensor q = tensor({1, T, H, K}), k = tensor({1, T, H, K}),
         v = tensor({1, T, H, V}), g = tensor({1, T, H, K}),
         beta = tensor({1, T, H}), aLog = tensor({H}), dtBias = tensor({H, K}),
         offsets = ints({0, 5, T});
  KdaOptions options;
  options.scale = 0.4f;
  options.qkL2Norm = options.betaLogits = true;
  options.gateLowerBound = -4.0f;
  Tensor o = zeros({1, T, H, V}), sN = zeros({2, H, K, V});
  Tensor o2 = zerosLike(o), sN2 = zerosLike(sN);
  const KdaForwardInputs in{q.view,       k.view,    v.view,
                            g.view,       beta.view, std::nullopt,
                            offsets.view, aLog.view, dtBias.view};
  kdaForward(cxx(), in, {o.view, sN.view, std::nullopt, std::nullopt}, options);
  rudnn_tensor_t cq = q.c(), ck = k.c(), cv = v.c(), cg = g.c(),
                 cbeta = beta.c(), ccu = offsets.c(), caLog = aLog.c(),
                 cdtBias = dtBias.c(), co = o2.c(), csN = sN2.c();
  rudnn_kda_forward_call_t forward{};
  forward.q = &cq, forward.k = &ck, forward.v = &cv, forward.g = &cg;
  forward.beta = &cbeta, forward.cu_seqlens = &ccu;
  forward.a_log = &caLog, forward.dt_bias = &cdtBias;
  forward.output = &co, forward.final_state = &csN;
  forward.scale = 0.4f;
  forward.transforms = {1, 1, -4.0f};
  expectOk(rudnn_kda_forward(c, &forward, nullptr));
  expectSame({&o, &sN}, {&o2, &sN2});

  Tensor dO = tensor({1, T, H, V});
  Tensor dq = zeros({1, T, H, K}), dk = zerosLike(dq), dv = zerosLike(dO),
         dg = zerosLike(dq), dbeta = zeros({1, T, H}), daLog = zeros({H}),
         ddtBias = zeros({H, K});
  Tensor dq2 = zerosLike(dq), dk2 = zerosLike(dk), dv2 = zerosLike(dv),
         dg2 = zerosLike(dg), dbeta2 = zerosLike(dbeta),
         daLog2 = zerosLike(daLog), ddtBias2 = zerosLike(ddtBias);
  kdaBackward(cxx(), {in, dO.view, std::nullopt, std::nullopt, std::nullopt},
              {dq.view, dk.view, dv.view, dg.view, dbeta.view, std::nullopt,
               daLog.view, ddtBias.view},
              options);
  rudnn_tensor_t cdO = dO.c(), cdq = dq2.c(), cdk = dk2.c(), cdv = dv2.c(),
                 cdg = dg2.c(), cdbeta = dbeta2.c(), cdaLog = daLog2.c(),
                 cddtBias = ddtBias2.c();
  rudnn_kda_backward_call_t backward{};
  backward.forward = forward;
  backward.d_output = &cdO;
  backward.dq = &cdq, backward.dk = &cdk, backward.dv = &cdv;
  backward.dg = &cdg, backward.dbeta = &cdbeta;
  backward.d_a_log = &cdaLog, backward.d_dt_bias = &cddtBias;
  expectOk(rudnn_kda_backward(c, &backward, nullptr));
  expectSame({&dq, &dk, &dv, &dg, &dbeta, &daLog, &ddtBias},
             {&dq2, &dk2, &dv2, &dg2, &dbeta2, &daLog2, &ddtBias2});
}

TEST_F(CApiNumerics, KdaDecodeUpdatesThePoolInPlace) {
  const int64_t B = 2, H = 2, K = 4, V = 6, P = 3;
  Tensor q = tensor({B, 1, H, K}), k = tensor({B, 1, H, K}),
         v = tensor({B, 1, H, V}), g = tensor({B, 1, H, K}, -0.4f, 0),
         beta = tensor({B, 1, H}, 0, 1), pool = tensor({P, H, K, V}),
         slots = ints({2, 0});
  Tensor pool2 = copyOf(pool), o = zeros({B, 1, H, V}), o2 = zerosLike(o);
  Tensor status = zeros({B}, DType::I32), status2 = zerosLike(status);
  KdaOptions options;
  options.scale = 0.35f;
  options.qkL2Norm = true;
  kdaDecode(cxx(),
            {q.view, k.view, v.view, g.view, beta.view, pool.view, slots.view},
            {o.view, status.view}, options);
  rudnn_tensor_t cq = q.c(), ck = k.c(), cv = v.c(), cg = g.c(),
                 cbeta = beta.c(), cpool = pool2.c(), cslots = slots.c(),
                 co = o2.c(), cstatus = status2.c();
  rudnn_kda_decode_call_t call{};
  call.q = &cq, call.k = &ck, call.v = &cv, call.g = &cg, call.beta = &cbeta;
  call.state_pool = &cpool, call.slots = &cslots;
  call.output = &co, call.status = &cstatus;
  call.scale = 0.35f;
  call.transforms.qk_l2norm = 1;
  expectOk(rudnn_kda_decode(c, &call, nullptr));
  expectSame({&o, &pool}, {&o2, &pool2});
  EXPECT_EQ(bytes(status), bytes(status2));
  // A missing required field is named.
  call.slots = nullptr;
  EXPECT_EQ(rudnn_kda_decode(c, &call, nullptr), RUDNN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(rudnn_last_error()).find("slots"), std::string::npos)
      << rudnn_last_error();
}

TEST_F(CApiNumerics, AttentionForwardAndBackward) {
  const int64_t B = 2, T = 5, S = 9, H = 2, G = 1, D = 8, E = 6;
  Tensor q = tensor({B, T, H, D}), k = tensor({B, S, G, D}),
         v = tensor({B, S, G, E}), lengths = ints({7, 9});
  AttentionOptions options;
  options.scale = 0.4f;
  options.windowLeft = 5, options.windowRight = 1;
  options.softcap = 3;
  Tensor o = zeros({B, T, H, E}), lse = zeros({B, H, T});
  Tensor o2 = zerosLike(o), lse2 = zerosLike(lse), slopes = tensor({B, H});
  attentionForward(cxx(),
                   {q.view, k.view, v.view, lengths.view, {}, slopes.view},
                   {o.view, lse.view}, options);
  rudnn_tensor_t cq = q.c(), ck = k.c(), cv = v.c(), clengths = lengths.c(),
                 cslopes = slopes.c(), co = o2.c(), clse = lse2.c();
  rudnn_attention_call_t forward{};
  forward.q = &cq, forward.k = &ck, forward.v = &cv;
  forward.key_lengths = &clengths, forward.alibi_slopes = &cslopes;
  forward.o = &co, forward.lse = &clse;
  forward.options.scale = 0.4f;
  forward.options.local_window = 1;
  forward.options.window_left = 5, forward.options.window_right = 1;
  forward.options.softcap = 3;
  expectOk(rudnn_attention_forward(c, &forward, nullptr));
  expectSame({&o, &lse}, {&o2, &lse2});

  Tensor dO = tensor({B, T, H, E});
  Tensor dq = zeros({B, T, H, D}), dk = zeros({B, S, G, D}),
         dv = zeros({B, S, G, E});
  attentionBackward(cxx(),
                    {{q.view, k.view, v.view, lengths.view, {}, slopes.view},
                     o.view,
                     lse.view,
                     dO.view},
                    {dq.view, dk.view, dv.view}, options);
  expectSameBackward(rudnn_attention_backward, forward, dO, dq, dk, dv);
}

TEST_F(CApiNumerics, VarlenAttentionForwardAndBackward) {
  const int64_t T = 9, S = 11, H = 2, G = 1, D = 8, E = 4;
  Tensor q = tensor({T, H, D}), k = tensor({S, G, D}), v = tensor({S, G, E}),
         cuQ = ints({0, 4, 9}), cuK = ints({0, 5, 11});
  AttentionOptions options;
  options.causal = true;
  Tensor o = zeros({T, H, E}), lse = zeros({H, T});
  Tensor o2 = zerosLike(o), lse2 = zerosLike(lse), slopes = tensor({H});
  attentionVarlenForward(
      cxx(), {q.view, k.view, v.view, cuQ.view, cuK.view, slopes.view},
      {o.view, lse.view}, options);
  rudnn_tensor_t cq = q.c(), ck = k.c(), cv = v.c(), ccuQ = cuQ.c(),
                 ccuK = cuK.c(), cslopes = slopes.c(), co = o2.c(),
                 clse = lse2.c();
  rudnn_attention_varlen_call_t forward{};
  forward.q = &cq, forward.k = &ck, forward.v = &cv;
  forward.cu_seqlens_q = &ccuQ, forward.cu_seqlens_k = &ccuK;
  forward.alibi_slopes = &cslopes;
  forward.o = &co, forward.lse = &clse;
  forward.options.causal = 1;
  expectOk(rudnn_attention_varlen_forward(c, &forward, nullptr));
  expectSame({&o, &lse}, {&o2, &lse2});

  Tensor dO = tensor({T, H, E});
  Tensor dq = zeros({T, H, D}), dk = zeros({S, G, D}), dv = zeros({S, G, E});
  attentionVarlenBackward(
      cxx(),
      {{q.view, k.view, v.view, cuQ.view, cuK.view, slopes.view},
       o.view,
       lse.view,
       dO.view},
      {dq.view, dk.view, dv.view}, options);
  expectSameBackward(rudnn_attention_varlen_backward, forward, dO, dq, dk, dv);
}

TEST_F(CApiNumerics, KvCacheAttention) {
  const int64_t B = 2, T = 2, H = 2, G = 1, S = 16, D = 8, E = 4;
  Tensor q = tensor({B, T, H, D}), k = tensor({B, T, G, D}),
         v = tensor({B, T, G, E}), kCache = tensor({B, S, G, D}),
         vCache = tensor({B, S, G, E}), lengths = ints({3, 15}),
         leftpad = ints({1, 0}), slopes = tensor({B, H}, 0.1f, 0.5f),
         rows = ints({1, 0}), cos = tensor({S, 3}), sin = tensor({S, 3});
  // Each call appends to a cache of its own.
  Tensor kCache2 = copyOf(kCache), vCache2 = copyOf(vCache);
  KvCacheOptions options;
  options.scale = 0.5f;
  options.splits = 2;
  options.causal = false;
  options.windowLeft = 3, options.windowRight = 1;
  options.softcap = 4.f;
  options.rotaryInterleaved = true;
  Tensor o = zeros({B, T, H, E}), lse = zeros({B, H, T}),
         status = tensor({B}, 5, 6, DType::I32);
  Tensor o2 = zerosLike(o), lse2 = zerosLike(lse), status2 = copyOf(status);
  kvCacheAttention(cxx(),
                   {q.view,
                    k.view,
                    v.view,
                    kCache.view,
                    vCache.view,
                    {},
                    lengths.view,
                    leftpad.view,
                    slopes.view,
                    rows.view,
                    cos.view,
                    sin.view},
                   {o.view, lse.view, status.view}, options);
  rudnn_tensor_t cq = q.c(), ck = k.c(), cv = v.c(), ckCache = kCache2.c(),
                 cvCache = vCache2.c(), clengths = lengths.c(), co = o2.c(),
                 clse = lse2.c(), cstatus = status2.c(), cleftpad = leftpad.c(),
                 cslopes = slopes.c(), crows = rows.c(), ccos = cos.c(),
                 csin = sin.c();
  rudnn_kv_cache_call_t call{};
  call.q = &cq, call.k = &ck, call.v = &cv;
  call.k_cache = &ckCache, call.v_cache = &cvCache;
  call.cache_lengths = &clengths;
  call.o = &co, call.lse = &clse, call.status = &cstatus;
  call.scale = 0.5f, call.splits = 2;
  call.cache_leftpad = &cleftpad, call.alibi_slopes = &cslopes;
  call.non_causal = 1, call.softcap = 4.f;
  call.local_window = 1, call.window_left = 3, call.window_right = 1;
  call.cache_batch_idx = &crows, call.rotary_cos = &ccos,
  call.rotary_sin = &csin;
  call.rotary_interleaved = 1;
  expectOk(rudnn_kv_cache_attention(c, &call, nullptr));
  // Entry 1 is refused (15 + 2 > 16): status 1 there, 0 for entry 0.
  expectSame({&o, &lse, &kCache, &vCache}, {&o2, &lse2, &kCache2, &vCache2});
  EXPECT_EQ(bytes(status), bytes(status2));
}

TEST_F(CApiNumerics, BidirectionalLstm) {
  const int64_t T = 4, B = 2, I = 3, H = 5, L = 2, D = 2;
  Tensor x = tensor({B, T, I}), h0 = tensor({L * D, B, H}),
         c0 = tensor({L * D, B, H}), lengths = ints({4, 2});
  std::map<std::string, Tensor> weights;
  for (int64_t layer = 0; layer < L; ++layer)
    for (std::string suffix : {"", "_reverse"}) {
      const std::string l = std::to_string(layer) + suffix;
      const int64_t in = layer == 0 ? I : D * H;
      weights.emplace("weight_ih_l" + l, tensor({4 * H, in}, -0.4f, 0.4f));
      weights.emplace("weight_hh_l" + l, tensor({4 * H, H}, -0.4f, 0.4f));
      weights.emplace("bias_ih_l" + l, tensor({4 * H}, -0.4f, 0.4f));
      weights.emplace("bias_hh_l" + l, tensor({4 * H}, -0.4f, 0.4f));
    }
  LstmOptions options;
  options.numLayers = L;
  options.bidirectional = options.batchFirst = true;
  options.allowTf32 = false;
  LstmInputs inputs{x.view, h0.view, c0.view, {}, lengths.view};
  std::vector<rudnn_named_tensor_t> cWeights;
  for (const auto &[name, weight] : weights) {
    inputs.weights.emplace(name, weight.view);
    cWeights.push_back({name.c_str(), weight.c()});
  }
  Tensor out = zeros({B, T, D * H}), hN = zeros({L * D, B, H}),
         cN = zeros({L * D, B, H});
  Tensor out2 = zerosLike(out), hN2 = zerosLike(hN), cN2 = zerosLike(cN);
  lstmForward(cxx(), inputs, {out.view, hN.view, cN.view, {}}, options);
  rudnn_tensor_t cx = x.c(), ch0 = h0.c(), cc0 = c0.c(), clengths = lengths.c(),
                 cout = out2.c(), chN = hN2.c(), ccN = cN2.c();
  rudnn_lstm_call_t call{};
  call.x = &cx, call.h0 = &ch0, call.c0 = &cc0;
  call.weights = cWeights.data(), call.weight_count = cWeights.size();
  call.lengths = &clengths;
  call.out = &cout, call.h_n = &chN, call.c_n = &ccN;
  call.num_layers = L, call.bidirectional = 1, call.batch_first = 1;
  // Exact fp32 products asked for both ways (TF32 unless asked, whose
  // results would differ).
  call.allow_tf32 = RUDNN_NO;
  expectOk(rudnn_lstm_forward(c, &call, nullptr));
  expectSame({&out, &hN, &cN}, {&out2, &hN2, &cN2});

  // Training: the forward saves, the backward takes it, both ways.
  Tensor hidden = zeros({L, T, B, D * H}), cells = zeros({L * D, T, B, H});
  Tensor hidden2 = zerosLike(hidden), cells2 = zerosLike(cells);
  lstmForward(cxx(), inputs,
              {out.view, {}, {}, LstmSaved{hidden.view, cells.view, {}}},
              options);
  rudnn_tensor_t chidden = hidden2.c(), ccells = cells2.c();
  call.hidden = &chidden, call.cells = &ccells;
  expectOk(rudnn_lstm_forward(c, &call, nullptr));
  expectSame({&hidden, &cells}, {&hidden2, &cells2});
  Tensor dOut = tensor({B, T, D * H}), dHN = tensor({L * D, B, H});
  Tensor dX = zeros({B, T, I}), dX2 = zerosLike(dX), dC0 = zerosLike(c0),
         dC02 = zerosLike(c0), dW = zerosLike(weights.at("weight_hh_l1")),
         dW2 = zerosLike(dW);
  lstmBackward(cxx(), inputs, {hidden.view, cells.view, {}},
               {dOut.view, dHN.view, {}},
               {dX.view, {}, dC0.view, {{"d_weight_hh_l1", dW.view}}}, options);
  rudnn_tensor_t cdOut = dOut.c(), cdHN = dHN.c(), cdX = dX2.c(),
                 cdC0 = dC02.c();
  const rudnn_named_tensor_t cdW[] = {{"d_weight_hh_l1", dW2.c()}};
  rudnn_lstm_backward_call_t backward{};
  backward.x = &cx, backward.h0 = &ch0, backward.c0 = &cc0;
  backward.weights = cWeights.data(), backward.weight_count = cWeights.size();
  backward.lengths = &clengths;
  backward.num_layers = L, backward.bidirectional = 1, backward.batch_first = 1;
  backward.allow_tf32 = RUDNN_NO;
  backward.hidden = &chidden, backward.cells = &ccells;
  backward.d_out = &cdOut, backward.d_h_n = &cdHN;
  backward.d_x = &cdX, backward.d_c0 = &cdC0;
  backward.d_weights = cdW, backward.d_weight_count = 1;
  expectOk(rudnn_lstm_backward(c, &backward, nullptr));
  expectSame({&dX, &dC0, &dW}, {&dX2, &dC02, &dW2});
  backward.cells = nullptr;
  EXPECT_EQ(rudnn_lstm_backward(c, &backward, nullptr),
            RUDNN_STATUS_INVALID_ARGUMENT);

  cWeights.push_back(cWeights.front());
  call.weight_count = cWeights.size(), call.weights = cWeights.data();
  EXPECT_EQ(rudnn_lstm_forward(c, &call, nullptr),
            RUDNN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(rudnn_last_error()).find("repeats the weight"),
            std::string::npos)
      << rudnn_last_error();
}

TEST_F(CApiNumerics, GruForwardAndBackward) {
  const int64_t T = 4, B = 2, I = 3, H = 5;
  Tensor x = tensor({T, B, I}), h0 = tensor({2, B, H}), lengths = ints({3, 4});
  std::map<std::string, Tensor> weights;
  for (std::string suffix : {"", "_reverse"}) {
    weights.emplace("weight_ih_l0" + suffix, tensor({3 * H, I}, -0.4f, 0.4f));
    weights.emplace("weight_hh_l0" + suffix, tensor({3 * H, H}, -0.4f, 0.4f));
    weights.emplace("bias_ih_l0" + suffix, tensor({3 * H}, -0.4f, 0.4f));
    weights.emplace("bias_hh_l0" + suffix, tensor({3 * H}, -0.4f, 0.4f));
  }
  GruOptions options;
  options.bidirectional = true;
  GruInputs inputs{x.view, h0.view, {}, lengths.view};
  std::vector<rudnn_named_tensor_t> cWeights;
  for (const auto &[name, weight] : weights) {
    inputs.weights.emplace(name, weight.view);
    cWeights.push_back({name.c_str(), weight.c()});
  }
  Tensor out = zeros({T, B, 2 * H}), hN = zeros({2, B, H}),
         hidden = zeros({1, T, B, 2 * H}), gates = zeros({2, T, B, 4 * H});
  Tensor out2 = zerosLike(out), hN2 = zerosLike(hN),
         hidden2 = zerosLike(hidden), gates2 = zerosLike(gates);
  gruForward(cxx(), inputs,
             {out.view, hN.view, GruSaved{hidden.view, gates.view}}, options);
  rudnn_tensor_t cx = x.c(), ch0 = h0.c(), clengths = lengths.c(),
                 cout = out2.c(), chN = hN2.c(), chidden = hidden2.c(),
                 cgates = gates2.c();
  rudnn_gru_call_t call{};
  call.x = &cx, call.h0 = &ch0, call.lengths = &clengths;
  call.weights = cWeights.data(), call.weight_count = cWeights.size();
  call.out = &cout, call.h_n = &chN, call.bidirectional = 1;
  call.hidden = &chidden, call.gates = &cgates;
  expectOk(rudnn_gru_forward(c, &call, nullptr));
  expectSame({&out, &hN, &hidden, &gates}, {&out2, &hN2, &hidden2, &gates2});

  Tensor dOut = tensor({T, B, 2 * H}), dX = zeros({T, B, I}),
         dX2 = zerosLike(dX), dH0 = zerosLike(h0), dH02 = zerosLike(h0),
         dB = zeros({3 * H}), dB2 = zerosLike(dB);
  gruBackward(cxx(), inputs, {hidden.view, gates.view}, {dOut.view, {}},
              {dX.view, dH0.view, {{"d_bias_hh_l0_reverse", dB.view}}},
              options);
  rudnn_tensor_t cdOut = dOut.c(), cdX = dX2.c(), cdH0 = dH02.c();
  const rudnn_named_tensor_t cdB[] = {{"d_bias_hh_l0_reverse", dB2.c()}};
  rudnn_gru_backward_call_t backward{};
  backward.x = &cx, backward.h0 = &ch0, backward.lengths = &clengths;
  backward.weights = cWeights.data(), backward.weight_count = cWeights.size();
  backward.bidirectional = 1;
  backward.hidden = &chidden, backward.gates = &cgates;
  backward.d_out = &cdOut, backward.d_x = &cdX, backward.d_h0 = &cdH0;
  backward.d_weights = cdB, backward.d_weight_count = 1;
  expectOk(rudnn_gru_backward(c, &backward, nullptr));
  expectSame({&dX, &dH0, &dB}, {&dX2, &dH02, &dB2});

  // A GRU has no cell state: the LSTM's fields for it are refused by name.
  call.c_n = &chN;
  EXPECT_EQ(rudnn_gru_forward(c, &call, nullptr),
            RUDNN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(rudnn_last_error()).find("call->c_n"),
            std::string::npos)
      << rudnn_last_error();
  backward.d_c0 = &cdH0;
  EXPECT_EQ(rudnn_gru_backward(c, &backward, nullptr),
            RUDNN_STATUS_INVALID_ARGUMENT);
}

TEST_F(CApiNumerics, NormalisationsForwardAndBackward) {
  const int64_t N = 3, C = 37;
  Tensor x = tensor({N, C}), residual = tensor({N, C}), gamma = tensor({C}),
         beta = tensor({C});
  Tensor y = zeros({N, C}), mean = zeros({N}), rstd = zeros({N}),
         h = zeros({N, C});
  Tensor y2 = zerosLike(y), mean2 = zerosLike(mean), rstd2 = zerosLike(rstd),
         h2 = zerosLike(h);
  layerNorm(cxx(), {x.view, residual.view, gamma.view, beta.view},
            {y.view, mean.view, rstd.view, h.view}, 1e-3f);
  rudnn_tensor_t cx = x.c(), cresidual = residual.c(), cgamma = gamma.c(),
                 cbeta = beta.c(), cy = y2.c(), cmean = mean2.c(),
                 crstd = rstd2.c(), ch = h2.c();
  rudnn_norm_call_t call{};
  call.x = &cx, call.residual = &cresidual, call.gamma = &cgamma;
  call.beta = &cbeta, call.y = &cy, call.mean = &cmean, call.rstd = &crstd;
  call.h = &ch, call.eps = 1e-3f;
  expectOk(rudnn_layer_norm(c, &call, nullptr));
  expectSame({&y, &mean, &rstd, &h}, {&y2, &mean2, &rstd2, &h2});

  Tensor dy = tensor({N, C});
  Tensor dx = zeros({N, C}), dgamma = zeros({C}), dbeta = zeros({C});
  Tensor dx2 = zerosLike(dx), dgamma2 = zerosLike(dgamma),
         dbeta2 = zerosLike(dbeta);
  layerNormBackward(cxx(), {dy.view, x.view, mean.view, rstd.view, gamma.view},
                    {dx.view, dgamma.view, dbeta.view});
  rudnn_tensor_t cdy = dy.c(), csavedMean = mean.c(), csavedRstd = rstd.c(),
                 cdx = dx2.c(), cdgamma = dgamma2.c(), cdbeta = dbeta2.c();
  rudnn_norm_backward_call_t backward{};
  backward.dy = &cdy, backward.x = &cx, backward.mean = &csavedMean;
  backward.rstd = &csavedRstd, backward.gamma = &cgamma;
  backward.dx = &cdx, backward.dgamma = &cdgamma, backward.dbeta = &cdbeta;
  expectOk(rudnn_layer_norm_backward(c, &backward, nullptr));
  expectSame({&dx, &dgamma, &dbeta}, {&dx2, &dgamma2, &dbeta2});

  // RMSNorm, its backward, and the moments, on the same rows.
  Tensor ry = zeros({N, C}), rrstd = zeros({N});
  Tensor ry2 = zerosLike(ry), rrstd2 = zerosLike(rrstd);
  rmsNorm(cxx(), {x.view, {}, gamma.view, {}}, {ry.view, rrstd.view, {}},
          1e-4f);
  rudnn_tensor_t cry = ry2.c(), crrstd = rrstd2.c();
  rudnn_norm_call_t rms{};
  rms.x = &cx, rms.gamma = &cgamma, rms.y = &cry, rms.rstd = &crrstd;
  rms.eps = 1e-4f;
  expectOk(rudnn_rms_norm(c, &rms, nullptr));
  expectSame({&ry, &rrstd}, {&ry2, &rrstd2});

  Tensor rdx = zeros({N, C}), rdgamma = zeros({C});
  Tensor rdx2 = zerosLike(rdx), rdgamma2 = zerosLike(rdgamma);
  rmsNormBackward(cxx(), {dy.view, x.view, {}, rrstd.view, gamma.view},
                  {rdx.view, rdgamma.view, {}});
  rudnn_tensor_t csavedRms = rrstd.c(), crdx = rdx2.c(),
                 crdgamma = rdgamma2.c();
  rudnn_norm_backward_call_t rmsBackward{};
  rmsBackward.dy = &cdy, rmsBackward.x = &cx, rmsBackward.rstd = &csavedRms;
  rmsBackward.gamma = &cgamma, rmsBackward.dx = &crdx;
  rmsBackward.dgamma = &crdgamma;
  expectOk(rudnn_rms_norm_backward(c, &rmsBackward, nullptr));
  expectSame({&rdx, &rdgamma}, {&rdx2, &rdgamma2});

  Tensor mmean = zeros({N}), var = zeros({N});
  Tensor mmean2 = zerosLike(mmean), var2 = zerosLike(var);
  moments(cxx(), x.view, {mmean.view, var.view});
  rudnn_tensor_t cmmean = mmean2.c(), cvar = var2.c();
  expectOk(rudnn_moments(c, &cx, &cmmean, &cvar, nullptr));
  expectSame({&mmean, &var}, {&mmean2, &var2});
}

} // namespace
