//===- BundleFile.cpp - A compiled function as a file ---------------------===//

#include "runtime/bundles/BundleFile.h"
#include "runtime/cache/Hash.h"

#include "rudnn/errors.h"
#include "rudnn/version.h"

#include <nlohmann/json.hpp>

#include <cstdio>
#include <map>
#include <set>

using namespace rudnn;
using namespace rudnn::runtime;
using json = nlohmann::json;

namespace {

constexpr const char *kFormat = "rudnn-bundle";

json tensorInfoJson(const TensorInfo &info) {
  return {{"name", info.name},      {"dtype", dtypeName(info.dtype)},
          {"shape", info.shape},    {"role", info.role},
          {"layout", info.layout},  {"align", info.align},
          {"updates", info.updates}};
}

DType dtypeNamed(const std::string &name) {
  for (DType dtype :
       {DType::F32, DType::F16, DType::BF16, DType::I32, DType::Bool})
    if (name == dtypeName(dtype))
      return dtype;
  throw InvalidArgument("unknown element type '" + name + "'");
}

TensorInfo tensorInfo(const json &value) {
  TensorInfo info;
  info.name = value.at("name").get<std::string>();
  info.dtype = dtypeNamed(value.at("dtype").get<std::string>());
  info.shape = value.at("shape").get<std::vector<int64_t>>();
  info.role = value.at("role").get<std::string>();
  info.layout = value.at("layout").get<std::string>();
  info.align = value.at("align").get<int64_t>();
  info.updates = value.at("updates").get<std::string>();
  return info;
}

json tensorContractJson(const TensorContract &t) {
  return {{"name", t.name},
          {"layout", t.layout},
          {"element", static_cast<int>(t.element)},
          {"same_as", t.sameAs},
          {"optional", t.optional},
          {"packing", static_cast<int>(t.packing)},
          {"in_place_of", t.inPlaceOf},
          {"updates", t.updates},
          // What a call's values are checked against (offsets' ends).
          {"sample", static_cast<int>(t.sample)},
          {"counts", std::string(t.counts ? 1 : 0, t.counts)}};
}

json contractJson(const OperatorContract &c) {
  json dims = json::array();
  for (const DimContract &d : c.dims)
    dims.push_back(
        {{"letter", std::string(1, d.letter)},
         {"kind", d.kind},
         {"static", d.isStatic},
         {"min", d.min},
         {"max", d.max},
         {"multiple_of", std::string(d.multipleOf ? 1 : 0, d.multipleOf)},
         {"times_of", std::string(d.timesOf ? 1 : 0, d.timesOf)},
         {"times", d.times},
         {"pieces_of", std::string(d.piecesOf ? 1 : 0, d.piecesOf)},
         {"per", d.per},
         {"plus_of", std::string(d.plusOf ? 1 : 0, d.plusOf)},
         {"plus", d.plus}});
  json operands = json::array(), results = json::array();
  for (const TensorContract &t : c.operands)
    operands.push_back(tensorContractJson(t));
  for (const TensorContract &t : c.results)
    results.push_back(tensorContractJson(t));
  return {{"op", c.op},
          {"dims", dims},
          {"operands", operands},
          {"results", results}};
}

/// Reads contracts into views of strings the bundle keeps.
class ContractReader {
public:
  explicit ContractReader(std::deque<std::string> &strings)
      : strings(strings) {}

