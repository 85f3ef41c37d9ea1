//===- PlanTest.cpp - Plans: sizes, validation, JSON, execution order -----===//

#include "runtime/plans/PlanExecutor.h"

#include "rudnn/errors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <tuple>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

using namespace rudnn;
using namespace rudnn::runtime;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

/// A two-kernel plan over parameters B, T: an argument, a result, and two
/// workspace buffers whose sizes depend on B and T.
Plan samplePlan() {
  Plan plan;
  plan.name = "sample";
  plan.params = {"B", "T"};
  // B is x's dim 0, T its dim 1.
  plan.paramSources = {{ParamSource::Kind::Dim, 0, 0, 1},
                       {ParamSource::Kind::Dim, 0, 1, 1}};
  plan.kernels = {{"first", std::string("bin\0ary-1", 9)}, {"second", "bin-2"}};
  plan.buffers = {
      {"x", BufferAccess::In, SizeExpr::of(0), SizeExpr::of(0)},
      {"y", BufferAccess::Out, SizeExpr::of(0), SizeExpr::of(0)},
      {"partials", BufferAccess::Workspace, {4, {0, 1}, 1}, SizeExpr::of(0)},
      {"states", BufferAccess::Workspace, {256, {0}, 1}, {4, {0, 1}, 1}}};
  PlanLaunch first;
  first.kernel = 0;
  first.grid[0] = {1, {1}, 64}; // ceil(T / 64)
  first.grid[1] = {1, {0}, 1};  // B
  first.block[0] = 128;
  first.dynamicSharedBytes = 65536;
  first.args = {LaunchArg::buffer(0), LaunchArg::buffer(2),
                LaunchArg::paramI32(1), LaunchArg::f32(0.125f)};
  PlanLaunch second;
  second.kernel = 1;
  second.guard = {0, 2, 1000}; // only while B is in [2, 1000]
  second.grid[0] = {3, {0}, 2};
  second.block[0] = 32;
  second.args = {LaunchArg::buffer(3), LaunchArg::buffer(1),
                 LaunchArg::paramI64(0), LaunchArg::i64(-7), LaunchArg::i32(9)};
  plan.launches = {first, second};
  return plan;
}

/// A tensor map over x ([B, T, 64] of 2-byte elements, a padded row
/// stride): dims (64, T, B) innermost first, T's stride 80 elements, B's a
/// parameter (T).
PlanTensorMap sampleTensorMap() {
  PlanTensorMap map;
  map.buffer = 0;
  map.elementBytes = 2;
  map.dims = {{-1, 64}, {1, 0}, {0, 0}};
  map.strides = {{-1, 80}, {1, 0}};
  map.box = {64, 32, 1};
  map.swizzleBytes = 128;
  return map;
}

// Parameters read from the bound views: dims (divided, rounding up) and
// strides; an unbound source buffer is named.
TEST(PlanParams, ComeFromTheBoundViews) {
  Plan plan = samplePlan();
  plan.params = {"B", "T", "N", "x_stride_time"};
  plan.paramSources = {{ParamSource::Kind::Dim, 0, 0, 1},
                       {ParamSource::Kind::Dim, 0, 1, 1},
                       {ParamSource::Kind::Dim, 1, 1, 64},
                       {ParamSource::Kind::Stride, 0, 1, 1}};
  plan.validate();
  const std::vector<int64_t> xShape = {3, 130, 8}, xStrides = {4000, 16, 1},
                             yShape = {3, 130}, yStrides = {130, 1};
  EXPECT_EQ(
      plan.paramValues({{&xShape, &xStrides}, {&yShape, &yStrides}, {}, {}}),
      (std::vector<int64_t>{3, 130, 3, 16}));
  EXPECT_THAT(
      [&] {
        plan.paramValues({{&xShape, &xStrides}, {}, {}, {}});
      },
      ::testing::ThrowsMessage<InvalidArgument>(HasSubstr(
          "reads parameter 'N' from buffer 'y', which is not bound")));
  plan.paramSources[0].buffer = 2; // a workspace
  EXPECT_THROW(plan.validate(), InvalidArgument);
}

// Only an output may alias, and only an input.
TEST(PlanBuffers, AliasesJoinAnOutputToAnInput) {
  Plan plan = samplePlan();
  plan.buffers[1].aliasOf = 0; // y over x
  plan.validate();
  plan.buffers[1].aliasOf = 2; // y over a workspace
  EXPECT_THROW(plan.validate(), InvalidArgument);
  plan.buffers[1].aliasOf = -1;
  plan.buffers[0].aliasOf = 1; // an input aliasing
  EXPECT_THROW(plan.validate(), InvalidArgument);
}

