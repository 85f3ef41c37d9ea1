//===- BundleTest.cpp - Functions saved ahead of time and loaded back -----===//
//
// An RMSNorm function saved as a bundle (emulation and sm_90 targets) from
// a JIT context and loaded by the runtime's Bundle: the same results as
// the JIT's call, the same checks before anything runs, and damaged or
// foreign files refused.
//
//===----------------------------------------------------------------------===//

#include "runtime/Hash.h"

#include "rudnn/bundle.h"
#include "rudnn/rudnn.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
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

} // namespace
