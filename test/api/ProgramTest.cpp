//===- ProgramTest.cpp - rudnn IR functions called from C++ ---------------===//
//
// The Program API in emulation: a module's function inspected, called on
// views against the float64 reference at odd sizes, compiled once whatever
// its dynamic dims, refusing bad calls by the names of their tensors, and
// called from two threads at once.
//
//===----------------------------------------------------------------------===//

#include "lib/reference/kda/KdaReference.h"
#include "test/support/KdaProblem.h"

#include "rudnn/rudnn.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <thread>

using namespace rudnn;
using ::testing::HasSubstr;

namespace {

// K = 8, V = 4, f32; batch, length and heads dynamic.
const char *const kKdaModule = R"mlir(
func.func @main(%q: tensor<?x?x?x8xf32> {rudnn.name = "q"},
                %k: tensor<?x?x?x8xf32> {rudnn.name = "k"},
                %v: tensor<?x?x?x4xf32> {rudnn.name = "v"},
                %g: tensor<?x?x?x8xf32> {rudnn.name = "g"},
                %beta: tensor<?x?x?xf32> {rudnn.name = "beta"},
                %s0: tensor<?x?x8x4xf32> {rudnn.name = "s0"})
    -> (tensor<?x?x?x4xf32> {rudnn.name = "o"},
        tensor<?x?x8x4xf32> {rudnn.name = "state"}) {
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta initial_state %s0 chunk 16
      : (tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x4xf32>,
         tensor<?x?x?x8xf32>, tensor<?x?x?xf32>, tensor<?x?x8x4xf32>)
      -> (tensor<?x?x?x4xf32>, tensor<?x?x8x4xf32>)
  return %o, %s : tensor<?x?x?x4xf32>, tensor<?x?x8x4xf32>
}
)mlir";

ContextOptions emulation() {
  ContextOptions options;
  options.backend = BackendKind::Emulation;
  options.cacheDirectory = "";
  return options;
}

/// Host data in f32 device memory, and back.
struct Tensor {
  Tensor(Context &context, const std::vector<double> &values,
         std::vector<int64_t> shape)
      : buffer(context, std::max<size_t>(1, values.size()) * 4) {
    std::vector<float> data(values.begin(), values.end());
    if (!data.empty())
      context.copyToDevice(buffer.data(), data.data(), data.size() * 4);
    view = TensorView::contiguous(buffer.data(), DType::F32, std::move(shape));
  }
  std::vector<double> read(Context &context) const {
    std::vector<float> data(view.numel());
    context.copyToHost(data.data(), view.data, data.size() * 4);
    context.synchronize();
    return {data.begin(), data.end()};
  }
  DeviceBuffer buffer;
  TensorView view;
};

/// One call's tensors at (B, T, H), drawn as real callers provide them.
struct Call {
  Call(Context &context, int64_t B, int64_t T, int64_t H, unsigned seed)
      : shape{B, T, H, 8, 4},
        in(test::randomKdaInputs(shape, -1, true, false, seed)),
        q(context, in.q, {B, T, H, 8}), k(context, in.k, {B, T, H, 8}),
        v(context, in.v, {B, T, H, 4}), g(context, in.g, {B, T, H, 8}),
        beta(context, in.beta, {B, T, H}),
        s0(context, in.initialState, {B, H, 8, 4}),
        o(context, std::vector<double>(B * T * H * 4, NAN), {B, T, H, 4}),
        state(context, std::vector<double>(B * H * 32, NAN), {B, H, 8, 4}) {}

  std::vector<TensorView> arguments() const {
    return {q.view, k.view, v.view, g.view, beta.view, s0.view};
  }
  std::vector<TensorView> results() const { return {o.view, state.view}; }

  /// The worst relative error of o and the state against float64.
  double error(Context &context) const {
    reference::KdaOutputs want =
        reference::kdaForward(shape, in, 1 / std::sqrt(8.0), 16);
    return std::max(test::relativeError(o.read(context), want.output),
                    test::relativeError(state.read(context), want.finalState));
  }

  reference::KdaShape shape;
  reference::KdaInputs in;
  Tensor q, k, v, g, beta, s0, o, state;
};