TEST(PlanSizes, EvaluateCeilingOfScaledProducts) {
  EXPECT_EQ(SizeExpr::of(5).evaluate({}), 5);
  EXPECT_EQ((SizeExpr{1, {0}, 64}).evaluate({65}), 2);
  EXPECT_EQ((SizeExpr{3, {0, 1}, 2}).evaluate({3, 5}), 23);
  EXPECT_THROW((SizeExpr{1, {2}, 1}).evaluate({1, 2}), InvalidArgument);
  EXPECT_THROW((SizeExpr{1 << 30, {0, 0}, 1}).evaluate({int64_t(1) << 20}),
               InvalidArgument);
  Plan plan = samplePlan();
  // partials: 4·B·T at 0; states: 256·B at 4·B·T.
  EXPECT_EQ(plan.workspaceBytes({2, 100}), 4u * 2 * 100 + 256 * 2);
}

TEST(PlanValidation, NamesTheFault) {
  Plan plan = samplePlan();
  plan.launches[1].kernel = 5;
  EXPECT_THAT([&] { plan.validate(); },
              ::testing::ThrowsMessage<InvalidArgument>(
                  HasSubstr("launch #1 uses kernel #5, the plan has 2")));
  plan = samplePlan();
  plan.launches[0].args[1] = LaunchArg::buffer(9);
  EXPECT_THAT([&] { plan.validate(); },
              ::testing::ThrowsMessage<InvalidArgument>(
                  HasSubstr("launch #0 binds buffer #9")));
  plan = samplePlan();
  plan.buffers[1].zeroed = true;
  EXPECT_THAT([&] { plan.validate(); },
              ::testing::ThrowsMessage<InvalidArgument>(
                  HasSubstr("buffer 'y' is zeroed but not workspace")));
  plan = samplePlan();
  plan.launches[0].guard.param = 2;
  EXPECT_THAT([&] { plan.validate(); },
              ::testing::ThrowsMessage<InvalidArgument>(
                  HasSubstr("launch #0 is guarded by parameter #2")));
  plan = samplePlan();
  plan.buffers[3].bytes.params = {4};
  EXPECT_THAT([&] { plan.validate(); },
              ::testing::ThrowsMessage<InvalidArgument>(
                  HasSubstr("size of buffer 'states' refers to parameter #4")));
  // Tensor maps: the argument's index, then the map's own rules.
  plan = samplePlan();
  plan.launches[0].args.push_back(LaunchArg::tensorMap(0));
  EXPECT_THAT([&] { plan.validate(); },
              ::testing::ThrowsMessage<InvalidArgument>(
                  HasSubstr("launch #0 binds tensor map #0, the plan has 0")));
  plan.tensorMaps = {sampleTensorMap()};
  plan.validate();
  plan.tensorMaps[0].strides.pop_back();
  EXPECT_THAT([&] { plan.validate(); },
              ::testing::ThrowsMessage<InvalidArgument>(
                  HasSubstr("tensor map #0 has rank 3 with 3 box dims and 1 "
                            "strides")));
  plan.tensorMaps = {sampleTensorMap()};
  plan.tensorMaps[0].dims[1].param = 7;
  EXPECT_THAT([&] { plan.validate(); },
              ::testing::ThrowsMessage<InvalidArgument>(
                  HasSubstr("tensor map #0 refers to parameter #7")));
  plan.tensorMaps = {sampleTensorMap()};
  plan.tensorMaps[0].box[1] = 300;
  EXPECT_THAT([&] { plan.validate(); },
              ::testing::ThrowsMessage<InvalidArgument>(
                  HasSubstr("tensor map #0 has a box dim of 300")));
  plan.tensorMaps = {sampleTensorMap()};
  plan.tensorMaps[0].swizzleBytes = 96;
  EXPECT_THAT([&] { plan.validate(); },
              ::testing::ThrowsMessage<InvalidArgument>(
                  HasSubstr("tensor map #0 has a 96-byte swizzle")));
}

