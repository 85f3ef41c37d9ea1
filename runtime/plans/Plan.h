//===- Plan.h - Kernels, buffers and ordered launches -----------*- C++ -*-===//
//
// A plan is what an operator call becomes: compiled kernels, the buffers they
// touch (the caller's arguments and results, and workspace carved from one
// allocation) and the ordered launches with their argument bindings. Sizes
// that depend on run-time dims (batch, length, heads) are SizeExprs over the
// plan's named parameters, so one plan serves every such size. Plans
// serialize to JSON plus binaries for ahead-of-time deployment.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_RUNTIME_PLANS_PLAN_H
#define RUDNN_RUNTIME_PLANS_PLAN_H

#include <climits>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rudnn::runtime {

/// ceil(constant · Π params[i] / divisor): a size known once the run-time
/// parameters are.
struct SizeExpr {
  int64_t constant = 1;
  std::vector<uint32_t> params;
  int64_t divisor = 1;

  static SizeExpr of(int64_t value) { return {value, {}, 1}; }
  /// Throws InvalidArgument if a parameter index is out of range, or on
  /// overflow of 64 bits.
  int64_t evaluate(const std::vector<int64_t> &values) const;
  bool operator==(const SizeExpr &other) const {
    return constant == other.constant && params == other.params &&
           divisor == other.divisor;
  }
};

struct PlanKernel {
  std::string entry;
  /// The backend's binary (e.g. a serialized CudaBinary).
  std::string binary;
  /// Where `binary` is empty: builds it, at the first call that launches
  /// the kernel (PlanExecutor) or when the plan is saved.
  std::function<std::string()> deferred = nullptr;

  /// `binary`, built first if deferred.
  std::string build() const {
    return binary.empty() && deferred ? deferred() : binary;
  }
};

/// How a plan touches a buffer: read (In), written (Out), read and written
/// in place (InOut, e.g. a cache appended to), or its own scratch memory
/// carved from the plan's workspace.
enum class BufferAccess { In, Out, InOut, Workspace };

/// Which calls a launch runs in, or a workspace buffer takes memory in:
/// those whose parameter `param` lies in [min, max].
struct LaunchGuard {
  int32_t param = -1; // -1: always
  int64_t min = INT64_MIN, max = INT64_MAX;

  bool admits(const std::vector<int64_t> &values) const {
    return param < 0 || (values[param] >= min && values[param] <= max);
  }
};

struct PlanBuffer {
  std::string name;
  BufferAccess access = BufferAccess::In;
  /// Workspace only: bytes and byte offset within the plan's workspace;
  /// a `packed` buffer starts after the workspace buffer before it, at the
  /// next multiple of kWorkspaceAlignment (its `offset` is unused).
  SizeExpr bytes = SizeExpr::of(0);
  SizeExpr offset = SizeExpr::of(0);
  /// Out only: the In buffer whose memory it may be bound to (an update in
  /// place, e.g. a final state over the initial state); -1 for none.
  int32_t aliasOf = -1;
  bool packed = false;
  /// Workspace only: the calls it takes memory in (those running the
  /// guarded launches that alone touch it); a call it skips gives 0 bytes.
  LaunchGuard guard = {};
  /// Workspace only: filled with zeros before each call's launches (a
  /// kernel's own counters).
  bool zeroed = false;
};

/// Where packed workspace buffers start: enough for any vector access.
inline constexpr uint64_t kWorkspaceAlignment = 256;

/// One kernel parameter.
struct LaunchArg {
  enum class Kind {
    Buffer,
    ParamI32,
    ParamI64,
    ConstI32,
    ConstI64,
    ConstF32,
    TensorMap
  };
  Kind kind = Kind::ConstI32;
  /// Buffer index (Buffer), parameter index (Param*) or index into the
  /// plan's tensor maps (TensorMap).
  uint32_t index = 0;
  int64_t intValue = 0;
  float floatValue = 0;

  static LaunchArg buffer(uint32_t buffer) {
    return {Kind::Buffer, buffer, 0, 0};
  }
  static LaunchArg paramI32(uint32_t param) {
    return {Kind::ParamI32, param, 0, 0};
  }
  static LaunchArg paramI64(uint32_t param) {
    return {Kind::ParamI64, param, 0, 0};
  }
  static LaunchArg i32(int32_t value) { return {Kind::ConstI32, 0, value, 0}; }
  static LaunchArg i64(int64_t value) { return {Kind::ConstI64, 0, value, 0}; }
  static LaunchArg f32(float value) { return {Kind::ConstF32, 0, 0, value}; }
  static LaunchArg tensorMap(uint32_t map) {
    return {Kind::TensorMap, map, 0, 0};
  }
};

/// A constant or a run-time parameter's value.
struct PlanExtent {
  int32_t param = -1; // -1: `value`
  int64_t value = 0;

  int64_t evaluate(const std::vector<int64_t> &values) const {
    return param < 0 ? value : values[param];
  }
  bool operator==(const PlanExtent &other) const {
    return param == other.param && value == other.value;
  }
};