  OperatorContract contract(const json &value) {
    OperatorContract c;
    c.op = text(value.at("op"));
    for (const json &d : value.at("dims")) {
      DimContract dim{letter(d.at("letter")), text(d.at("kind")), {}};
      dim.isStatic = d.at("static").get<bool>();
      dim.min = d.at("min").get<int64_t>();
      dim.max = d.at("max").get<int64_t>();
      dim.multipleOf = letter(d.at("multiple_of"), true);
      dim.timesOf = letter(d.at("times_of"), true);
      dim.times = d.at("times").get<int64_t>();
      dim.piecesOf = letter(d.at("pieces_of"), true);
      dim.per = d.at("per").get<int64_t>();
      dim.plusOf = letter(d.at("plus_of"), true);
      dim.plus = d.value("plus", int64_t(0));
      c.dims.push_back(dim);
    }
    for (const json &t : value.at("operands"))
      c.operands.push_back(tensor(t));
    for (const json &t : value.at("results"))
      c.results.push_back(tensor(t));
    return c;
  }

private:
  std::string_view text(const json &value) {
    return strings.emplace_back(value.get<std::string>());
  }
  char letter(const json &value, bool optional = false) {
    const std::string text = value.get<std::string>();
    if (text.size() == 1 || (optional && text.empty()))
      return text.empty() ? 0 : text[0];
    throw InvalidArgument("a dim letter is '" + text + "'");
  }
  template <typename Enum> Enum enumValue(const json &value, int last) {
    const int number = value.get<int>();
    if (number < 0 || number > last)
      throw InvalidArgument("an out-of-range rule " + std::to_string(number));
    return static_cast<Enum>(number);
  }
  TensorContract tensor(const json &value) {
    TensorContract t;
    t.name = text(value.at("name"));
    t.layout = text(value.at("layout"));
    t.element = enumValue<ElementRule>(value.at("element"),
                                       static_cast<int>(ElementRule::Bool));
    t.sameAs = text(value.at("same_as"));
    t.optional = value.at("optional").get<bool>();
    t.packing = enumValue<Packing>(value.at("packing"),
                                   static_cast<int>(Packing::Dense));
    t.inPlaceOf = text(value.at("in_place_of"));
    t.updates = text(value.at("updates"));
    t.sample = enumValue<Sample>(value.value("sample", json(0)),
                                 static_cast<int>(Sample::Pages));
    t.counts = letter(value.value("counts", json("")), true);
    return t;
  }

  std::deque<std::string> &strings;
};

std::string hex64(uint64_t value) {
  char text[17];
  std::snprintf(text, sizeof(text), "%016llx",
                static_cast<unsigned long long>(value));
  return text;
}

} // namespace

std::string BundleFile::write() const {
  json content;
  content["format"] = kFormat;
  content["format_version"] = kFormatVersion;
  content["rudnn"] = version();
  content["function"] = function;
  for (const TensorInfo &info : checks.arguments)
    content["arguments"].push_back(tensorInfoJson(info));
  for (const TensorInfo &info : checks.results)
    content["results"].push_back(tensorInfoJson(info));
  content["operators"] = json::array();
  for (const OperatorCheck &op : checks.operators)
    content["operators"].push_back({{"contract", contractJson(op.contract)},
                                    {"operand_argument", op.operandArgument},
                                    {"result_of", op.resultOf}});
  content["in_place"] = checks.inPlace;
  for (const auto &[target, plan] : plans) {
    Plan built = plan;
    for (PlanKernel &kernel : built.kernels)
      kernel.binary = kernel.build();
    content["targets"][target] = built.toJson(/*inlineBinaries=*/true);
  }
  const std::string body = content.dump();
  return json{{"checksum", hex64(hash64(body))}, {"content", body}}.dump() +
         "\n";
}

namespace {

/// The array `key` of `content` (none when `optional` and absent).
json list(const json &content, const char *key, bool optional = false) {
  if (optional && !content.contains(key))
    return json::array();
  const json &value = content.at(key);
  if (!value.is_array())
    throw InvalidArgument(std::string("malformed: '") + key +
                          "' is not a list");
  return value;
}

/// Every index, name, rank, element type, layout and shape the checks and
/// plans hold, against each other: what a call's checks and a plan's
/// executor then index with, unchecked. Throws InvalidArgument saying what
/// is wrong.
class Validator {
public:
  explicit Validator(const BundleFile &file)
      : file(file), checks(file.checks) {}