void expectSamePlan(const Plan &a, const Plan &b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.params, b.params);
  EXPECT_EQ(a.paramSources, b.paramSources);
  ASSERT_EQ(a.kernels.size(), b.kernels.size());
  for (size_t i = 0; i < a.kernels.size(); ++i) {
    EXPECT_EQ(a.kernels[i].entry, b.kernels[i].entry);
    EXPECT_EQ(a.kernels[i].binary, b.kernels[i].binary);
  }
  ASSERT_EQ(a.buffers.size(), b.buffers.size());
  auto fields = [](const auto &x) {
    return std::tie(x.name, x.access, x.bytes, x.offset, x.aliasOf, x.packed,
                    x.zeroed);
  };
  for (size_t i = 0; i < a.buffers.size(); ++i)
    EXPECT_EQ(fields(a.buffers[i]), fields(b.buffers[i])) << "buffer " << i;
  ASSERT_EQ(a.launches.size(), b.launches.size());
  for (size_t i = 0; i < a.launches.size(); ++i) {
    const PlanLaunch &x = a.launches[i], &y = b.launches[i];
    EXPECT_EQ(x.kernel, y.kernel);
    for (int d = 0; d < 3; ++d) {
      EXPECT_EQ(x.grid[d], y.grid[d]);
      EXPECT_EQ(x.block[d], y.block[d]);
    }
    EXPECT_EQ(x.dynamicSharedBytes, y.dynamicSharedBytes);
    EXPECT_EQ(x.repeat, y.repeat);
    EXPECT_EQ(x.cooperative, y.cooperative);
    ASSERT_EQ(x.args.size(), y.args.size());
    for (size_t j = 0; j < x.args.size(); ++j) {
      EXPECT_EQ(x.args[j].kind, y.args[j].kind);
      EXPECT_EQ(x.args[j].index, y.args[j].index);
      EXPECT_EQ(x.args[j].intValue, y.args[j].intValue);
      uint32_t xBits, yBits; // bitwise: NaN constants must survive too
      std::memcpy(&xBits, &x.args[j].floatValue, 4);
      std::memcpy(&yBits, &y.args[j].floatValue, 4);
      EXPECT_EQ(xBits, yBits);
    }
  }
  ASSERT_EQ(a.tensorMaps.size(), b.tensorMaps.size());
  for (size_t i = 0; i < a.tensorMaps.size(); ++i) {
    const PlanTensorMap &x = a.tensorMaps[i], &y = b.tensorMaps[i];
    EXPECT_EQ(x.buffer, y.buffer);
    EXPECT_EQ(x.elementBytes, y.elementBytes);
    EXPECT_EQ(x.dims, y.dims);
    EXPECT_EQ(x.strides, y.strides);
    EXPECT_EQ(x.box, y.box);
    EXPECT_EQ(x.swizzleBytes, y.swizzleBytes);
  }
}

TEST(PlanJson, RoundTripsWithInlineBinaries) {
  Plan plan = samplePlan();
  plan.launches[1].repeat = 1;
  plan.launches[1].cooperative = true;
  // Every kind of parameter source: dims, a product of parameters, a split
  // count; packed workspace.
  plan.params.push_back("BT");
  plan.paramSources.push_back(
      {ParamSource::Kind::Size, 0, 0, 1, {4, {0, 1}, 1}});
  plan.params.push_back("S");
  plan.paramSources.push_back(
      {ParamSource::Kind::Split, 0, 0, 1, {1, {0}, 1}, 264, {1, {1}, 64}});
  plan.buffers[2].packed = true;
  plan.buffers[3].zeroed = true;
  // Every access: an output over the input x, a buffer updated in place.
  plan.buffers.push_back(
      {"x_again", BufferAccess::Out, SizeExpr::of(0), SizeExpr::of(0), 0});
  plan.buffers.push_back(
      {"cache", BufferAccess::InOut, SizeExpr::of(0), SizeExpr::of(0)});
  plan.validate();
  plan.tensorMaps = {sampleTensorMap()};
  plan.launches[0].args.push_back(LaunchArg::tensorMap(0));
  plan.launches[1].args.push_back(LaunchArg::f32(-INFINITY));
  plan.launches[1].args.push_back(LaunchArg::f32(std::nanf("")));
  plan.launches[1].args.push_back(LaunchArg::f32(1e-45f));
  for (int length : {0, 1, 2, 3, 4, 5, 255}) {
    std::string binary;
    for (int i = 0; i < length; ++i)
      binary += static_cast<char>(i * 37);
    plan.kernels[0].binary = binary;
    expectSamePlan(Plan::fromJson(plan.toJson(true)), plan);
  }
}

TEST(PlanJson, RoundTripsThroughDirectory) {
  fs::path directory =
      fs::temp_directory_path() / ("rudnn-plan-" + std::to_string(::getpid()));
  fs::remove_all(directory);
  Plan plan = samplePlan();
  plan.save(directory.string());
  EXPECT_TRUE(fs::exists(directory / "plan.json"));
  EXPECT_TRUE(fs::exists(directory / "kernel1.bin"));
  expectSamePlan(Plan::load(directory.string()), plan);

  fs::remove(directory / "kernel1.bin");
  EXPECT_THROW(Plan::load(directory.string()), InvalidArgument);
  fs::remove_all(directory);
}