/// A TMA tensor map over one buffer, encoded at each call (the bound address
/// and the run-time dims and strides) and passed by value: the 128 bytes of
/// cuTensorMapEncodeTiled's CUtensorMap, 16-byte interleave none, zeros out
/// of bounds. Dims innermost first (the innermost contiguous); strides, in
/// elements, of dims 1 and up.
struct PlanTensorMap {
  uint32_t buffer = 0;
  uint32_t elementBytes = 2;
  std::vector<PlanExtent> dims, strides;
  std::vector<uint32_t> box;
  /// 0 (none), 32, 64 or 128: the shared tile's swizzle.
  uint32_t swizzleBytes = 128;
};

/// Runs a launch only while params[param] lies in [min, max]: plans carry
/// alternatives (e.g. a decode kernel for T = 1) chosen per call without a
/// new compile.

struct PlanLaunch {
  uint32_t kernel = 0;
  LaunchGuard guard;
  /// A parameter index: the launch runs params[repeat] times in a row, the
  /// iteration passed as a last i32 argument; -1: once.
  int32_t repeat = -1;
  SizeExpr grid[3] = {SizeExpr::of(1), SizeExpr::of(1), SizeExpr::of(1)};
  uint32_t block[3] = {1, 1, 1};
  uint32_t dynamicSharedBytes = 0;
  /// Grid-synchronised: every block resident at once
  /// (cuLaunchCooperativeKernel).
  bool cooperative = false;
  std::vector<LaunchArg> args;
};

/// Where a run-time parameter comes from at a call: ceil(shape[index] /
/// divisor) or strides[index] of the view bound to buffer `buffer`.
struct ParamSource {
  /// Dim: ceil(shape[index] / divisor) of a bound buffer; Stride: its
  /// strides[index]; Size: `size` (plus `addends`) of the parameters before
  /// this one (the
  /// dense strides of a tensor held in the workspace); Split: a split count,
  /// clamp(ceil(target / size), 1, max), `size` the blocks before splitting
  /// and `max` the most parts with work.
  enum class Kind { Dim, Stride, Size, Split };
  Kind kind = Kind::Dim;
  uint32_t buffer = 0, index = 0;
  int64_t divisor = 1;
  SizeExpr size = SizeExpr::of(0);
  int64_t target = 0;
  SizeExpr max = SizeExpr::of(0);
  /// Size: added to `size` (a sum no product states, such as the chunks of
  /// packed sequences).
  std::vector<SizeExpr> addends = {};
  bool operator==(const ParamSource &other) const {
    return kind == other.kind && buffer == other.buffer &&
           index == other.index && divisor == other.divisor &&
           size == other.size && target == other.target && max == other.max &&
           addends == other.addends;
  }
  /// The sizes a Size or Split source derives its value from.
  std::vector<const SizeExpr *> derivedFrom() const;
};

/// A bound buffer's shape and strides, in elements (empty when absent).
struct BufferShape {
  const std::vector<int64_t> *shape = nullptr, *strides = nullptr;
};

struct Plan {
  std::string name;
  /// Names of the run-time parameters, e.g. {"B", "T", "H"}.
  std::vector<std::string> params;
  /// Empty, or one per parameter: then `paramValues` computes them from the
  /// bound views and a caller passes only views.
  std::vector<ParamSource> paramSources;
  std::vector<PlanKernel> kernels;
  std::vector<PlanBuffer> buffers;
  std::vector<PlanLaunch> launches;
  /// What TensorMap launch arguments refer to.
  std::vector<PlanTensorMap> tensorMaps;

  /// Checks every index and size; throws InvalidArgument naming the fault.
  void validate() const;
  /// Whether a launch repeats over a parameter (one launch a step).
  bool repeatsLaunches() const {
    for (const PlanLaunch &launch : launches)
      if (launch.repeat >= 0)
        return true;
    return false;
  }
  /// The parameters' values read from the views bound to each buffer (one
  /// entry per buffer, null for workspace and absent buffers) through
  /// `paramSources`. Throws InvalidArgument when a source's buffer is not
  /// bound or lacks the dim, Internal when the plan has no sources.
  std::vector<int64_t> paramValues(const std::vector<BufferShape> &bound) const;
  /// Parameter `index` read from `bound` likewise; none when its source
  /// buffer is not bound or lacks the dim.
  std::optional<int64_t>
  paramValue(size_t index, const std::vector<BufferShape> &bound) const;
  /// Bytes of workspace for these parameter values.
  uint64_t workspaceBytes(const std::vector<int64_t> &paramValues) const;
  /// Fills `offsets` with each buffer's byte offset within the workspace (0
  /// for the others) and returns the workspace's bytes.
  uint64_t workspaceLayout(const std::vector<int64_t> &paramValues,
                           std::vector<uint64_t> &offsets) const;

  /// JSON with binaries referenced by file name (see save); `inlineBinaries`
  /// embeds them base64-encoded instead, for a single-file form.
  std::string toJson(bool inlineBinaries) const;
  /// Parses toJson(true)'s output. Throws InvalidArgument on malformed input.
  static Plan fromJson(std::string_view json);

  /// Writes `directory/plan.json` and one `kernel<i>.bin` per kernel.
  void save(const std::string &directory) const;
  /// Reads what save wrote. Throws InvalidArgument on missing or malformed
  /// files.
  static Plan load(const std::string &directory);
};

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_PLANS_PLAN_H