  void run() {
    for (size_t i = 0; i < checks.arguments.size(); ++i)
      tensorInfo(checks.arguments[i], "argument #" + std::to_string(i));
    for (size_t i = 0; i < checks.results.size(); ++i)
      tensorInfo(checks.results[i], "result #" + std::to_string(i));
    names();
    if (checks.operators.empty())
      fail("it holds no operator");
    for (size_t o = 0; o < checks.operators.size(); ++o)
      operatorCheck(checks.operators[o], o);
    if (file.plans.empty())
      fail("it holds no target");
    for (const auto &[target, plan] : file.plans)
      planCheck(target, plan);
  }

private:
  [[noreturn]] static void fail(const std::string &why) {
    throw InvalidArgument(why);
  }
  static std::string quoted(std::string_view text) {
    return "'" + std::string(text) + "'";
  }
  static bool isLetter(char c) {
    return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
  }
  /// Names are matched exactly and shown in messages.
  static bool isName(std::string_view name) {
    if (name.empty())
      return false;
    for (char c : name)
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f)
        return false;
    return true;
  }
  static void layoutLetters(std::string_view layout, const std::string &what) {
    for (char c : layout)
      if (!isLetter(c))
        fail(what + " has layout " + quoted(layout) +
             ": a layout is one letter per dim");
  }

  void tensorInfo(const TensorInfo &info, const std::string &what) {
    if (!isName(info.name))
      fail(what + " is named " + quoted(info.name) +
           ": a name is not empty and has no control character");
    const std::string tensor = what + " " + quoted(info.name);
    for (size_t d = 0; d < info.shape.size(); ++d)
      if (info.shape[d] < -1)
        fail(tensor + " has dim " + std::to_string(d) + " of size " +
             std::to_string(info.shape[d]) +
             ": a size is at least 0, or -1 where it is dynamic");
    // A call's checks read the size of each layout letter's dim.
    if (!info.layout.empty() && info.layout.size() != info.shape.size())
      fail(tensor + " has layout " + quoted(info.layout) + " of " +
           std::to_string(info.layout.size()) + " letters for rank " +
           std::to_string(info.shape.size()));
    layoutLetters(info.layout, tensor);
    if (info.align != 0 &&
        (info.align < 16 || (info.align & (info.align - 1)) != 0))
      fail(tensor + " promises " + std::to_string(info.align) +
           "-byte alignment: 0 or a power of two of at least 16");
  }

  /// Arguments, results and buffers are bound by name.
  void names() {
    std::map<std::string_view, const TensorInfo *> arguments, results;
    for (const TensorInfo &info : checks.arguments)
      if (!arguments.emplace(info.name, &info).second)
        fail("two arguments are named " + quoted(info.name));
    for (const TensorInfo &info : checks.results) {
      if (!results.emplace(info.name, &info).second)
        fail("two results are named " + quoted(info.name));
      // Only an argument updated in place is returned under its own name.
      if (arguments.count(info.name) && info.updates != info.name)
        fail("result " + quoted(info.name) +
             " is named as an argument it does not update");
      if (info.updates.empty())
        continue;
      auto updated = arguments.find(info.updates);
      if (updated == arguments.end())
        fail("result " + quoted(info.name) + " updates " +
             quoted(info.updates) + ", which names no argument");
      if (updated->second->dtype != info.dtype ||
          updated->second->shape.size() != info.shape.size())
        fail("result " + quoted(info.name) + " updates argument " +
             quoted(info.updates) + " of another element type or rank");
    }
    for (const auto &[result, argument] : checks.inPlace)
      if (!results.count(result) || !arguments.count(argument))
        fail("the in-place pair (" + quoted(result) + ", " + quoted(argument) +
             ") names no result " + quoted(result) + " or no argument " +
             quoted(argument));
  }