TEST(Program, InspectsArgumentsAndResults) {
  Context context(emulation());
  Module module = Module::parse(context, kKdaModule);
  EXPECT_EQ(module.functions(), std::vector<std::string>{"main"});
  Function main = module.function("main");
  ASSERT_EQ(main.arguments().size(), 6u);
  const TensorInfo &s0 = main.arguments()[5];
  EXPECT_EQ(s0.name, "s0");
  EXPECT_EQ(s0.role, "initial_state");
  EXPECT_EQ(s0.layout, "BHKV");
  EXPECT_EQ(s0.dtype, DType::F32);
  EXPECT_EQ(s0.shape, (std::vector<int64_t>{-1, -1, 8, 4}));
  ASSERT_EQ(main.results().size(), 2u);
  EXPECT_EQ(main.results()[0].name, "o");
  EXPECT_EQ(main.results()[0].role, "output");
  EXPECT_EQ(main.results()[1].role, "final_state");
  EXPECT_THROW(module.function("missing"), InvalidArgument);
}

TEST(Program, CallsMatchFloat64AndCompileOnce) {
  Context context(emulation());
  Function main = Module::parse(context, kKdaModule).function("main");
  unsigned seed = 1;
  for (auto [B, T, H] : {std::tuple{2, 37, 3}, std::tuple{1, 1, 2},
                         std::tuple{3, 16, 1}, std::tuple{1, 70, 2}}) {
    Call call(context, B, T, H, seed++);
    main.call(call.arguments(), call.results());
    EXPECT_LT(call.error(context), 1e-4)
        << "B = " << B << ", T = " << T << ", H = " << H;
  }
  const Counters counters = context.counters();
  EXPECT_EQ(counters.planCacheMisses, 1u);
  EXPECT_EQ(counters.planCacheHits, 3u);
  const uint64_t compiled = counters.kernelsCompiled;
  Call again(context, 2, 50, 2, 9);
  main.call(again.arguments(), again.results());
  EXPECT_EQ(context.counters().kernelsCompiled, compiled);
}

TEST(Program, BadCallsNameTheTensorAndWriteNothing) {
  Context context(emulation());
  Function main = Module::parse(context, kKdaModule).function("main");
  Call call(context, 2, 5, 3, 4);
  auto expectRejected = [&](std::vector<TensorView> arguments,
                            std::vector<TensorView> results,
                            const std::string &needle) {
    EXPECT_THAT([&] { main.call(arguments, results); },
                ::testing::ThrowsMessage<InvalidArgument>(HasSubstr(needle)));
    for (double x : call.o.read(context))
      ASSERT_TRUE(std::isnan(x)) << "an output was written for " << needle;
  };
  std::vector<TensorView> arguments = call.arguments();
  arguments.pop_back();
  expectRejected(arguments, call.results(), "expected 6 arguments, got 5");

  arguments = call.arguments();
  arguments[1].dtype = DType::BF16;
  expectRejected(arguments, call.results(), "'k' must be f32, got bf16");

  arguments = call.arguments();
  arguments[0].shape[3] = 9;
  expectRejected(arguments, call.results(), "'q' dim 3 must be 8");

  arguments = call.arguments();
  arguments[2].shape[1] = 4; // v shorter than q: the contract's T
  arguments[2].strides =
      TensorView::contiguous(nullptr, DType::F32, arguments[2].shape).strides;
  expectRejected(arguments, call.results(), "'v' must have shape [2, 5, 3, 4]");

  std::vector<TensorView> results = call.results();
  results[1] = call.arguments()[0]; // the state over q
  results[1].shape = {2, 3, 8, 4};
  results[1].strides = {96, 32, 4, 1};
  expectRejected(call.arguments(), results, "'final_state' overlaps 'q'");
}

// `rudnn.align = 16` on q, k and v: the plan's kernels copy their rows
// without an element-wise path, and each call checks the promise before
// anything runs.
TEST(Program, AlignmentPromisesAreKeptOrTheCallIsRefused) {
  std::string text = kKdaModule;
  for (const char *name : {"\"q\"", "\"k\"", "\"v\""}) {
    const std::string from = std::string("rudnn.name = ") + name + "}";
    text.replace(text.find(from), from.size(),
                 std::string("rudnn.name = ") + name +
                     ", rudnn.align = 16 : i64}");
  }
  Context context(emulation());
  context.setProfiling(true);
  Function main = Module::parse(context, text).function("main");
  EXPECT_EQ(main.arguments()[0].align, 16);
  EXPECT_EQ(main.arguments()[3].align, 0);
  Call call(context, 2, 37, 3, 5);
  main.call(call.arguments(), call.results());
  EXPECT_LT(call.error(context), 1e-4);
  bool aligned = false;
  for (const KernelProfile &kernel : context.profile())
    aligned |= kernel.kernel.find("_a16") != std::string::npos;
  EXPECT_TRUE(aligned) << "no kernel compiled for aligned views";

  Call bad(context, 2, 5, 3, 6);
  auto expectRefused = [&](std::vector<TensorView> arguments,
                           const std::string &needle) {
    EXPECT_THAT([&] { main.call(arguments, bad.results()); },
                ::testing::ThrowsMessage<InvalidArgument>(HasSubstr(needle)));
    for (double x : bad.o.read(context))
      ASSERT_TRUE(std::isnan(x)) << "an output was written for " << needle;
  };
  std::vector<TensorView> arguments = bad.arguments();
  arguments[0].data = static_cast<char *>(arguments[0].data) + 4;
  expectRefused(arguments, "'q' promises 16-byte aligned rows (rudnn.align = "
                           "16), but its data pointer");
  arguments = bad.arguments();
  arguments[1].strides[2] = 9; // heads 36 bytes apart
  expectRefused(arguments, "'k' promises 16-byte aligned rows (rudnn.align = "
                           "16), but its stride along dim 2 (9 elements of 4 "
                           "bytes) is not a multiple of 16 bytes");
  arguments = bad.arguments();
  arguments[2].strides[3] = 2;
  expectRefused(arguments, "its innermost stride is 2, not 1");
}