TEST(PlanJson, RejectsMalformedInput) {
  EXPECT_THROW(Plan::fromJson("{"), InvalidArgument);
  EXPECT_THROW(Plan::fromJson("{\"format\": \"other\"}"), InvalidArgument);
  std::string json = samplePlan().toJson(true);
  std::string wrongVersion = json;
  wrongVersion.replace(wrongVersion.find("\"version\": 2"), 12,
                       "\"version\": 99");
  EXPECT_THAT([&] { Plan::fromJson(wrongVersion); },
              ::testing::ThrowsMessage<InvalidArgument>(
                  HasSubstr("plan format version 99")));
  std::string badBase64 = json;
  size_t at = badBase64.find("binary_base64\": \"") + 17;
  badBase64[at] = '*';
  EXPECT_THROW(Plan::fromJson(badBase64), InvalidArgument);
}

/// Records what the executor asks of a backend; device memory is host
/// memory, so addresses are real pointers.
class RecordingBackend final : public Backend {
public:
  struct Launch {
    std::string entry;
    LaunchGeometry geometry;
    StreamHandle stream = nullptr;
  };
  class Kernel final : public LoadedKernel {
  public:
    explicit Kernel(std::string entry) : name(std::move(entry)) {}
    const std::string &entry() const override { return name; }
    std::string name;
  };

  std::string name() const override { return "recording"; }
  std::string deviceDescription() const override { return "host memory"; }
  std::string compilerIdentity() const override { return "none"; }
  std::string compile(const KernelSource &kernel) const override {
    return kernel.source;
  }
  std::shared_ptr<LoadedKernel> load(const std::string &binary,
                                     const std::string &entry) override {
    loadedBinaries.push_back(binary);
    return std::make_shared<Kernel>(entry);
  }
  void launch(const LoadedKernel &kernel, const LaunchGeometry &geometry,
              ArgPack &args, StreamHandle stream) override {
    launches.push_back({kernel.entry(), geometry, stream});
    // Copy the values now: the pack dies after the launch. Arguments are read
    // with the widths the test expects (4 unless told 8).
    const std::vector<int> *widths = launches.size() <= argWidths.size()
                                         ? &argWidths[launches.size() - 1]
                                         : nullptr;
    values.push_back({});
    for (size_t i = 0; i < args.size(); ++i) {
      uint64_t raw = 0;
      size_t width = widths && (*widths)[i] == 8 ? 8 : 4;
      std::memcpy(&raw, args.pointers()[i], width);
      values.back().push_back(raw);
    }
  }
  DevicePtr allocate(size_t bytes) override {
    allocations.push_back(bytes);
    storage.push_back(std::make_unique<char[]>(bytes));
    return reinterpret_cast<DevicePtr>(storage.back().get());
  }
  void release(DevicePtr) override {
    ++releases;
    if (failReleases) // as cuMemFree does after a device fault
      throw DeviceError("cuMemFree", "CUDA_ERROR_ILLEGAL_ADDRESS");
  }
  void copyToDevice(DevicePtr, const void *, size_t, StreamHandle) override {}
  void copyToHost(void *, DevicePtr, size_t, StreamHandle) override {}
  void copyOnDevice(DevicePtr, DevicePtr, size_t, StreamHandle) override {}
  void fillZero(DevicePtr dst, size_t bytes, StreamHandle) override {
    zeroed.push_back({dst, bytes, launches.size()});
  }
  StreamHandle createStream() override {
    streams.push_back(std::make_unique<char>());
    return streams.back().get();
  }
  void destroyStream(StreamHandle stream) override {
    destroyedStreams.push_back(stream);
    if (failReleases)
      throw DeviceError("cuStreamDestroy", "CUDA_ERROR_ILLEGAL_ADDRESS");
  }
  void synchronize(StreamHandle) override {}
  /// Records the request; the map's first word marks it.
  TensorMapBytes encodeTensorMap(const TensorMapRequest &request) override {
    checkTensorMapRequest(request);
    tensorMapRequests.push_back(request);
    TensorMapBytes bytes{};
    bytes.words[0] = 0x7e57;
    return bytes;
  }

  // Graphs as CUDA has them: the default stream cannot be captured, and
  // captured launches run only when replayed.
  struct Graph final : CapturedGraph {
    std::vector<Launch> launches;
  };
  bool supportsGraphs() const override { return graphs; }
  void beginCapture(StreamHandle stream) override {
    if (!stream)
      throw InvalidArgument("the default stream cannot be captured");
    capturing = stream;
    captureStart = launches.size();
  }
  std::unique_ptr<CapturedGraph> endCapture(StreamHandle stream) override {
    EXPECT_EQ(stream, capturing);
    auto graph = std::make_unique<Graph>();
    graph->launches.assign(launches.begin() + captureStart, launches.end());
    launches.resize(captureStart);
    capturing = nullptr;
    return graph;
  }
  /// Updates `previous` in place (as cuGraphExecUpdate) when it has as many
  /// launches.
  std::unique_ptr<CapturedGraph>
  endCaptureReusing(StreamHandle stream,
                    std::unique_ptr<CapturedGraph> previous) override {
    std::unique_ptr<CapturedGraph> graph = endCapture(stream);
    auto *old = static_cast<Graph *>(previous.get());
    auto &captured = static_cast<Graph &>(*graph).launches;
    if (!old || old->launches.size() != captured.size())
      return graph;
    ++graphUpdates;
    old->launches = captured;
    return previous;
  }
  void replay(CapturedGraph &graph, StreamHandle stream) override {
    for (Launch launch : static_cast<Graph &>(graph).launches) {
      launch.stream = stream;
      replayed.push_back(launch);
    }
  }