  void contract(const OperatorContract &c, const std::string &where) {
    std::set<char> letters;
    for (const DimContract &d : c.dims) {
      if (!isLetter(d.letter) || !letters.insert(d.letter).second)
        fail(where + " states dim " + quoted(std::string(1, d.letter)) +
             " twice or names a dim by something other than a letter");
      if ((d.multipleOf && !isLetter(d.multipleOf)) ||
          (d.timesOf && !isLetter(d.timesOf)) ||
          (d.piecesOf && !isLetter(d.piecesOf)) ||
          (d.plusOf && !isLetter(d.plusOf)) || d.per < 0)
        fail(where + ": dim " + d.letter +
             " refers to a dim by other than a letter");
      if (d.min > d.max)
        fail(where + ": dim " + d.letter + " ranges from " +
             std::to_string(d.min) + " to " + std::to_string(d.max));
    }
    std::set<std::string_view> tensors;
    for (const auto *list : {&c.operands, &c.results})
      for (const TensorContract &t : *list) {
        if (!isName(t.name) || !tensors.insert(t.name).second)
          fail(where + " names two tensors " + quoted(t.name) +
               " or one by an empty name");
        layoutLetters(t.layout, where + ": " + quoted(t.name));
        if (t.counts && !isLetter(t.counts))
          fail(where + ": " + quoted(t.name) +
               " counts up to a dim named by other than a letter");
      }
    for (const auto *list : {&c.operands, &c.results})
      for (const TensorContract &t : *list) {
        if (!t.sameAs.empty() && !tensors.count(t.sameAs))
          fail(where + ": " + quoted(t.name) + " has the element type of " +
               quoted(t.sameAs) + ", which the contract does not name");
        for (std::string_view operand : {t.inPlaceOf, t.updates})
          if (!operand.empty() && c.operandIndex(operand) < 0)
            fail(where + ": " + quoted(t.name) + " is written over " +
                 quoted(operand) + ", which is no operand");
      }
  }

  static bool admits(ElementRule rule, DType dtype) {
    switch (rule) {
    case ElementRule::Float:
      return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16;
    case ElementRule::F32:
      return dtype == DType::F32;
    case ElementRule::I32:
      return dtype == DType::I32;
    case ElementRule::Bool:
      return dtype == DType::Bool;
    case ElementRule::SameAs:
      return true; // against the other tensor, below
    }
    return false;
  }

  void operatorCheck(const OperatorCheck &op, size_t index) {
    const OperatorContract &c = op.contract;
    const std::string where =
        "operator #" + std::to_string(index) + " (" + std::string(c.op) + ")";
    if (!isName(c.op))
      fail("operator #" + std::to_string(index) + " has no name");
    contract(c, where);
    if (op.operandArgument.size() != c.operands.size() ||
        op.resultOf.size() != c.results.size())
      fail(where + ": its bindings do not match its contract");

    // Each contract tensor with the argument or result bound to it.
    struct Bound {
      const TensorContract *tensor;
      const TensorInfo *info;
      const char *kind;
    };
    std::vector<Bound> bound;
    auto bind = [&](const std::vector<TensorContract> &tensors,
                    const std::vector<int> &indices,
                    const std::vector<TensorInfo> &infos, const char *role,
                    const char *kind) {
      for (size_t k = 0; k < tensors.size(); ++k) {
        const int i = indices[k];
        if (i < -1 || i >= static_cast<int>(infos.size()))
          fail(where + ": " + role + " " + quoted(tensors[k].name) + " binds " +
               kind + " #" + std::to_string(i) + ", the function has " +
               std::to_string(infos.size()));
        if (i >= 0)
          bound.push_back({&tensors[k], &infos[i], kind});
        else if (role == std::string("operand") && !tensors[k].optional)
          fail(where + ": operand " + quoted(tensors[k].name) +
               " is required, but binds no argument");
      }
    };
    bind(c.operands, op.operandArgument, checks.arguments, "operand",
         "argument");
    bind(c.results, op.resultOf, checks.results, "result", "result");

    // Static sizes each letter takes, and where.
    std::map<char, std::pair<int64_t, std::string>> sizes;
    for (const Bound &b : bound) {
      const TensorContract &t = *b.tensor;
      const TensorInfo &info = *b.info;
      const std::string tensor = std::string(b.kind) + " " + quoted(info.name);
      if (t.layout.size() != info.shape.size())
        fail(where + ": " + tensor + " has rank " +
             std::to_string(info.shape.size()) + ", but " + quoted(t.name) +
             " is laid out as " + quoted(t.layout) + " (rank " +
             std::to_string(t.layout.size()) + ")");
      if (!admits(t.element, info.dtype))
        fail(where + ": " + tensor + " is " + dtypeName(info.dtype) + ", but " +
             quoted(t.name) + " is " + OperatorContract::describe(t));
      if (t.element == ElementRule::SameAs)
        for (const Bound &other : bound)
          if (other.tensor->name == t.sameAs && other.info->dtype != info.dtype)
            fail(where + ": " + tensor + " is " + dtypeName(info.dtype) +
                 ", but " + quoted(t.name) + " is as " + quoted(t.sameAs) +
                 ", which is " + dtypeName(other.info->dtype));
      for (size_t d = 0; d < info.shape.size(); ++d) {
        if (info.shape[d] < 0)
          continue;
        const char letter = t.layout[d];
        const std::string dim = tensor + " dim " + std::to_string(d) + " (" +
                                letter + ") of size " +
                                std::to_string(info.shape[d]);
        auto [known, added] = sizes.try_emplace(letter, info.shape[d], tensor);
        if (!added && known->second.first != info.shape[d])
          fail(where + ": " + dim + " differs from " + known->second.second +
               " (" + std::to_string(known->second.first) + ")");
        if (const DimContract *rule = c.dim(letter);
            rule && (info.shape[d] < rule->min || info.shape[d] > rule->max))
          fail(where + ": " + dim + " is outside " + std::to_string(rule->min) +
               " to " + std::to_string(rule->max));
      }
    }
    // The kernels are compiled for one size of each static dim: a call must
    // not be free to pass another.
    for (const DimContract &d : c.dims) {
      if (!d.isStatic || d.min == d.max || sizes.count(d.letter))
        continue;
      for (const Bound &b : bound)
        if (b.tensor->layout.find(d.letter) != std::string_view::npos)
          fail(where + ": static dim " + d.letter + " (" + std::string(d.kind) +
               ") has a size in no argument or result, so a call could pass "
               "a size its kernels were not compiled for");
    }
  }

