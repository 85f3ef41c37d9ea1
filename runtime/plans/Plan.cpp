//===- Plan.cpp - Plans: validation, sizes and JSON -----------------------===//

#include "runtime/plans/Plan.h"
#include "runtime/plans/Dump.h"
#include "runtime/support/Base64.h"
#include "runtime/support/InputFile.h"

#include "rudnn/errors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace rudnn;
using namespace rudnn::runtime;
using nlohmann::json;
namespace fs = std::filesystem;

/// JSON format version; bumped on any incompatible change.
static constexpr int kPlanFormatVersion = 2;

int64_t SizeExpr::evaluate(const std::vector<int64_t> &values) const {
  __int128 product = constant;
  for (uint32_t param : params) {
    if (param >= values.size())
      throw InvalidArgument("plan size refers to parameter #" +
                            std::to_string(param) + " of " +
                            std::to_string(values.size()));
    product *= values[param];
    if (product > INT64_MAX || product < INT64_MIN)
      throw InvalidArgument("plan size overflows 64 bits");
  }
  if (divisor <= 0)
    throw InvalidArgument("plan size has divisor " + std::to_string(divisor));
  return static_cast<int64_t>((product + divisor - 1) / divisor);
}

std::vector<const SizeExpr *> ParamSource::derivedFrom() const {
  std::vector<const SizeExpr *> exprs;
  if (kind != Kind::Size && kind != Kind::Split)
    return exprs;
  exprs.push_back(&size);
  if (kind == Kind::Split)
    exprs.push_back(&max);
  for (const SizeExpr &addend : addends)
    exprs.push_back(&addend);
  return exprs;
}

