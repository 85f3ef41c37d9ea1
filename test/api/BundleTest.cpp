//===- BundleTest.cpp - Functions saved ahead of time and loaded back -----===//
//
// An RMSNorm function saved as a bundle (emulation and sm_90 targets) from
// a JIT context and loaded by the runtime's Bundle: the same results as
// the JIT's call, the same checks before anything runs, and damaged or
// foreign files refused.
//
//===----------------------------------------------------------------------===//

#include "runtime/cache/Hash.h"
#include "runtime/support/Base64.h"

#include "rudnn/bundle.h"
#include "rudnn/rudnn.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>

using namespace rudnn;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

constexpr const char *kRmsNorm = R"mlir(
func.func @main(%x: tensor<?x40xf32> {rudnn.name = "x"},
                %gamma: tensor<40xf32> {rudnn.name = "gamma"})
    -> (tensor<?x40xf32> {rudnn.name = "y"}, tensor<?xf32> {rudnn.name = "rstd"}) {
  %y, %rstd, %h = rudnn.rms_norm %x gamma %gamma eps 1.0e-06
      : (tensor<?x40xf32>, tensor<40xf32>)
      -> (tensor<?x40xf32>, tensor<?xf32>, tensor<?x40xf32>)
  return %y, %rstd : tensor<?x40xf32>, tensor<?xf32>
}
)mlir";

std::string readText(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

void writeText(const fs::path &path, const std::string &text) {
  std::ofstream(path, std::ios::binary) << text;
}

class BundleTest : public ::testing::Test {
protected:
  void SetUp() override {
    dir = fs::temp_directory_path() /
          ("rudnn-bundle-" + std::to_string(::getpid()) + "-" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir);
    fs::create_directories(dir);
    ContextOptions options;
    options.backend = BackendKind::Emulation;
    options.cacheDirectory = "";
    context = std::make_unique<Context>(options);
    function = std::make_unique<Function>(
        Module::parse(*context, kRmsNorm).function("main"));
    path = (dir / "rms.bundle").string();
    function->saveBundle(path, {"emulation", "sm_90"});
  }
  void TearDown() override { fs::remove_all(dir); }

  BundleOptions emulation() {
    BundleOptions options;
    options.backend = "emulation";
    return options;
  }

  /// `values` in `bundle`'s memory as f32 of `shape`.
  TensorView upload(Bundle &bundle, const std::vector<float> &values,
                    std::vector<int64_t> shape) {
    void *data = bundle.allocate(values.size() * 4);
    owned.emplace_back(&bundle, data);
    bundle.copyToDevice(data, values.data(), values.size() * 4);
    return TensorView::contiguous(data, DType::F32, std::move(shape));
  }
  std::vector<float> download(Bundle &bundle, const TensorView &view) {
    std::vector<float> values(view.numel());
    bundle.copyToHost(values.data(), view.data, values.size() * 4);
    bundle.synchronize();
    return values;
  }
  void releaseAll() {
    for (auto [bundle, data] : owned)
      bundle->release(data);
    owned.clear();
  }

  /// A bundle file whose content is changed by `edit`, checksummed again.
  fs::path edited(const std::function<void(nlohmann::json &)> &edit) {
    nlohmann::json outer = nlohmann::json::parse(readText(path));
    nlohmann::json content =
        nlohmann::json::parse(outer["content"].get<std::string>());
    edit(content);
    const std::string body = content.dump();
    char sum[17];
    std::snprintf(sum, sizeof(sum), "%016llx",
                  static_cast<unsigned long long>(runtime::hash64(body)));
    const fs::path changed = dir / "edited.bundle";
    writeText(changed,
              nlohmann::json{{"checksum", sum}, {"content", body}}.dump());
    return changed;
  }

  /// A bundle file whose plan for `target` is changed by `edit`.
  fs::path editedPlan(const std::string &target,
                      const std::function<void(nlohmann::json &)> &edit) {
    return edited([&](nlohmann::json &content) {
      nlohmann::json plan =
          nlohmann::json::parse(content["targets"][target].get<std::string>());
      edit(plan);
      content["targets"][target] = plan.dump();
    });
  }

  fs::path dir;
  std::string path;
  std::unique_ptr<Context> context;
  std::unique_ptr<Function> function;
  std::vector<std::pair<Bundle *, void *>> owned;
};

TEST_F(BundleTest, RunsAsTheJitDoesAndChecksItsCalls) {
  Bundle bundle = Bundle::load(path, emulation());
  EXPECT_EQ(bundle.function(), "main");
  EXPECT_THAT(bundle.targets(), ElementsAre("emulation", "sm_90"));
  EXPECT_EQ(bundle.target(), "emulation");
  ASSERT_EQ(bundle.arguments().size(), 2u);
  EXPECT_EQ(bundle.arguments()[0].name, "x");
  EXPECT_EQ(bundle.arguments()[0].layout, "NC");

  std::mt19937 random(11);
  std::normal_distribution<float> normal;
  const int64_t N = 7;
  std::vector<float> x(N * 40), gamma(40);
  for (float &value : x)
    value = normal(random);
  for (float &value : gamma)
    value = 1 + 0.1f * normal(random);
  TensorView vx = upload(bundle, x, {N, 40}),
             vgamma = upload(bundle, gamma, {40});
  EXPECT_EQ(bundle.resultShapes({vx, vgamma}),
            (std::vector<std::vector<int64_t>>{{N, 40}, {N}}));
  TensorView y = upload(bundle, std::vector<float>(N * 40), {N, 40}),
             rstd = upload(bundle, std::vector<float>(N), {N});
  bundle.call({vx, vgamma}, {y, rstd});

  // The JIT's call on the same data, in its own memory.
  DeviceBuffer jx(*context, x.size() * 4), jgamma(*context, 160),
      jy(*context, x.size() * 4), jrstd(*context, N * 4);
  context->copyToDevice(jx.data(), x.data(), x.size() * 4);
  context->copyToDevice(jgamma.data(), gamma.data(), 160);
  function->call({TensorView::contiguous(jx.data(), DType::F32, {N, 40}),
                  TensorView::contiguous(jgamma.data(), DType::F32, {40})},
                 {TensorView::contiguous(jy.data(), DType::F32, {N, 40}),
                  TensorView::contiguous(jrstd.data(), DType::F32, {N})});
  std::vector<float> want(x.size());
  context->copyToHost(want.data(), jy.data(), want.size() * 4);
  context->synchronize();
  const std::vector<float> got = download(bundle, y);
  EXPECT_EQ(got, want);
  EXPECT_NE(got, std::vector<float>(got.size(), 0));

  // Refused before anything runs, naming the tensor; nothing written.
  const std::vector<float> before = download(bundle, y);
  TensorView shortRstd = rstd;
  shortRstd.shape = {N - 1};
  EXPECT_THAT(
      [&] {
        bundle.call({vx, vgamma}, {y, shortRstd});
      },
      ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("rstd")));
  TensorView wrongType = vgamma;
  wrongType.dtype = DType::BF16;
  EXPECT_THAT(
      [&] {
        bundle.call({vx, wrongType}, {y, rstd});
      },
      ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("gamma")));
  EXPECT_THAT(
      [&] {
        bundle.call({vx, vgamma}, {vx, rstd});
      },
      ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("'y'")));
  EXPECT_THROW(bundle.call({vx}, {y, rstd}), InvalidArgument);
  EXPECT_EQ(download(bundle, y), before);
  releaseAll();
}