  bool graphs = false, failReleases = false;
  int graphUpdates = 0;
  StreamHandle capturing = nullptr;
  size_t captureStart = 0;
  std::vector<Launch> replayed;
  std::vector<std::unique_ptr<char>> streams;
  std::vector<StreamHandle> destroyedStreams;

  std::vector<std::string> loadedBinaries;
  std::vector<TensorMapRequest> tensorMapRequests;
  std::vector<Launch> launches;
  // Each fill: where, how many bytes, and the launches recorded before it.
  struct Fill {
    DevicePtr dst;
    size_t bytes, launchesBefore;
  };
  std::vector<Fill> zeroed;
  std::vector<std::vector<uint64_t>> values;
  std::vector<std::vector<int>> argWidths;
  std::vector<size_t> allocations;
  std::vector<std::unique_ptr<char[]>> storage;
  int releases = 0;
};

TEST(PlanExecutor, LaunchesInOrderWithBoundArguments) {
  RecordingBackend backend;
  // Byte widths of each launch's arguments, to read them back.
  backend.argWidths = {{8, 8, 4, 4}, {8, 8, 8, 8, 4}};
  PlanExecutor executor(backend, samplePlan());
  EXPECT_EQ(backend.loadedBinaries,
            (std::vector<std::string>{std::string("bin\0ary-1", 9), "bin-2"}));

  const DevicePtr x = 0x1000, y = 0x2000;
  executor.run({x, y, 0, 0}, {3, 130}, nullptr);
  ASSERT_EQ(backend.allocations, (std::vector<size_t>{4 * 3 * 130 + 256 * 3}));
  DevicePtr workspace = reinterpret_cast<DevicePtr>(backend.storage[0].get());

  ASSERT_EQ(backend.launches.size(), 2u);
  const auto &first = backend.launches[0];
  EXPECT_EQ(first.entry, "first");
  EXPECT_EQ(first.geometry.grid.x, 3u); // ceil(130 / 64)
  EXPECT_EQ(first.geometry.grid.y, 3u); // B
  EXPECT_EQ(first.geometry.block.x, 128u);
  EXPECT_EQ(first.geometry.dynamicSharedBytes, 65536u);
  float scale;
  std::memcpy(&scale, &backend.values[0][3], sizeof(float));
  EXPECT_EQ(backend.values[0],
            (std::vector<uint64_t>{x, workspace, 130, backend.values[0][3]}));
  EXPECT_EQ(scale, 0.125f);

  const auto &second = backend.launches[1];
  EXPECT_EQ(second.entry, "second");
  EXPECT_EQ(second.geometry.grid.x, 5u); // ceil(3·3 / 2)
  EXPECT_EQ(backend.values[1],
            (std::vector<uint64_t>{workspace + 4 * 3 * 130, y, 3,
                                   static_cast<uint64_t>(int64_t(-7)), 9}));

  // A smaller call reuses the workspace; a larger one grows it. With B = 1
  // the guarded second launch does not run.
  executor.run({x, y, 0, 0}, {1, 10}, nullptr);
  EXPECT_EQ(backend.allocations.size(), 1u);
  ASSERT_EQ(backend.launches.size(), 3u);
  EXPECT_EQ(backend.launches[2].entry, "first");
  executor.run({x, y, 0, 0}, {4, 1000}, nullptr);
  EXPECT_EQ(backend.allocations.size(), 2u);
  EXPECT_EQ(backend.releases, 1);
}