// The chunk count N = ceil(T / chunk) is a plan parameter: it fixes dim 0
// of the boundaries a call passes.
TEST(Program, SavedBoundariesHaveTheChunkCountOfTheCall) {
  Context context(emulation());
  const std::string text = R"mlir(
func.func @main(%q: tensor<?x?x?x8xf32>, %k: tensor<?x?x?x8xf32>,
                %v: tensor<?x?x?x4xf32>, %g: tensor<?x?x?x8xf32>,
                %beta: tensor<?x?x?xf32>, %s0: tensor<?x?x8x4xf32>)
    -> (tensor<?x?x?x4xf32>, tensor<?x?x8x4xf32>, tensor<?x?x?x8x4xf32>) {
  %o, %s, %b = rudnn.kda %q, %k, %v, %g, %beta initial_state %s0 chunk 16
      save_boundaries
      : (tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x4xf32>,
         tensor<?x?x?x8xf32>, tensor<?x?x?xf32>, tensor<?x?x8x4xf32>)
      -> (tensor<?x?x?x4xf32>, tensor<?x?x8x4xf32>, tensor<?x?x?x8x4xf32>)
  return %o, %s, %b
      : tensor<?x?x?x4xf32>, tensor<?x?x8x4xf32>, tensor<?x?x?x8x4xf32>
}
)mlir";
  Function main = Module::parse(context, text).function("main");
  ASSERT_EQ(main.results().size(), 3u);
  EXPECT_EQ(main.results()[2].role, "boundaries");

  Call call(context, 2, 37, 3, 21); // N = ceil(37 / 16) = 3
  Tensor right(context, std::vector<double>(3 * 2 * 3 * 32, NAN),
               {3, 2, 3, 8, 4});
  Tensor wrong(context, std::vector<double>(2 * 2 * 3 * 32, NAN),
               {2, 2, 3, 8, 4});
  std::vector<TensorView> results = call.results();
  results.push_back(wrong.view);
  EXPECT_THAT([&] { main.call(call.arguments(), results); },
              ::testing::ThrowsMessage<InvalidArgument>(
                  HasSubstr("'boundaries' must have shape [3, 2, 3, 8, 4], "
                            "got [2, 2, 3, 8, 4]")));
  results.back() = right.view;
  main.call(call.arguments(), results);
  reference::KdaOutputs want =
      reference::kdaForward(call.shape, call.in, 1 / std::sqrt(8.0), 16);
  EXPECT_LT(test::relativeError(right.read(context), want.boundaries), 1e-4);
  EXPECT_LT(call.error(context), 1e-4);
}

// Two operators chained: the second runs over the first one's output as its
// values, from the first one's final state. Both intermediates of the
// second operator live in the plan's workspace.
const char *const kChainModule = R"mlir(
func.func @chain(%q: tensor<?x?x?x8xf32>, %k: tensor<?x?x?x8xf32>,
                 %v: tensor<?x?x?x4xf32>, %g: tensor<?x?x?x8xf32>,
                 %beta: tensor<?x?x?xf32>, %s0: tensor<?x?x8x4xf32>)
    -> (tensor<?x?x?x4xf32>, tensor<?x?x?x4xf32> {rudnn.name = "o2"},
        tensor<?x?x8x4xf32>) {
  %o1, %s1 = rudnn.kda %q, %k, %v, %g, %beta initial_state %s0 chunk 16
      : (tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x4xf32>,
         tensor<?x?x?x8xf32>, tensor<?x?x?xf32>, tensor<?x?x8x4xf32>)
      -> (tensor<?x?x?x4xf32>, tensor<?x?x8x4xf32>)
  %o2, %s2 = rudnn.kda %q, %k, %o1, %g, %beta initial_state %s1 chunk 16
      : (tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x4xf32>,
         tensor<?x?x?x8xf32>, tensor<?x?x?xf32>, tensor<?x?x8x4xf32>)
      -> (tensor<?x?x?x4xf32>, tensor<?x?x8x4xf32>)
  return %o1, %o2, %s2
      : tensor<?x?x?x4xf32>, tensor<?x?x?x4xf32>, tensor<?x?x8x4xf32>
}
)mlir";