TEST_F(BundleTest, DamagedForeignOrUnfitFilesAreRefused) {
  std::string text = readText(path);
  text[text.size() / 2] ^= 1;
  writeText(dir / "damaged.bundle", text);
  EXPECT_THAT(
      [&] { Bundle::load((dir / "damaged.bundle").string(), emulation()); },
      ::testing::ThrowsMessage<InvalidArgument>(
          ::testing::AnyOf(HasSubstr("checksum"), HasSubstr("not a bundle"))));
  EXPECT_THAT(
      [&] {
        Bundle::load(edited([](auto &c) { c["rudnn"] = "0.0.1"; }).string(),
                     emulation());
      },
      ::testing::ThrowsMessage<InvalidArgument>(
          HasSubstr("made by rudnn 0.0.1")));
  EXPECT_THAT(
      [&] {
        Bundle::load(edited([](auto &c) { c["format_version"] = 2; }).string(),
                     emulation());
      },
      ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("format version 2")));
  EXPECT_THAT(
      [&] {
        Bundle::load(
            edited([](auto &c) { c["targets"].erase("emulation"); }).string(),
            emulation());
      },
      ::testing::ThrowsMessage<Unsupported>(
          HasSubstr("holds sm_90, not emulation")));
  EXPECT_THAT(
      [&] { Bundle::load((dir / "absent").string(), emulation()); },
      ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("cannot read")));

  // A target that is not one writes nothing.
  const std::string other = (dir / "other.bundle").string();
  EXPECT_THROW(function->saveBundle(other, {"emulation", "gfx90a"}),
               InvalidArgument);
  EXPECT_FALSE(fs::exists(other));
}

using Json = nlohmann::json;