// A zeroed workspace buffer is filled with zeros before the call's
// launches, at every call that gives it memory; the others never are.
TEST(PlanExecutor, ZeroesItsCountersBeforeEachCall) {
  RecordingBackend backend;
  backend.argWidths = {{8, 8, 4, 4}, {8, 8, 8, 8, 4}};
  Plan plan = samplePlan();
  plan.buffers[3].zeroed = true;                  // states: 256·B bytes
  plan.buffers[3].guard = plan.launches[1].guard; // B in [2, 1000]
  PlanExecutor executor(backend, plan);
  executor.run({0x1000, 0x2000, 0, 0}, {3, 130}, nullptr);
  const DevicePtr workspace =
      reinterpret_cast<DevicePtr>(backend.storage[0].get());
  ASSERT_EQ(backend.zeroed.size(), 1u);
  EXPECT_EQ(backend.zeroed[0].dst, workspace + 4 * 3 * 130);
  EXPECT_EQ(backend.zeroed[0].bytes, 256u * 3);
  EXPECT_EQ(backend.zeroed[0].launchesBefore, 0u);
  executor.run({0x1000, 0x2000, 0, 0}, {3, 130}, nullptr);
  ASSERT_EQ(backend.zeroed.size(), 2u);
  EXPECT_EQ(backend.zeroed[1].launchesBefore, 2u);
  executor.run({0x1000, 0x2000, 0, 0}, {1, 130}, nullptr); // guard skips it
  EXPECT_EQ(backend.zeroed.size(), 2u);
}

// A grid past a device's limits in any launch is refused before the first
// launch runs, naming the kernel: nothing of the call is written.
TEST(PlanExecutor, RefusesGridsPastTheDeviceLimitsBeforeAnyLaunch) {
  RecordingBackend backend;
  Plan plan = samplePlan();
  plan.launches[1].guard = {};
  plan.launches[1].grid[2] = {1, {1}, 1}; // T
  PlanExecutor executor(backend, plan);
  EXPECT_THAT(
      [&] {
        executor.run({0x1000, 0x2000, 0, 0}, {3, 70000}, nullptr);
      },
      ::testing::ThrowsMessage<Unsupported>(
          HasSubstr("launch #1 of kernel 'second' needs grid dimension z = "
                    "70000, past the 65535 a device allows")));
  EXPECT_TRUE(backend.launches.empty());
  // Within the limits, both run.
  executor.run({0x1000, 0x2000, 0, 0}, {3, 65535}, nullptr);
  EXPECT_EQ(backend.launches.size(), 2u);
}

// A tensor map is encoded at each call from the bound address and the
// call's dims and strides (elements to bytes), and passed by value; what
// the hardware cannot read is refused, naming the buffer.
TEST(PlanExecutor, EncodesTensorMapsForEachCall) {
  RecordingBackend backend;
  Plan plan = samplePlan();
  plan.tensorMaps = {sampleTensorMap()};
  plan.launches[0].args.push_back(LaunchArg::tensorMap(0));
  backend.argWidths = {
      {8, 8, 4, 4, 8}, {8, 8, 8, 8, 4}, {8, 8, 4, 4, 8}, {8, 8, 8, 8, 4}};
  PlanExecutor executor(backend, plan);
  const DevicePtr x = 0x1000, y = 0x2000;
  executor.run({x, y, 0, 0}, {3, 128}, nullptr);
  ASSERT_EQ(backend.tensorMapRequests.size(), 1u);
  const TensorMapRequest &map = backend.tensorMapRequests[0];
  EXPECT_EQ(map.address, x);
  EXPECT_EQ(map.rank, 3u);
  EXPECT_EQ(map.elementBytes, 2u);
  EXPECT_EQ(std::vector<uint64_t>(map.dims, map.dims + 3),
            (std::vector<uint64_t>{64, 128, 3}));
  EXPECT_EQ(std::vector<uint64_t>(map.strideBytes, map.strideBytes + 2),
            (std::vector<uint64_t>{160, 256}));
  EXPECT_EQ(std::vector<uint32_t>(map.box, map.box + 3),
            (std::vector<uint32_t>{64, 32, 1}));
  EXPECT_EQ(map.swizzleBytes, 128u);
  EXPECT_EQ(backend.values[0][4], 0x7e57u);

  executor.run({x, y, 0, 0}, {2, 64}, nullptr);
  ASSERT_EQ(backend.tensorMapRequests.size(), 2u);
  EXPECT_EQ(backend.tensorMapRequests[1].dims[1], 64u);
  EXPECT_EQ(backend.tensorMapRequests[1].strideBytes[1], 128u);

  EXPECT_THAT(
      [&] {
        executor.run({x + 2, y, 0, 0}, {2, 64}, nullptr);
      },
      ::testing::ThrowsMessage<InvalidArgument>(
          HasSubstr("buffer 'x': cannot build a TMA tensor map: the address is "
                    "not a multiple of 16 bytes")));
  EXPECT_THAT(
      [&] {
        executor.run({x, y, 0, 0}, {2, 60}, nullptr);
      },
      ::testing::ThrowsMessage<InvalidArgument>(
          HasSubstr("the stride of dim 2 is 120 bytes (a multiple of "
                    "16 below 2^40)")));
}