void Plan::validate() const {
  auto checkExpr = [&](const SizeExpr &expr, const std::string &what) {
    for (uint32_t param : expr.params)
      if (param >= params.size())
        throw InvalidArgument(what + " refers to parameter #" +
                              std::to_string(param) + ", the plan has " +
                              std::to_string(params.size()));
    if (expr.divisor <= 0)
      throw InvalidArgument(what + " has a non-positive divisor");
  };
  if (!paramSources.empty() && paramSources.size() != params.size())
    throw InvalidArgument("plan has " + std::to_string(paramSources.size()) +
                          " parameter sources for " +
                          std::to_string(params.size()) + " parameters");
  for (size_t i = 0; i < paramSources.size(); ++i) {
    const ParamSource &source = paramSources[i];
    if (source.kind == ParamSource::Kind::Size ||
        source.kind == ParamSource::Kind::Split) {
      for (const SizeExpr *expr : source.derivedFrom()) {
        for (uint32_t param : expr->params)
          if (param >= i)
            throw InvalidArgument("parameter '" + params[i] +
                                  "' is derived from a parameter after it");
        checkExpr(*expr, "source of parameter '" + params[i] + "'");
      }
      if (source.kind == ParamSource::Kind::Split && source.target < 1)
        throw InvalidArgument("parameter '" + params[i] +
                              "' splits work for a target of no blocks");
      continue;
    }
    if (source.buffer >= buffers.size() ||
        buffers[source.buffer].access == BufferAccess::Workspace ||
        source.divisor < 1)
      throw InvalidArgument("parameter '" + params[i] +
                            "' has a source outside the plan's argument and "
                            "result buffers");
  }
  for (const PlanBuffer &buffer : buffers) {
    if (buffer.aliasOf != -1 &&
        (buffer.access != BufferAccess::Out || buffer.aliasOf < 0 ||
         buffer.aliasOf >= static_cast<int32_t>(buffers.size()) ||
         buffers[buffer.aliasOf].access != BufferAccess::In))
      throw InvalidArgument("buffer '" + buffer.name +
                            "' may alias only an input buffer, and only as "
                            "an output");
    checkExpr(buffer.bytes, "size of buffer '" + buffer.name + "'");
    if (buffer.zeroed && buffer.access != BufferAccess::Workspace)
      throw InvalidArgument("buffer '" + buffer.name +
                            "' is zeroed but not workspace");
    if (buffer.guard.param >= static_cast<int64_t>(params.size()) ||
        buffer.guard.param < -1)
      throw InvalidArgument("buffer '" + buffer.name +
                            "' is guarded by parameter #" +
                            std::to_string(buffer.guard.param) +
                            ", the plan has " + std::to_string(params.size()));
    checkExpr(buffer.offset, "offset of buffer '" + buffer.name + "'");
  }
  for (size_t i = 0; i < launches.size(); ++i) {
    const PlanLaunch &launch = launches[i];
    std::string where = "launch #" + std::to_string(i);
    if (launch.kernel >= kernels.size())
      throw InvalidArgument(where + " uses kernel #" +
                            std::to_string(launch.kernel) + ", the plan has " +
                            std::to_string(kernels.size()));
    for (const SizeExpr &dim : launch.grid)
      checkExpr(dim, where + " grid");
    if (launch.guard.param >= static_cast<int64_t>(params.size()) ||
        launch.guard.param < -1)
      throw InvalidArgument(where + " is guarded by parameter #" +
                            std::to_string(launch.guard.param) +
                            ", the plan has " + std::to_string(params.size()));
    for (uint32_t dim : launch.block)
      if (dim == 0)
        throw InvalidArgument(where + " has an empty block");
    if (launch.repeat < -1 ||
        launch.repeat >= static_cast<int32_t>(params.size()))
      throw InvalidArgument(where + " repeats over parameter #" +
                            std::to_string(launch.repeat) + ", the plan has " +
                            std::to_string(params.size()));
    for (const LaunchArg &arg : launch.args) {
      bool isBuffer = arg.kind == LaunchArg::Kind::Buffer;
      bool isParam = arg.kind == LaunchArg::Kind::ParamI32 ||
                     arg.kind == LaunchArg::Kind::ParamI64;
      if (isBuffer && arg.index >= buffers.size())
        throw InvalidArgument(where + " binds buffer #" +
                              std::to_string(arg.index) + ", the plan has " +
                              std::to_string(buffers.size()));
      if (isParam && arg.index >= params.size())
        throw InvalidArgument(where + " binds parameter #" +
                              std::to_string(arg.index) + ", the plan has " +
                              std::to_string(params.size()));
      if (arg.kind == LaunchArg::Kind::TensorMap &&
          arg.index >= tensorMaps.size())
        throw InvalidArgument(where + " binds tensor map #" +
                              std::to_string(arg.index) + ", the plan has " +
                              std::to_string(tensorMaps.size()));
    }
  }
  for (size_t i = 0; i < tensorMaps.size(); ++i) {
    const PlanTensorMap &map = tensorMaps[i];
    const std::string where = "tensor map #" + std::to_string(i);
    if (map.buffer >= buffers.size())
      throw InvalidArgument(where + " is over buffer #" +
                            std::to_string(map.buffer) + ", the plan has " +
                            std::to_string(buffers.size()));
    const size_t rank = map.dims.size();
    if (rank < 1 || rank > 5 || map.box.size() != rank ||
        map.strides.size() + 1 != rank)
      throw InvalidArgument(where + " has rank " + std::to_string(rank) +
                            " with " + std::to_string(map.box.size()) +
                            " box dims and " +
                            std::to_string(map.strides.size()) + " strides");
    for (const std::vector<PlanExtent> *extents : {&map.dims, &map.strides})
      for (const PlanExtent &extent : *extents)
        if (extent.param >= static_cast<int32_t>(params.size()) ||
            extent.param < -1)
          throw InvalidArgument(
              where + " refers to parameter #" + std::to_string(extent.param) +
              ", the plan has " + std::to_string(params.size()));
    for (uint32_t box : map.box)
      if (box < 1 || box > 256)
        throw InvalidArgument(where + " has a box dim of " +
                              std::to_string(box) + " (1 to 256)");
    if (map.elementBytes != 1 && map.elementBytes != 2 &&
        map.elementBytes != 4 && map.elementBytes != 8)
      throw InvalidArgument(where + " has " + std::to_string(map.elementBytes) +
                            "-byte elements");
    if (map.swizzleBytes != 0 && map.swizzleBytes != 32 &&
        map.swizzleBytes != 64 && map.swizzleBytes != 128)
      throw InvalidArgument(where + " has a " +
                            std::to_string(map.swizzleBytes) + "-byte swizzle");
  }
}