  void planCheck(const std::string &target, const Plan &plan) {
    const std::string where = "target " + quoted(target);
    if (target != "emulation" && !isArch(target))
      fail("a target is named " + quoted(target) +
           ": expected emulation or sm_XY");
    if (plan.paramSources.size() != plan.params.size())
      fail(where + ": its plan does not say where its parameters come from");
    for (size_t k = 0; k < plan.kernels.size(); ++k)
      if (plan.kernels[k].entry.empty() || plan.kernels[k].binary.empty())
        fail(where + ": kernel #" + std::to_string(k) + " " +
             quoted(plan.kernels[k].entry) + " has no entry or no binary");
    for (size_t l = 0; l < plan.launches.size(); ++l) {
      const PlanLaunch &launch = plan.launches[l];
      // The limits of every GPU rudnn targets, which the emulator keeps too.
      const uint64_t threads =
          uint64_t(launch.block[0]) * launch.block[1] * launch.block[2];
      if (launch.block[0] > 1024 || launch.block[1] > 1024 ||
          launch.block[2] > 64 || threads > 1024)
        fail(where + ": launch #" + std::to_string(l) + " has a block of " +
             std::to_string(launch.block[0]) + " x " +
             std::to_string(launch.block[1]) + " x " +
             std::to_string(launch.block[2]) + " threads (at most 1024)");
      if (launch.dynamicSharedBytes > kMaxSharedBytes)
        fail(where + ": launch #" + std::to_string(l) + " asks for " +
             std::to_string(launch.dynamicSharedBytes) +
             " bytes of shared memory (at most " +
             std::to_string(kMaxSharedBytes) + ")");
    }
    const std::vector<int> sources = checks.bufferSources(plan);
    const int arguments = static_cast<int>(checks.arguments.size());
    for (size_t b = 0; b < plan.buffers.size(); ++b) {
      const PlanBuffer &buffer = plan.buffers[b];
      if (buffer.access == BufferAccess::Workspace)
        continue;
      const std::string name = "buffer " + quoted(buffer.name);
      if (sources[b] < 0)
        fail(where + ": " + name + " names no argument or result");
      // Kernels write only results and arguments updated in place.
      const bool argument = sources[b] < arguments;
      if (argument != (buffer.access != BufferAccess::Out))
        fail(where + ": " + name +
             (argument ? " is written, but is an argument"
                       : " is read, but is a result"));
    }
    for (size_t p = 0; p < plan.paramSources.size(); ++p) {
      const ParamSource &source = plan.paramSources[p];
      if (source.kind != ParamSource::Kind::Dim &&
          source.kind != ParamSource::Kind::Stride)
        continue;
      const int s = sources[source.buffer]; // a bound buffer (Plan::validate)
      const TensorInfo &info =
          s < arguments ? checks.arguments[s] : checks.results[s - arguments];
      if (source.index >= info.shape.size())
        fail(where + ": parameter " + quoted(plan.params[p]) + " reads dim " +
             std::to_string(source.index) + " of " + quoted(info.name) +
             ", which has rank " + std::to_string(info.shape.size()));
    }
  }