// The hardware's rules, as every backend checks them.
TEST(TensorMapRequests, FollowTheHardwareRules) {
  TensorMapRequest request;
  request.address = 0x1000;
  request.rank = 2;
  request.dims[0] = 64, request.dims[1] = 100;
  request.strideBytes[0] = 128;
  request.box[0] = 64, request.box[1] = 64;
  checkTensorMapRequest(request);
  auto refused = [](TensorMapRequest bad, const std::string &why) {
    EXPECT_THAT([&] { checkTensorMapRequest(bad); },
                ::testing::ThrowsMessage<InvalidArgument>(HasSubstr(why)));
  };
  TensorMapRequest bad = request;
  bad.box[0] = 128; // 256-byte rows in a 128-byte swizzle
  refused(bad, "a box row of 256 bytes exceeds the 128-byte swizzle");
  bad = request;
  bad.box[0] = 4; // 8-byte rows
  refused(bad, "a box row is 8 bytes (a multiple of 16)");
  bad = request;
  bad.box[1] = 257;
  refused(bad, "box dim 1 is 257 (1 to 256)");
  bad = request;
  bad.dims[1] = 0;
  refused(bad, "dim 1 is 0");
  bad = request;
  bad.rank = 6;
  refused(bad, "rank 6 (1 to 5)");
}

TEST(PlanExecutor, RejectsBadBindingsBeforeLaunching) {
  RecordingBackend backend;
  PlanExecutor executor(backend, samplePlan());
  EXPECT_THAT(
      [&] {
        executor.run({1, 2}, {1, 1}, nullptr);
      },
      ::testing::ThrowsMessage<InvalidArgument>(
          HasSubstr("has 4 buffers, got 2 bindings")));
  EXPECT_THAT(
      [&] {
        executor.run({1, 0, 0, 0}, {1, 1}, nullptr);
      },
      ::testing::ThrowsMessage<InvalidArgument>(
          HasSubstr("buffer 'y' is bound to a null address")));
  EXPECT_THAT(
      [&] {
        executor.run({1, 2, 0, 0}, {1}, nullptr);
      },
      ::testing::ThrowsMessage<InvalidArgument>(
          HasSubstr("has 2 parameters, got 1")));
  EXPECT_THAT(
      [&] {
        executor.run({1, 2, 0, 0}, {1, int64_t(1) << 40}, nullptr);
      },
      ::testing::ThrowsMessage<InvalidArgument>(
          HasSubstr("does not fit the kernel's 32-bit argument")));
  // Each fault is found before anything is launched.
  EXPECT_TRUE(backend.launches.empty());
}

// A launch repeated over a parameter runs that many times in order, each
// launch given its iteration as a last i32 argument.
TEST(PlanExecutor, RepeatedLaunchesPassTheirIteration) {
  RecordingBackend backend;
  Plan plan = samplePlan();
  plan.params.push_back("R");
  plan.paramSources.clear();
  plan.launches.resize(1);
  plan.launches[0].repeat = 2; // R times
  plan.validate();
  backend.argWidths = {{8, 8, 4, 4, 4}, {8, 8, 4, 4, 4}, {8, 8, 4, 4, 4}};
  PlanExecutor executor(backend, plan);
  executor.run({0x1000, 0x2000, 0, 0}, {2, 130, 3}, nullptr);
  ASSERT_EQ(backend.launches.size(), 3u);
  for (uint64_t i = 0; i < 3; ++i) {
    EXPECT_EQ(backend.values[i].size(), 5u);
    EXPECT_EQ(backend.values[i].back(), i);
    EXPECT_EQ(backend.values[i][2], 130u); // the other arguments unchanged
  }
  executor.run({0x1000, 0x2000, 0, 0}, {2, 130, 0}, nullptr); // zero times
  EXPECT_EQ(backend.launches.size(), 3u);
  EXPECT_THAT(
      [&] {
        executor.run({0x1000, 0x2000, 0, 0}, {2, 130, -1}, nullptr);
      },
      ::testing::ThrowsMessage<InvalidArgument>(
          HasSubstr("cannot count a launch's repeats")));
}

// A cooperative launch reaches the backend as one: all blocks resident.
TEST(PlanExecutor, CooperativeLaunchesStayCooperative) {
  RecordingBackend backend;
  Plan plan = samplePlan();
  plan.launches[1].cooperative = true;
  PlanExecutor executor(backend, plan);
  executor.run({1, 2, 0, 0}, {2, 1}, nullptr);
  ASSERT_EQ(backend.launches.size(), 2u);
  EXPECT_FALSE(backend.launches[0].geometry.cooperative);
  EXPECT_TRUE(backend.launches[1].geometry.cooperative);
}

TEST(PlanExecutor, FallsBackToDirectLaunchesWithoutGraphs) {
  RecordingBackend backend;
  PlanExecutor executor(backend, samplePlan());
  executor.run({1, 2, 0, 0}, {2, 1}, nullptr, /*useGraph=*/true);
  EXPECT_EQ(backend.launches.size(), 2u);
}