/// An edit of a bundle's content and a fragment of the error it must give.
struct Damage {
  std::function<void(Json &)> edit;
  std::string error;
};

/// An edit of one target's plan and a fragment of the error it must give.
struct PlanDamage {
  std::string target;
  std::function<void(Json &)> edit;
  std::string error;
};

// Each hand-edited bundle (its checksum made right again) is refused at load
// with InvalidArgument naming the file and what is wrong, never a crash or a
// bundle a call then indexes past its lists with.
TEST_F(BundleTest, MalformedContentIsRefusedNamingWhatIsWrong) {
  const std::vector<Damage> damages = {
      // A layout longer than the shape (read past the shape by resultShapes).
      {[](Json &c) { c["arguments"][0]["layout"] = "NCX"; },
       "argument #0 'x' has layout 'NCX' of 3 letters for rank 2"},
      {[](Json &c) { c["arguments"][0]["shape"] = {-1}; },
       "argument #0 'x' has layout 'NC' of 2 letters for rank 1"},
      {[](Json &c) { c["results"][1]["layout"] = "NN"; },
       "result #1 'rstd' has layout 'NN' of 2 letters for rank 1"},
      {[](Json &c) { c["arguments"][0]["layout"] = "N?"; },
       "argument #0 'x' has layout 'N?': a layout is one letter per dim"},
      // Negative dims.
      {[](Json &c) { c["arguments"][1]["shape"] = {-2}; },
       "argument #1 'gamma' has dim 0 of size -2: a size is at least 0, or -1 "
       "where it is dynamic"},
      {[](Json &c) {
         c["results"][0]["shape"] = {-1, -40};
       },
       "result #0 'y' has dim 1 of size -40"},
      // A contract's rank against the tensor bound to it.
      {[](Json &c) {
         c["operators"][0]["contract"]["operands"][2]["layout"] = "NC";
       },
       "operator #0 (rudnn.rms_norm): argument 'gamma' has rank 1, but "
       "'gamma' is laid out as 'NC' (rank 2)"},
      {[](Json &c) {
         c["operators"][0]["contract"]["results"][1]["layout"] = "NC";
       },
       "operator #0 (rudnn.rms_norm): result 'rstd' has rank 1, but 'rstd' "
       "is laid out as 'NC' (rank 2)"},
      // Out-of-range bindings.
      {[](Json &c) {
         c["operators"][0]["operand_argument"] = {0, -1, 7};
       },
       "operator #0 (rudnn.rms_norm): operand 'gamma' binds argument #7, the "
       "function has 2"},
      {[](Json &c) {
         c["operators"][0]["operand_argument"] = {-5, -1, 1};
       },
       "operand 'x' binds argument #-5, the function has 2"},
      {[](Json &c) {
         c["operators"][0]["result_of"] = {0, 9, -1};
       },
       "result 'rstd' binds result #9, the function has 2"},
      {[](Json &c) {
         c["operators"][0]["operand_argument"] = {0, -1};
       },
       "operator #0 (rudnn.rms_norm): its bindings do not match its contract"},
      {[](Json &c) {
         c["operators"][0]["operand_argument"] = {-1, -1, 1};
       },
       "operand 'x' is required, but binds no argument"},
      // Missing fields.
      {[](Json &c) { c["arguments"][0].erase("layout"); },
       "malformed: [json.exception.out_of_range.403] key 'layout' not found"},
      {[](Json &c) { c.erase("operators"); }, "key 'operators' not found"},
      {[](Json &c) { c.erase("arguments"); }, "key 'arguments' not found"},
      {[](Json &c) { c["operators"][0]["contract"].erase("dims"); },
       "key 'dims' not found"},
      {[](Json &c) { c["arguments"] = Json::object(); },
       "malformed: 'arguments' is not a list"},
      // Names, element types, static sizes.
      {[](Json &c) { c["results"][1]["name"] = "y"; },
       "two results are named 'y'"},
      {[](Json &c) { c["arguments"][1]["name"] = ""; },
       "argument #1 is named '': a name is not empty"},
      {[](Json &c) { c["results"][0]["name"] = "x"; },
       "result 'x' is named as an argument it does not update"},
      {[](Json &c) { c["results"][0]["updates"] = "q"; },
       "result 'y' updates 'q', which names no argument"},
      {[](Json &c) {
         c["in_place"] = Json::array({Json::array({"y", "q"})});
       },
       "the in-place pair ('y', 'q') names no result 'y' or no argument 'q'"},
      {[](Json &c) { c["arguments"][0]["dtype"] = "f64"; },
       "unknown element type 'f64'"},
      {[](Json &c) { c["arguments"][0]["dtype"] = "i32"; },
       "operator #0 (rudnn.rms_norm): argument 'x' is i32, but 'x' is f32, "
       "f16 or bf16"},
      {[](Json &c) { c["arguments"][1]["dtype"] = "f16"; },
       "argument 'gamma' is f16, but 'gamma' is as 'x', which is f32"},
      {[](Json &c) { c["arguments"][1]["shape"] = {41}; },
       "operator #0 (rudnn.rms_norm): argument 'gamma' dim 0 (C) of size 41 "
       "differs from argument 'x' (40)"},
      {[](Json &c) { c["operators"][0]["contract"]["dims"][1]["max"] = 30; },
       "argument 'x' dim 1 (C) of size 40 is outside 1 to 30"},
      // Relaxed shapes: nothing would hold a call to the size the kernels
      // were compiled for.
      {[](Json &c) {
         c["arguments"][0]["shape"] = {-1, -1};
         c["arguments"][1]["shape"] = {-1};
         c["results"][0]["shape"] = {-1, -1};
       },
       "operator #0 (rudnn.rms_norm): static dim C (features) has a size in "
       "no argument or result"},
      {[](Json &c) {
         c["operators"][0]["contract"]["operands"][0]["sample"] = 99;
       },
       "an out-of-range rule 99"},
      {[](Json &c) { c["arguments"][0]["align"] = 24; },
       "argument #0 'x' promises 24-byte alignment"},
      {[](Json &c) { c["targets"]["gfx90a"] = c["targets"]["emulation"]; },
       "a target is named 'gfx90a': expected emulation or sm_XY"},
  };
  for (const Damage &damage : damages) {
    const std::string changed = edited(damage.edit).string();
    const std::string prefix = "bundle '" + changed + "': ";
    EXPECT_THAT([&] { Bundle::load(changed, emulation()); },
                ::testing::ThrowsMessage<InvalidArgument>(::testing::AllOf(
                    ::testing::StartsWith(prefix), HasSubstr(damage.error))))
        << damage.error;
  }
}