std::optional<int64_t>
Plan::paramValue(size_t index, const std::vector<BufferShape> &bound) const {
  const ParamSource &source = paramSources.at(index);
  if (source.kind == ParamSource::Kind::Size ||
      source.kind == ParamSource::Kind::Split) {
    std::vector<int64_t> before(index, 0);
    for (const SizeExpr *expr : source.derivedFrom())
      for (uint32_t param : expr->params) {
        std::optional<int64_t> value = paramValue(param, bound);
        if (!value)
          return std::nullopt;
        before[param] = *value;
      }
    if (source.kind == ParamSource::Kind::Size) {
      int64_t value = source.size.evaluate(before);
      for (const SizeExpr &addend : source.addends)
        if (__builtin_add_overflow(value, addend.evaluate(before), &value))
          throw InvalidArgument("plan parameter '" + params[index] +
                                "' overflows 64 bits");
      return value;
    }
    // As many parts as fill the device, at least one, at most `max`.
    const int64_t blocks = std::max<int64_t>(1, source.size.evaluate(before));
    const int64_t wanted = (source.target + blocks - 1) / blocks;
    return std::clamp<int64_t>(
        wanted, 1, std::max<int64_t>(1, source.max.evaluate(before)));
  }
  const BufferShape *view =
      source.buffer < bound.size() ? &bound[source.buffer] : nullptr;
  const std::vector<int64_t> *dims = !view ? nullptr
                                     : source.kind == ParamSource::Kind::Dim
                                         ? view->shape
                                         : view->strides;
  if (!dims || source.index >= dims->size())
    return std::nullopt;
  const int64_t value = (*dims)[source.index];
  return source.kind == ParamSource::Kind::Dim
             ? (value + source.divisor - 1) / source.divisor
             : value;
}

std::vector<int64_t>
Plan::paramValues(const std::vector<BufferShape> &bound) const {
  if (paramSources.size() != params.size())
    throw Error(Status::Internal,
                "plan '" + name +
                    "' does not say where its parameters come "
                    "from");
  std::vector<int64_t> values;
  values.reserve(params.size());
  for (size_t i = 0; i < params.size(); ++i) {
    std::optional<int64_t> value = paramValue(i, bound);
    if (!value) {
      const ParamSource &source = paramSources[i];
      const bool bound_ =
          source.buffer < bound.size() && bound[source.buffer].shape != nullptr;
      throw InvalidArgument("plan '" + name + "' reads parameter '" +
                            params[i] + "' from buffer '" +
                            buffers.at(source.buffer).name + "', which " +
                            (bound_ ? "lacks that dim" : "is not bound"));
    }
    values.push_back(*value);
  }
  return values;
}

uint64_t Plan::workspaceLayout(const std::vector<int64_t> &paramValues,
                               std::vector<uint64_t> &offsets) const {
  offsets.assign(buffers.size(), 0);
  uint64_t end = 0, total = 0;
  for (size_t i = 0; i < buffers.size(); ++i) {
    const PlanBuffer &buffer = buffers[i];
    if (buffer.access != BufferAccess::Workspace)
      continue;
    offsets[i] = buffer.packed ? (end + kWorkspaceAlignment - 1) /
                                     kWorkspaceAlignment * kWorkspaceAlignment
                               : buffer.offset.evaluate(paramValues);
    end = offsets[i] + (buffer.guard.admits(paramValues)
                            ? buffer.bytes.evaluate(paramValues)
                            : 0);
    total = std::max(total, end);
  }
  return total;
}