// The default stream cannot be captured: the executor captures on a stream
// of its own and replays on the caller's, then frees that stream.
TEST(PlanExecutor, GraphsOnTheDefaultStreamCaptureOnAPrivateStream) {
  RecordingBackend backend;
  backend.graphs = true;
  {
    PlanExecutor executor(backend, samplePlan());
    executor.run({1, 2, 0, 0}, {2, 1}, nullptr, /*useGraph=*/true);
    executor.run({1, 2, 0, 0}, {2, 1}, nullptr, /*useGraph=*/true);
    EXPECT_TRUE(backend.launches.empty()); // nothing ran outside the graph
    ASSERT_EQ(backend.replayed.size(), 4u);
    for (const RecordingBackend::Launch &launch : backend.replayed)
      EXPECT_EQ(launch.stream, nullptr);
    ASSERT_EQ(backend.streams.size(), 1u); // one capture stream, reused
    // A caller's own stream (which may be capturing itself) is replayed
    // on, captured on a private stream too.
    StreamHandle mine = backend.createStream();
    executor.run({1, 2, 0, 0}, {2, 1}, mine, /*useGraph=*/true);
    EXPECT_EQ(backend.streams.size(), 3u);
    EXPECT_EQ(backend.replayed.back().stream, mine);
  }
  EXPECT_EQ(backend.destroyedStreams,
            (std::vector<StreamHandle>{backend.streams[0].get(),
                                       backend.streams[2].get()}));
}

// New bindings or sizes capture the launches again, and the last graph is
// handed back to be updated in place rather than built anew; repeated
// launches are captured one node each.
TEST(PlanExecutor, RecapturedGraphsReuseTheLastOne) {
  RecordingBackend backend;
  backend.graphs = true;
  Plan plan = samplePlan();
  plan.params.push_back("R");
  plan.paramSources.clear();
  plan.launches.resize(1);
  plan.launches[0].repeat = 2;
  plan.validate();
  PlanExecutor executor(backend, plan);
  executor.run({1, 2, 0, 0}, {2, 1, 4}, nullptr, /*useGraph=*/true);
  EXPECT_EQ(backend.replayed.size(), 4u);
  executor.run({1, 2, 0, 0}, {2, 1, 4}, nullptr, /*useGraph=*/true);
  EXPECT_EQ(backend.graphUpdates, 0); // same call: replayed as it is
  executor.run({3, 4, 0, 0}, {2, 1, 4}, nullptr, /*useGraph=*/true);
  EXPECT_EQ(backend.graphUpdates, 1);
  EXPECT_EQ(backend.replayed.size(), 12u);
  executor.run({3, 4, 0, 0}, {2, 1, 5}, nullptr, /*useGraph=*/true);
  EXPECT_EQ(backend.graphUpdates, 1); // five launches: a new graph
  EXPECT_EQ(backend.replayed.size(), 17u);
  EXPECT_TRUE(backend.launches.empty());
}

// After a device fault every release fails; destroying the executor must
// not throw (which would end the process) but log, leaving the fault to be
// reported where it happened.
TEST(PlanExecutor, DestructionAfterADeviceFaultDoesNotThrow) {
  RecordingBackend backend;
  backend.graphs = true;
  auto executor = std::make_unique<PlanExecutor>(backend, samplePlan());
  executor->run({1, 2, 0, 0}, {2, 1}, nullptr, /*useGraph=*/true);
  backend.failReleases = true;
  ::testing::internal::CaptureStderr();
  executor.reset();
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_EQ(backend.releases, 1);
  EXPECT_EQ(backend.destroyedStreams.size(), 1u);
  EXPECT_THAT(log, HasSubstr("cuMemFree failed: CUDA_ERROR_ILLEGAL_ADDRESS"));
  EXPECT_THAT(log, HasSubstr("cuStreamDestroy failed"));
}

} // namespace

namespace {

TEST(PlanExecutor, DumpDirectoryReceivesThePlan) {
  fs::path directory = fs::temp_directory_path() /
                       ("rudnn-plan-dump-" + std::to_string(::getpid()));
  fs::remove_all(directory);
  ::setenv("RUDNN_DUMP_DIR", directory.c_str(), 1);
  RecordingBackend backend;
  PlanExecutor executor(backend, samplePlan());
  ::unsetenv("RUDNN_DUMP_DIR");
  std::ifstream in(directory / "sample.plan.json");
  std::stringstream text;
  text << in.rdbuf();
  expectSamePlan(Plan::fromJson(text.str()), samplePlan());
  fs::remove_all(directory);
}

} // namespace