TEST(Program, FunctionsOfSeveralOperatorsPlanIntoOne) {
  Context context(emulation());
  Function chain = Module::parse(context, kChainModule).function("chain");
  ASSERT_EQ(chain.operators().size(), 2u);
  EXPECT_EQ(chain.operators()[1].op, "rudnn.kda");
  // The second reads the first one's output (value 6) and final state (7);
  // neither saves boundaries or tiles.
  EXPECT_EQ(chain.operators()[0].results, (std::vector<int>{6, 7, -1, -1}));
  EXPECT_EQ(chain.operators()[1].operands[2], 6);
  EXPECT_EQ(chain.operators()[1].operands[5], 7);
  EXPECT_EQ(chain.resultValues(), (std::vector<int>{6, 8, 9}));
  std::vector<std::string> names;
  for (const TensorInfo &result : chain.results())
    names.push_back(result.name);
  EXPECT_EQ(names, (std::vector<std::string>{"output", "o2", "final_state"}));

  unsigned seed = 21;
  for (auto [B, T, H] : {std::tuple{2, 37, 3}, std::tuple{1, 1, 2}}) {
    Call call(context, B, T, H, seed++);
    Tensor o2(context, std::vector<double>(B * T * H * 4, NAN), {B, T, H, 4});
    chain.call(call.arguments(), {call.o.view, o2.view, call.state.view});
    const double scale = 1 / std::sqrt(8.0);
    reference::KdaOutputs first =
        reference::kdaForward(call.shape, call.in, scale, 16);
    reference::KdaInputs next = call.in;
    next.v = first.output;
    next.initialState = first.finalState;
    reference::KdaOutputs second =
        reference::kdaForward(call.shape, next, scale, 16);
    EXPECT_LT(test::relativeError(call.o.read(context), first.output), 1e-4);
    EXPECT_LT(test::relativeError(o2.read(context), second.output), 1e-4)
        << "B = " << B << ", T = " << T << ", H = " << H;
    EXPECT_LT(test::relativeError(call.state.read(context), second.finalState),
              1e-4);
  }
  EXPECT_EQ(context.counters().planCacheMisses, 1u);

  // Between operators, a result may not meet an argument.
  Call call(context, 1, 20, 2, 5);
  std::vector<TensorView> results = {call.o.view, call.v.view, call.state.view};
  EXPECT_THAT([&] { chain.call(call.arguments(), results); },
              ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("'o2'")));
}

TEST(Program, OnlyOperatorOpsArePlanned) {
  Context context(emulation());
  std::string text = kKdaModule;
  text.replace(text.find("  %o, %s"), 0,
               "  %empty = tensor.empty() : tensor<2xf32>\n");
  Module module = Module::parse(context, text);
  EXPECT_THAT([&] { module.function("main"); },
              ::testing::ThrowsMessage<Unsupported>(
                  HasSubstr("'tensor.empty' is not an operator op")));
  EXPECT_THAT([&] { Module::parse(context, "func.func @f("); },
              ::testing::ThrowsMessage<InvalidArgument>(
                  HasSubstr("not valid rudnn IR")));
}

TEST(Program, OneFunctionCalledFromTwoThreads) {
  Context context(emulation());
  Function main = Module::parse(context, kKdaModule).function("main");
  Call first(context, 2, 33, 2, 11), second(context, 1, 20, 3, 12);
  std::thread a([&] {
    for (int i = 0; i < 3; ++i)
      main.call(first.arguments(), first.results());
  });
  std::thread b([&] {
    for (int i = 0; i < 3; ++i)
      main.call(second.arguments(), second.results());
  });
  a.join();
  b.join();
  EXPECT_LT(first.error(context), 1e-4);
  EXPECT_LT(second.error(context), 1e-4);
  EXPECT_EQ(context.counters().planCacheMisses, 1u);
}

} // namespace