  /// "sm_90", "sm_90a".
  static bool isArch(std::string_view target) {
    if (target.rfind("sm_", 0) != 0 || target.size() == 3)
      return false;
    size_t i = 3;
    while (i < target.size() && target[i] >= '0' && target[i] <= '9')
      ++i;
    return i > 3 && (i == target.size() || target.substr(i) == "a");
  }

  static constexpr uint32_t kMaxSharedBytes = 227 * 1024;

  const BundleFile &file;
  const FunctionChecks &checks;
};

} // namespace

BundleFile BundleFile::read(const std::string &text, const std::string &path) {
  try {
    return parse(text);
  } catch (const InvalidArgument &error) {
    throw InvalidArgument("bundle '" + path + "': " + error.what());
  }
}

BundleFile BundleFile::parse(const std::string &text) {
  json outer;
  try {
    outer = json::parse(text);
  } catch (const json::exception &) {
    throw InvalidArgument("not a bundle (not JSON)");
  }
  if (!outer.is_object() || !outer.contains("checksum") ||
      !outer.contains("content") || !outer["content"].is_string())
    throw InvalidArgument("not a bundle");
  const std::string body = outer["content"].get<std::string>();
  if (outer["checksum"] != hex64(hash64(body)))
    throw InvalidArgument("damaged: its checksum does not match its content");
  BundleFile file;
  try {
    const json content = json::parse(body);
    if (!content.is_object() || content.at("format") != kFormat)
      throw InvalidArgument("not a bundle");
    if (content.at("format_version") != kFormatVersion)
      throw InvalidArgument(
          "format version " + content.at("format_version").dump() +
          ", this rudnn reads " + std::to_string(kFormatVersion));
    if (content.at("rudnn") != version())
      throw InvalidArgument("made by rudnn " +
                            content.at("rudnn").get<std::string>() +
                            ", this is rudnn " + version() + ": save it again");
    file.function = content.at("function").get<std::string>();
    for (const json &info : list(content, "arguments"))
      file.checks.arguments.push_back(tensorInfo(info));
    for (const json &info : list(content, "results", /*optional=*/true))
      file.checks.results.push_back(tensorInfo(info));
    ContractReader reader(file.strings);
    for (const json &op : list(content, "operators"))
      file.checks.operators.push_back(
          {reader.contract(op.at("contract")),
           op.at("operand_argument").get<std::vector<int>>(),
           op.at("result_of").get<std::vector<int>>()});
    file.checks.inPlace =
        content.at("in_place")
            .get<std::vector<std::pair<std::string, std::string>>>();
    const json &targets = content.at("targets");
    if (!targets.is_object())
      throw InvalidArgument("malformed: 'targets' is not an object");
    for (const auto &[target, plan] : targets.items())
      try {
        file.plans.emplace(target, Plan::fromJson(plan.get<std::string>()));
      } catch (const InvalidArgument &error) {
        throw InvalidArgument("target '" + target + "': " + error.what());
      }
  } catch (const json::exception &error) {
    throw InvalidArgument(std::string("malformed: ") + error.what());
  }
  Validator(file).run();
  return file;
}