uint64_t Plan::workspaceBytes(const std::vector<int64_t> &paramValues) const {
  std::vector<uint64_t> offsets;
  return workspaceLayout(paramValues, offsets);
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

static json toJson(const SizeExpr &expr) {
  return {{"constant", expr.constant},
          {"params", expr.params},
          {"divisor", expr.divisor}};
}

static SizeExpr sizeFromJson(const json &value) {
  return {value.at("constant").get<int64_t>(),
          value.at("params").get<std::vector<uint32_t>>(),
          value.at("divisor").get<int64_t>()};
}

static const char *const kAccessNames[] = {"in", "out", "inout", "workspace"};

static const char *const kArgKindNames[] = {
    "buffer", "param_i32", "param_i64", "i32", "i64", "f32", "tensor_map"};

static json toJson(const std::vector<PlanExtent> &extents) {
  json list = json::array();
  for (const PlanExtent &extent : extents)
    list.push_back({{"param", extent.param}, {"value", extent.value}});
  return list;
}

static std::vector<PlanExtent> extentsFromJson(const json &list) {
  std::vector<PlanExtent> extents;
  for (const json &extent : list)
    extents.push_back(
        {extent.at("param").get<int32_t>(), extent.at("value").get<int64_t>()});
  return extents;
}

std::string Plan::toJson(bool inlineBinaries) const {
  json plan;
  plan["format"] = "rudnn-plan";
  plan["version"] = kPlanFormatVersion;
  plan["name"] = name;
  plan["params"] = params;
  plan["param_sources"] = json::array();
  for (const ParamSource &source : paramSources)
    plan["param_sources"].push_back(
        {{"kind", source.kind == ParamSource::Kind::Dim      ? "dim"
                  : source.kind == ParamSource::Kind::Stride ? "stride"
                  : source.kind == ParamSource::Kind::Size   ? "size"
                                                             : "split"},
         {"target", source.target},
         {"max", ::toJson(source.max)},
         {"buffer", source.buffer},
         {"index", source.index},
         {"divisor", source.divisor},
         {"size", ::toJson(source.size)},
         {"addends", [&] {
            json addends = json::array();
            for (const SizeExpr &addend : source.addends)
              addends.push_back(::toJson(addend));
            return addends;
          }()}});
  plan["kernels"] = json::array();
  for (size_t i = 0; i < kernels.size(); ++i) {
    json kernel = {{"entry", kernels[i].entry}};
    if (inlineBinaries)
      kernel["binary_base64"] = encodeBase64(kernels[i].binary);
    else
      kernel["binary_file"] = "kernel" + std::to_string(i) + ".bin";
    plan["kernels"].push_back(kernel);
  }
  plan["buffers"] = json::array();
  for (const PlanBuffer &buffer : buffers)
    plan["buffers"].push_back(
        {{"name", buffer.name},
         {"access", kAccessNames[static_cast<int>(buffer.access)]},
         {"alias_of", buffer.aliasOf},
         {"bytes", ::toJson(buffer.bytes)},
         {"offset", ::toJson(buffer.offset)},
         {"packed", buffer.packed},
         {"zeroed", buffer.zeroed},
         {"guard",
          {{"param", buffer.guard.param},
           {"min", buffer.guard.min},
           {"max", buffer.guard.max}}}});
  plan["launches"] = json::array();
  for (const PlanLaunch &launch : launches) {
    json args = json::array();
    for (const LaunchArg &arg : launch.args) {
      json value = {{"kind", kArgKindNames[static_cast<int>(arg.kind)]}};
      switch (arg.kind) {
      case LaunchArg::Kind::Buffer:
      case LaunchArg::Kind::ParamI32:
      case LaunchArg::Kind::ParamI64:
      case LaunchArg::Kind::TensorMap:
        value["index"] = arg.index;
        break;
      case LaunchArg::Kind::ConstI32:
      case LaunchArg::Kind::ConstI64:
        value["value"] = arg.intValue;
        break;
      case LaunchArg::Kind::ConstF32: {
        // The bit pattern: JSON has no infinities or NaNs.
        uint32_t bits;
        std::memcpy(&bits, &arg.floatValue, sizeof(bits));
        value["bits"] = bits;
        break;
      }
      }
      args.push_back(value);
    }
    plan["launches"].push_back(
        {{"kernel", launch.kernel},
         {"grid",
          {::toJson(launch.grid[0]), ::toJson(launch.grid[1]),
           ::toJson(launch.grid[2])}},
         {"block", {launch.block[0], launch.block[1], launch.block[2]}},
         {"dynamic_shared_bytes", launch.dynamicSharedBytes},
         {"repeat", launch.repeat},
         {"cooperative", launch.cooperative},
         {"guard",
          {{"param", launch.guard.param},
           {"min", launch.guard.min},
           {"max", launch.guard.max}}},
         {"args", args}});
  }
  plan["tensor_maps"] = json::array();
  for (const PlanTensorMap &map : tensorMaps)
    plan["tensor_maps"].push_back({{"buffer", map.buffer},
                                   {"element_bytes", map.elementBytes},
                                   {"dims", ::toJson(map.dims)},
                                   {"strides", ::toJson(map.strides)},
                                   {"box", map.box},
                                   {"swizzle_bytes", map.swizzleBytes}});
  return plan.dump(2);
}

/// Parses a plan whose kernel binaries come from `readBinary(kernel json)`.
template <typename ReadBinary>
static Plan parsePlan(std::string_view text, ReadBinary readBinary) {
  Plan plan;
  try {
    json value = json::parse(text);
    if (value.at("format") != "rudnn-plan")
      throw InvalidArgument("not a rudnn plan");
    if (value.at("version") != kPlanFormatVersion)
      throw InvalidArgument("plan format version " +
                            value.at("version").dump() + ", expected " +
                            std::to_string(kPlanFormatVersion));
    plan.name = value.at("name").get<std::string>();
    plan.params = value.at("params").get<std::vector<std::string>>();
    for (const json &source : value.at("param_sources")) {
      std::string kind = source.at("kind").get<std::string>();
      if (kind != "dim" && kind != "stride" && kind != "size" &&
          kind != "split")
        throw InvalidArgument("unknown parameter source '" + kind + "'");
      plan.paramSources.push_back(
          {kind == "dim"      ? ParamSource::Kind::Dim
           : kind == "stride" ? ParamSource::Kind::Stride
           : kind == "size"   ? ParamSource::Kind::Size
                              : ParamSource::Kind::Split,
           source.at("buffer").get<uint32_t>(),
           source.at("index").get<uint32_t>(),
           source.at("divisor").get<int64_t>(),
           source.contains("size") ? sizeFromJson(source.at("size"))
                                   : SizeExpr::of(0),
           source.value("target", int64_t(0)),
           source.contains("max") ? sizeFromJson(source.at("max"))
                                  : SizeExpr::of(0)});
      if (source.contains("addends"))
        for (const json &addend : source.at("addends"))
          plan.paramSources.back().addends.push_back(sizeFromJson(addend));
    }
    for (const json &kernel : value.at("kernels"))
      plan.kernels.push_back(
          {kernel.at("entry").get<std::string>(), readBinary(kernel)});
    for (const json &buffer : value.at("buffers")) {
      std::string access = buffer.at("access").get<std::string>();
      auto *found =
          std::find(std::begin(kAccessNames), std::end(kAccessNames), access);
      if (found == std::end(kAccessNames))
        throw InvalidArgument("unknown buffer access '" + access + "'");
      plan.buffers.push_back(
          {buffer.at("name").get<std::string>(),
           static_cast<BufferAccess>(found - std::begin(kAccessNames)),
           sizeFromJson(buffer.at("bytes")), sizeFromJson(buffer.at("offset")),
           buffer.at("alias_of").get<int32_t>(),
           buffer.value("packed", false)});
      plan.buffers.back().zeroed = buffer.value("zeroed", false);
      if (buffer.contains("guard")) {
        const json &guard = buffer.at("guard");
        plan.buffers.back().guard = {guard.at("param").get<int32_t>(),
                                     guard.at("min").get<int64_t>(),
                                     guard.at("max").get<int64_t>()};
      }
    }
    for (const json &launch : value.at("launches")) {
      PlanLaunch parsed;
      parsed.kernel = launch.at("kernel").get<uint32_t>();
      for (int i = 0; i < 3; ++i) {
        parsed.grid[i] = sizeFromJson(launch.at("grid").at(i));
        parsed.block[i] = launch.at("block").at(i).get<uint32_t>();
      }
      parsed.dynamicSharedBytes =
          launch.at("dynamic_shared_bytes").get<uint32_t>();
      parsed.repeat = launch.at("repeat").get<int32_t>();
      parsed.cooperative = launch.value("cooperative", false);
      const json &guard = launch.at("guard");
      parsed.guard = {guard.at("param").get<int32_t>(),
                      guard.at("min").get<int64_t>(),
                      guard.at("max").get<int64_t>()};
      for (const json &arg : launch.at("args")) {
        std::string kind = arg.at("kind").get<std::string>();
        auto *found =
            std::find(std::begin(kArgKindNames), std::end(kArgKindNames), kind);
        if (found == std::end(kArgKindNames))
          throw InvalidArgument("unknown launch argument kind '" + kind + "'");
        LaunchArg parsedArg;
        parsedArg.kind =
            static_cast<LaunchArg::Kind>(found - std::begin(kArgKindNames));
        if (arg.contains("index"))
          parsedArg.index = arg.at("index").get<uint32_t>();
        if (parsedArg.kind == LaunchArg::Kind::ConstF32) {
          uint32_t bits = arg.at("bits").get<uint32_t>();
          std::memcpy(&parsedArg.floatValue, &bits, sizeof(bits));
        } else if (arg.contains("value"))
          parsedArg.intValue = arg.at("value").get<int64_t>();
        parsed.args.push_back(parsedArg);
      }
      plan.launches.push_back(std::move(parsed));
    }
    for (const json &map : value.value("tensor_maps", json::array()))
      plan.tensorMaps.push_back({map.at("buffer").get<uint32_t>(),
                                 map.at("element_bytes").get<uint32_t>(),
                                 extentsFromJson(map.at("dims")),
                                 extentsFromJson(map.at("strides")),
                                 map.at("box").get<std::vector<uint32_t>>(),
                                 map.at("swizzle_bytes").get<uint32_t>()});
  } catch (const json::exception &error) {
    throw InvalidArgument(std::string("malformed plan JSON: ") + error.what());
  }
  plan.validate();
  return plan;
}

Plan Plan::fromJson(std::string_view text) {
  return parsePlan(text, [](const json &kernel) {
    const std::optional<std::string> binary =
        decodeBase64(kernel.at("binary_base64").get<std::string>());
    if (!binary)
      throw InvalidArgument("plan binary is not base64");
    return *binary;
  });
}

static std::string readWholeFile(const fs::path &path) {
  return readInputFile(path.string(), "plan file");
}

void Plan::save(const std::string &directory) const {
  validate();
  for (size_t i = 0; i < kernels.size(); ++i)
    if (writeFile(directory, "kernel" + std::to_string(i) + ".bin",
                  kernels[i].build())
            .empty())
      throw InvalidArgument("cannot write plan binaries to " + directory);
  if (writeFile(directory, "plan.json", toJson(/*inlineBinaries=*/false))
          .empty())
    throw InvalidArgument("cannot write " + directory + "/plan.json");
}

Plan Plan::load(const std::string &directory) {
  std::string text = readWholeFile(fs::path(directory) / "plan.json");
  return parsePlan(text, [&](const json &kernel) {
    std::string file = kernel.at("binary_file").get<std::string>();
    if (file.find('/') != std::string::npos || file == "..")
      throw InvalidArgument("plan binary '" + file + "' is not a file name");
    return readWholeFile(fs::path(directory) / file);
  });
}