TEST_F(BundleTest, MalformedPlansAreRefusedInEveryTarget) {
  // The launch's first buffer and parameter arguments.
  auto argOf = [](Json &plan, const char *kind) -> Json & {
    for (Json &arg : plan["launches"][0]["args"])
      if (arg["kind"] == kind)
        return arg;
    throw std::runtime_error(std::string("no ") + kind + " argument");
  };
  const std::vector<PlanDamage> damages = {
      // Indices past the plan's buffers, parameters and kernels.
      {"emulation", [&](Json &p) { argOf(p, "buffer")["index"] = 99; },
       "target 'emulation': launch #0 binds buffer #99, the plan has 4"},
      {"emulation", [&](Json &p) { argOf(p, "param_i64")["index"] = 42; },
       "target 'emulation': launch #0 binds parameter #42, the plan has 4"},
      {"emulation", [](Json &p) { p["param_sources"][1]["buffer"] = 17; },
       "target 'emulation': parameter 'N' has a source outside the plan's "
       "argument and result buffers"},
      {"emulation", [](Json &p) { p["param_sources"][1]["index"] = 5; },
       "target 'emulation': parameter 'N' reads dim 5 of 'x', which has "
       "rank 2"},
      {"emulation", [](Json &p) { p["param_sources"] = Json::array(); },
       "target 'emulation': its plan does not say where its parameters come "
       "from"},
      // A kernel binary reference out of range, in the target in use and in
      // one that is not.
      {"emulation", [](Json &p) { p["launches"][0]["kernel"] = 3; },
       "target 'emulation': launch #0 uses kernel #3, the plan has 1"},
      {"sm_90", [](Json &p) { p["launches"][0]["kernel"] = 1; },
       "target 'sm_90': launch #0 uses kernel #1, the plan has 1"},
      {"emulation", [](Json &p) { p["kernels"][0]["binary_base64"] = ""; },
       "has no entry or no binary"},
      // Buffers bound by name to no tensor, or the wrong way round.
      {"emulation", [](Json &p) { p["buffers"][0]["name"] = "zz"; },
       "target 'emulation': buffer 'zz' names no argument or result"},
      {"emulation", [](Json &p) { p["buffers"][0]["access"] = "out"; },
       "target 'emulation': buffer 'x' is written, but is an argument"},
      {"emulation", [](Json &p) { p["buffers"][3]["access"] = "in"; },
       "target 'emulation': buffer 'rstd' is read, but is a result"},
      // Launch shapes no device has.
      {"emulation",
       [](Json &p) {
         p["launches"][0]["block"] = {100000, 1, 1};
       },
       "launch #0 has a block of 100000 x 1 x 1 threads (at most 1024)"},
      {"emulation",
       [](Json &p) { p["launches"][0]["dynamic_shared_bytes"] = 1 << 30; },
       "launch #0 asks for 1073741824 bytes of shared memory"},
      // Missing fields.
      {"emulation", [](Json &p) { p.erase("launches"); },
       "target 'emulation': malformed plan JSON: "
       "[json.exception.out_of_range.403] key 'launches' not found"},
      {"sm_90", [](Json &p) { p["kernels"][0].erase("binary_base64"); },
       "target 'sm_90': malformed plan JSON"},
  };
  for (const PlanDamage &damage : damages) {
    const std::string changed = editedPlan(damage.target, damage.edit).string();
    const std::string prefix = "bundle '" + changed + "': ";
    EXPECT_THAT([&] { Bundle::load(changed, emulation()); },
                ::testing::ThrowsMessage<InvalidArgument>(::testing::AllOf(
                    ::testing::StartsWith(prefix), HasSubstr(damage.error))))
        << damage.error;
  }
}

