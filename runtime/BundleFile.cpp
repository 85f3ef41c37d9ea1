//===- BundleFile.cpp - A compiled function as a file ---------------------===//

#include "runtime/BundleFile.h"
#include "runtime/Hash.h"

#include "rudnn/errors.h"
#include "rudnn/version.h"

#include <nlohmann/json.hpp>

#include <cstdio>

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
          {"updates", t.updates}};
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

BundleFile BundleFile::read(const std::string &text, const std::string &path) {
  auto bad = [&](const std::string &why) -> InvalidArgument {
    return InvalidArgument("bundle '" + path + "': " + why);
  };
  json outer;
  try {
    outer = json::parse(text);
  } catch (const json::exception &) {
    throw bad("not a bundle (not JSON)");
  }
  if (!outer.is_object() || !outer.contains("checksum") ||
      !outer.contains("content") || !outer["content"].is_string())
    throw bad("not a bundle");
  const std::string body = outer["content"].get<std::string>();
  if (outer["checksum"] != hex64(hash64(body)))
    throw bad("damaged: its checksum does not match its content");
  BundleFile file;
  try {
    const json content = json::parse(body);
    if (content.at("format") != kFormat)
      throw bad("not a bundle");
    if (content.at("format_version") != kFormatVersion)
      throw bad("format version " + content.at("format_version").dump() +
                ", this rudnn reads " + std::to_string(kFormatVersion));
    if (content.at("rudnn") != version())
      throw bad("made by rudnn " + content.at("rudnn").get<std::string>() +
                ", this is rudnn " + version() + ": save it again");
    file.function = content.at("function").get<std::string>();
    for (const json &info : content.at("arguments"))
      file.checks.arguments.push_back(tensorInfo(info));
    for (const json &info : content.value("results", json::array()))
      file.checks.results.push_back(tensorInfo(info));
    ContractReader reader(file.strings);
    for (const json &op : content.at("operators"))
      file.checks.operators.push_back(
          {reader.contract(op.at("contract")),
           op.at("operand_argument").get<std::vector<int>>(),
           op.at("result_of").get<std::vector<int>>()});
    file.checks.inPlace =
        content.at("in_place")
            .get<std::vector<std::pair<std::string, std::string>>>();
    for (const auto &[target, plan] : content.at("targets").items())
      file.plans.emplace(target, Plan::fromJson(plan.get<std::string>()));
  } catch (const json::exception &error) {
    throw bad(std::string("malformed: ") + error.what());
  }
  // Indices a damaged or hand-made file could point past the lists with.
  const int views = static_cast<int>(file.checks.arguments.size() +
                                     file.checks.results.size());
  for (const OperatorCheck &op : file.checks.operators) {
    if (op.operandArgument.size() != op.contract.operands.size() ||
        op.resultOf.size() != op.contract.results.size())
      throw bad("an operator's bindings do not match its contract");
    for (int i : op.operandArgument)
      if (i >= static_cast<int>(file.checks.arguments.size()))
        throw bad("an operand binds no argument");
    for (int i : op.resultOf)
      if (i >= static_cast<int>(file.checks.results.size()) || i >= views)
        throw bad("a result binds no result");
  }
  if (file.plans.empty())
    throw bad("it holds no target");
  return file;
}
