//===- OperatorWalkTest.cpp - Every operand and attribute, C++ and C ------===//
//
// Walks every operator of the dialect and builds its function through the
// generic entry from C++ (operatorFunction) and from C
// (rudnn_operator_function) with every operand its contract declares,
// optional ones included, every result asked for, and every attribute a
// caller sets: so no operand or option is out of reach of either form.
// (test/python/test_operator_walk.py does the same from Python.)
//
//===----------------------------------------------------------------------===//

#include "rudnn/rudnn.h"
#include "rudnn/rudnn.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

using namespace rudnn;

namespace {

/// A value for each attribute a caller sets. An operator gaining an
/// attribute adds it here or to kChosenBySpecialize.
const std::map<std::string, AttributeValue> &kCallerAttributes() {
  static const std::map<std::string, AttributeValue> values = {
      {"batch_first", true},
      {"beta_logits", true},
      {"bidirectional", true},
      {"causal", true},
      {"deterministic", true},
      {"eps", 1e-5},
      {"gate_lower_bound", -5.0},
      {"grouped_heads", false},
      {"non_causal", true},
      {"num_layers", int64_t(2)},
      {"qk_l2norm", true},
      {"rotary_interleaved", true},
      {"save_boundaries", true},
      {"save_gates", true},
      {"save_states", true},
      {"save_tiles", true},
      {"scale", 0.25},
      {"softcap", 30.0},
      {"window_left", int64_t(3)},
      {"window_right", int64_t(0)}};
  return values;
}

/// Attributes a caller sets on operators whose name starts so: KDA's saved
/// boundaries and tiles need the chunk they were saved at.
const std::vector<std::pair<std::string, std::pair<std::string, int64_t>>>
    kFamilyAttributes = {{"rudnn.kda", {"chunk", 16}}};

/// Tensors whose presence widens a contract (an LSTM's biases).
const std::vector<std::pair<std::string, size_t>> kWideningRanks = {
    {"bias_ih_l0", 1}};

/// Attributes rudnn-specialize chooses for the target (tile and launch
/// shapes), which a call may override but need not.
const std::set<std::string> kChosenBySpecialize = {
    "allow_tf32",      "block_k",        "block_q",         "block_rows",
    "blocks",          "chunk",          "decode_blocks",   "decode_queries",
    "per_step",        "rows_per_block", "splits",          "threads",
    "units",           "warps",          "weights_on_chip", "wgmma",
    "wgmma_projection"};

/// Sizes for every dim letter that fit the contract: 5 for a dynamic dim,
/// 16 for a static one (within its bounds), twice the divisor for a
/// multiple, and the stated relation for a derived one (pieces by the
/// attribute `attributes` give it).
std::map<char, int64_t> sizesFor(const OperatorSignature &signature,
                                 const OperatorAttributes &attributes) {
  std::map<char, int64_t> sizes;
  for (const SignatureDim &dim : signature.dims)
    if (!dim.timesOf && !dim.piecesOf)
      sizes[dim.letter] =
          std::clamp<int64_t>(dim.isStatic ? 16 : 5, dim.min, dim.max);
  for (const SignatureDim &dim : signature.dims)
    if (dim.multipleOf && sizes.count(dim.multipleOf))
      sizes[dim.letter] = 2 * sizes[dim.multipleOf];
  for (int pass = 0; pass < 3; ++pass)
    for (const SignatureDim &dim : signature.dims)
      if (dim.timesOf && sizes.count(dim.timesOf))
        sizes[dim.letter] = dim.times * sizes[dim.timesOf] + dim.plus;
  for (const SignatureDim &dim : signature.dims)
    for (const auto &[name, value] : attributes)
      if (dim.piecesOf && name == dim.perAttribute) {
        const int64_t per = std::get<int64_t>(value);
        sizes[dim.letter] = (sizes.at(dim.piecesOf) + per - 1) / per +
                            (dim.plusOf ? sizes.at(dim.plusOf) : 0);
      }
  return sizes;
}

/// Zeroed host tensors for every operand of `signature`, f32 floats.
struct WalkTensors {
  std::vector<std::vector<int64_t>> shapes;
  std::vector<std::vector<char>> memory;
  NamedTensors named;
  std::vector<DType> dtypes;
};

DType dtypeOf(const SignatureTensor &tensor) {
  if (tensor.element == "i32")
    return DType::I32;
  if (tensor.element == "bool")
    return DType::Bool;
  return DType::F32; // float, f32, or as another float
}

/// `sizes`, and the shapes of tensors another operator computes (a
/// backward's saved boundaries and tiles, from its forward's results).
WalkTensors
tensorsFor(const OperatorSignature &signature,
           const OperatorAttributes &attributes,
           const std::map<std::string, std::vector<int64_t>> &computed = {}) {
  const std::map<char, int64_t> sizes = sizesFor(signature, attributes);
  WalkTensors walk;
  walk.shapes.reserve(signature.operands.size());
  walk.memory.reserve(signature.operands.size());
  for (const SignatureTensor &operand : signature.operands) {
    std::vector<int64_t> shape;
    if (auto it = computed.find(operand.name); it != computed.end())
      shape = it->second;
    else
      for (char letter : operand.layout)
        shape.push_back(sizes.at(letter));
    int64_t count = 1;
    for (int64_t dim : shape)
      count *= dim;
    const DType dtype = dtypeOf(operand);
    walk.memory.emplace_back(count * dtypeSize(dtype) + 16, 0);
    walk.shapes.push_back(shape);
    walk.dtypes.push_back(dtype);
    walk.named.emplace_back(
        operand.name,
        TensorView::contiguous(walk.memory.back().data(), dtype, shape));
  }
  return walk;
}

/// The attributes a caller sets on `op`; fails for one in neither list.
OperatorAttributes attributesFor(const std::string &op,
                                 const std::vector<std::string> &names) {
  OperatorAttributes attributes;
  for (const std::string &name : names) {
    auto value = kCallerAttributes().find(name);
    bool family = false;
    for (const auto &[prefix, attribute] : kFamilyAttributes)
      if (op.rfind(prefix, 0) == 0 && attribute.first == name) {
        attributes.emplace_back(name, attribute.second);
        family = true;
      }
    if (family)
      continue;
    if (value != kCallerAttributes().end())
      attributes.emplace_back(name, value->second);
    else
      EXPECT_TRUE(kChosenBySpecialize.count(name))
          << op << "'s attribute '" << name << "' is not walked";
  }
  return attributes;
}

std::vector<std::string> resultNames(const OperatorSignature &signature) {
  std::vector<std::string> names;
  for (const SignatureTensor &result : signature.results)
    names.push_back(result.name);
  return names;
}

rudnn_attribute_t cAttribute(const std::string &name,
                             const AttributeValue &value) {
  rudnn_attribute_t a{name.c_str(), RUDNN_ATTRIBUTE_BOOL, 0, 0, nullptr};
  if (const bool *flag = std::get_if<bool>(&value))
    a.integer = *flag;
  else if (const int64_t *integer = std::get_if<int64_t>(&value))
    a = {name.c_str(), RUDNN_ATTRIBUTE_INT, *integer, 0, nullptr};
  else
    a = {name.c_str(), RUDNN_ATTRIBUTE_FLOAT, 0, std::get<double>(value),
         nullptr};
  return a;
}

/// For "<op>_backward": the shapes its forward "<op>" declares for the
/// results it saves for it (the sizes the forward fixes itself, as KDA's
/// tile words), the walk's sizes for its dynamic dims.
std::map<std::string, std::vector<int64_t>>
savedByForward(Context &context, const std::string &op) {
  const std::string suffix = "_backward";
  if (op.size() <= suffix.size() ||
      op.compare(op.size() - suffix.size(), suffix.size(), suffix) != 0)
    return {};
  const std::string forward = op.substr(0, op.size() - suffix.size());
  const OperatorSignature bare = operatorSignature(forward);
  const OperatorAttributes attributes = attributesFor(forward, bare.attributes);
  const OperatorSignature signature = operatorSignature(forward, attributes);
  const std::map<char, int64_t> sizes = sizesFor(signature, attributes);
  const WalkTensors walk = tensorsFor(signature, attributes);
  const Function function = operatorFunction(
      context, forward, attributes, walk.named, resultNames(signature));
  std::map<std::string, std::vector<int64_t>> shapes;
  for (const TensorInfo &result : function.results()) {
    std::vector<int64_t> shape = result.shape;
    for (size_t d = 0; d < shape.size(); ++d)
      if (shape[d] < 0)
        shape[d] = sizes.at(result.layout.at(d));
    shapes[result.name] = shape;
  }
  return shapes;
}

class OperatorWalk : public ::testing::TestWithParam<std::string> {};

TEST_P(OperatorWalk, EveryOperandAndAttributeIsAcceptedFromCxxAndC) {
  const std::string op = GetParam();
  const OperatorSignature bare = operatorSignature(op);
  const OperatorAttributes attributes = attributesFor(op, bare.attributes);
  // The contract for these attributes (an LSTM's weights follow them).
  const OperatorSignature signature =
      operatorSignature(op, attributes, kWideningRanks);
  const std::vector<std::string> results = resultNames(signature);
  ContextOptions options;
  options.backend = BackendKind::Emulation;
  options.cacheDirectory = "";
  Context context(options);
  WalkTensors walk =
      tensorsFor(signature, attributes, savedByForward(context, op));

  std::optional<Function> built;
  try {
    built = operatorFunction(context, op, attributes, walk.named, results);
  } catch (const Error &error) {
    FAIL() << op << ": " << error.what();
  }
  const Function &function = *built;
  // Every operand is an argument, every result returned.
  EXPECT_EQ(function.arguments().size(), signature.operands.size()) << op;
  std::set<std::string> returned;
  for (const TensorInfo &info : function.results())
    returned.insert(info.name);
  for (const std::string &name : results)
    EXPECT_TRUE(returned.count(name)) << op << " does not return " << name;

  // The same from C.
  rudnn_context_options_t cOptions{};
  cOptions.backend = RUDNN_BACKEND_EMULATION;
  cOptions.cache_dir = "";
  rudnn_context_t cContext = nullptr;
  ASSERT_EQ(rudnn_context_create(&cOptions, &cContext), RUDNN_STATUS_OK)
      << rudnn_last_error();
  std::vector<rudnn_attribute_t> cAttributes;
  for (const auto &[name, value] : attributes)
    cAttributes.push_back(cAttribute(name, value));
  std::vector<const char *> names, cResults;
  std::vector<rudnn_tensor_t> tensors;
  for (size_t i = 0; i < walk.named.size(); ++i) {
    names.push_back(walk.named[i].first.c_str());
    tensors.push_back({walk.named[i].second.data,
                       static_cast<rudnn_dtype_t>(walk.dtypes[i]),
                       static_cast<int32_t>(walk.shapes[i].size()),
                       walk.shapes[i].data(), nullptr});
  }
  for (const std::string &name : results)
    cResults.push_back(name.c_str());
  rudnn_function_t cFunction = nullptr;
  EXPECT_EQ(rudnn_operator_function(
                cContext, op.c_str(), cAttributes.data(), cAttributes.size(),
                tensors.size(), names.data(), tensors.data(), cResults.size(),
                cResults.data(), &cFunction),
            RUDNN_STATUS_OK)
      << op << ": " << rudnn_last_error();
  size_t count = 0;
  if (cFunction) {
    EXPECT_EQ(rudnn_function_result_count(cFunction, &count), RUDNN_STATUS_OK);
    EXPECT_EQ(count, function.results().size()) << op;
    rudnn_function_destroy(cFunction);
  }
  rudnn_context_destroy(cContext);
}

INSTANTIATE_TEST_SUITE_P(AllOperators, OperatorWalk,
                         ::testing::ValuesIn(operatorNames()),
                         [](const ::testing::TestParamInfo<std::string> &info) {
                           return info.param.substr(info.param.find('.') + 1);
                         });

TEST(OperatorWalkC, BadCallsAreRefusedByName) {
  rudnn_context_options_t options{};
  options.backend = RUDNN_BACKEND_EMULATION;
  options.cache_dir = "";
  rudnn_context_t context = nullptr;
  ASSERT_EQ(rudnn_context_create(&options, &context), RUDNN_STATUS_OK);
  float rows[12] = {};
  const int64_t shape[2] = {3, 4};
  rudnn_tensor_t x{rows, RUDNN_DTYPE_F32, 2, shape, nullptr};
  const char *names[] = {"x"}, *results[] = {"y"}, *bad[] = {"z"};
  rudnn_function_t function = nullptr;
  EXPECT_EQ(rudnn_operator_function(context, "rudnn.rms_norm", nullptr, 0, 1,
                                    names, &x, 1, results, nullptr),
            RUDNN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(rudnn_operator_function(context, "rudnn.rms_norm", nullptr, 0, 1,
                                    names, &x, 1, nullptr, &function),
            RUDNN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(rudnn_operator_function(context, "rudnn.rms_norm", nullptr, 0, 1,
                                    names, &x, 1, bad, &function),
            RUDNN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(rudnn_last_error()).find("'z' is not a result"),
            std::string::npos)
      << rudnn_last_error();
  EXPECT_EQ(function, nullptr);
  ASSERT_EQ(rudnn_operator_function(context, "rudnn.rms_norm", nullptr, 0, 1,
                                    names, &x, 1, results, &function),
            RUDNN_STATUS_OK)
      << rudnn_last_error();
  // Results allocated from the function's shapes, then the call.
  int64_t dims[2] = {};
  ASSERT_EQ(rudnn_function_result_shape(function, &x, 1, 0, dims),
            RUDNN_STATUS_OK)
      << rudnn_last_error();
  EXPECT_EQ(dims[0], 3);
  EXPECT_EQ(dims[1], 4);
  rudnn_function_destroy(function);
  rudnn_context_destroy(context);
}

} // namespace