// A kernel binary is opened at the first call that launches it, after that
// call's checks: loading a bundle and a refused call open none.
TEST_F(BundleTest, KernelBinariesLoadOnlyAfterTheCallsChecks) {
  const std::string junk = editedPlan("emulation", [](Json &plan) {
                             plan["kernels"][0]["binary_base64"] =
                                 runtime::encodeBase64("not a kernel object");
                           }).string();
  Bundle bundle = Bundle::load(junk, emulation());
  const int64_t N = 3;
  TensorView x = upload(bundle, std::vector<float>(N * 40, 1), {N, 40}),
             gamma = upload(bundle, std::vector<float>(40, 1), {40}),
             y = upload(bundle, std::vector<float>(N * 40), {N, 40}),
             rstd = upload(bundle, std::vector<float>(N), {N});
  TensorView shortRstd = rstd;
  shortRstd.shape = {N - 1};
  EXPECT_THAT(
      [&] {
        bundle.call({x, gamma}, {y, shortRstd});
      },
      ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("'rstd'")));
  EXPECT_THAT(
      [&] {
        bundle.call({x, gamma}, {y, rstd});
      },
      ::testing::ThrowsMessage<InvalidArgument>(
          HasSubstr("not an emulated kernel object")));
  releaseAll();
}

// A replaced binary's constructor runs when the binary is opened: not at
// load, not for a call its checks refuse.
TEST_F(BundleTest, AReplacedKernelRunsNothingBeforeTheChecksPass) {
  const fs::path source = dir / "replaced.cpp", object = dir / "replaced.so";
  writeText(source, "#include <cstdlib>\n"
                    "__attribute__((constructor)) static void opened() {\n"
                    "  setenv(\"RUDNN_BUNDLE_TEST_OPENED\", \"1\", 1);\n"
                    "}\n");
  const std::string command = "c++ -shared -fPIC -o '" + object.string() +
                              "' '" + source.string() + "'";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  ::unsetenv("RUDNN_BUNDLE_TEST_OPENED");
  const std::string replaced = editedPlan("emulation", [&](Json &plan) {
                                 plan["kernels"][0]["binary_base64"] =
                                     runtime::encodeBase64(readText(object));
                               }).string();

  Bundle bundle = Bundle::load(replaced, emulation());
  EXPECT_EQ(std::getenv("RUDNN_BUNDLE_TEST_OPENED"), nullptr);
  const int64_t N = 3;
  TensorView x = upload(bundle, std::vector<float>(N * 40, 1), {N, 40}),
             gamma = upload(bundle, std::vector<float>(40, 1), {40}),
             y = upload(bundle, std::vector<float>(N * 40), {N, 40}),
             rstd = upload(bundle, std::vector<float>(N), {N});
  EXPECT_THROW(bundle.call({x, gamma}, {x, rstd}), InvalidArgument);
  EXPECT_THROW(bundle.resultShapes({x}), InvalidArgument);
  EXPECT_EQ(std::getenv("RUDNN_BUNDLE_TEST_OPENED"), nullptr);
  // A call whose checks pass opens it (and finds no kernel in it).
  EXPECT_THAT(
      [&] {
        bundle.call({x, gamma}, {y, rstd});
      },
      ::testing::ThrowsMessage<InvalidArgument>(HasSubstr("has no entry")));
  EXPECT_NE(std::getenv("RUDNN_BUNDLE_TEST_OPENED"), nullptr);
  ::unsetenv("RUDNN_BUNDLE_TEST_OPENED");
  releaseAll();
}

} // namespace
