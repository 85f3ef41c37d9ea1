//===- NormContracts.cpp - The contracts of the normalisations ------------===//
//
// x is [N, C] or [M, N, C], so each operator has a contract per rank: the
// statistics are laid out as x's rows.
//
//===----------------------------------------------------------------------===//

#include "dialects/IR/norm/NormContracts.h"

using namespace rudnn;

std::string_view rudnn::normKindName(NormOperator op) {
  switch (op) {
  case NormOperator::Moments:
    return "moments";
  case NormOperator::LayerNorm:
    return "layer_norm";
  case NormOperator::RmsNorm:
    return "rms_norm";
  }
  return "";
}

std::optional<NormOperator> rudnn::normKindNamed(std::string_view name) {
  for (NormOperator op :
       {NormOperator::Moments, NormOperator::LayerNorm, NormOperator::RmsNorm})
    if (normKindName(op) == name)
      return op;
  return std::nullopt;
}

namespace {

OperatorContract build(NormOperator op, bool outerRows) {
  OperatorContract c;
  const std::string_view rows = outerRows ? "MNC" : "NC",
                         stats = outerRows ? "MN" : "N";
  c.dims = {{'N', "dim", "rows"},
            {'C', "features", "the normalised dim", true, 1, kNormMaxFeatures}};
  if (outerRows)
    c.dims.insert(c.dims.begin(),
                  {'M', "dim", "outer rows", false, 1, kNormMaxOuterRows});
  auto statistic = [&](std::string_view name, std::string_view doc) {
    TensorContract t = contractTensor(name, stats, ElementRule::F32, doc);
    t.packing = Packing::Dense;
    return t;
  };
  auto likeX = [&](std::string_view name, std::string_view layout,
                   std::string_view doc) {
    return withElementsOf(contractTensor(name, layout, ElementRule::Float, doc),
                          "x");
  };
  auto optional = [](TensorContract t) {
    t.optional = true;
    return t;
  };
  c.operands = {contractTensor("x", rows, ElementRule::Float,
                               "the rows, normalised along their last dim")};
  if (op == NormOperator::Moments) {
    c.op = "rudnn.moments";
    c.summary = "Mean and population variance over the last dim";
    c.results = {statistic("mean", "each row's mean"),
                 statistic("var", "each row's population variance")};
    return c;
  }
  const bool layer = op == NormOperator::LayerNorm;
  c.op = layer ? "rudnn.layer_norm" : "rudnn.rms_norm";
  c.summary = layer ? "LayerNorm over the last dim, with an optional residual"
                    : "RMSNorm over the last dim, with an optional residual";
  c.operands.push_back(optional(likeX(
      "residual", rows, "added to x first: h = x + residual is normalised")));
  TensorContract gamma =
      optional(likeX("gamma", "C", "the scale of each feature (1 if absent)"));
  gamma.packing = Packing::Dense;
  c.operands.push_back(gamma);
  if (layer) {
    TensorContract beta =
        optional(likeX("beta", "C", "the shift of each feature (0 if absent)"));
    beta.packing = Packing::Dense;
    c.operands.push_back(beta);
  }
  c.results = {likeX("y", rows, "the normalised rows")};
  if (layer)
    c.results.push_back(optional(
        statistic("mean", "each row's mean (of h), for the backward")));
  c.results.push_back(optional(
      statistic("rstd", layer ? "1 / sqrt(var + eps) of each row of h"
                              : "1 / sqrt(mean(h²) + eps) of each row")));
  c.results.push_back(optional(
      likeX("h", rows, "x + residual (x without a residual), as written")));
  return c;
}

OperatorContract buildBackward(NormOperator op, bool outerRows) {
  OperatorContract c;
  const bool layer = op == NormOperator::LayerNorm;
  const std::string_view rows = outerRows ? "MNC" : "NC",
                         stats = outerRows ? "MN" : "N",
                         forward =
                             layer ? "rudnn.layer_norm" : "rudnn.rms_norm";
  c.op = layer ? "rudnn.layer_norm_backward" : "rudnn.rms_norm_backward";
  c.summary = layer ? "LayerNorm's gradients from the saved mean and rstd"
                    : "RMSNorm's gradients from the saved rstd";
  c.dims = {{'N', "dim", "rows"},
            {'C', "features", "the normalised dim", true, 1, kNormMaxFeatures}};
  if (outerRows)
    c.dims.insert(c.dims.begin(),
                  {'M', "dim", "outer rows", false, 1, kNormMaxOuterRows});
  auto likeX = [&](std::string_view name, std::string_view layout,
                   std::string_view doc) {
    return withElementsOf(contractTensor(name, layout, ElementRule::Float, doc),
                          "x");
  };
  auto saved = [&](std::string_view name, std::string_view doc) {
    TensorContract t = contractTensor(name, stats, ElementRule::F32, doc);
    t.packing = Packing::Dense;
    t.resultOf = forward;
    return t;
  };
  TensorContract gamma =
      likeX("gamma", "C", "the forward's scale (1 if absent)");
  gamma.packing = Packing::Dense;
  gamma.optional = true;
  c.operands = {likeX("dy", rows, "the gradient of y"),
                contractTensor("x", rows, ElementRule::Float,
                               "the rows the forward normalised (h with a "
                               "residual)")};
  if (layer)
    c.operands.push_back(saved("mean", "the forward's mean of each row"));
  c.operands.push_back(saved("rstd", "the forward's rstd of each row"));
  c.operands.push_back(gamma);
  auto column = [&](std::string_view name, std::string_view doc) {
    TensorContract t = likeX(name, "C", doc);
    t.packing = Packing::Dense;
    t.optional = true;
    return t;
  };
  c.results = {likeX("dx", rows, "the gradient of x (and of the residual)"),
               column("dgamma", "Σ over the rows of dy·x̂, deterministic")};
  if (layer)
    c.results.push_back(column("dbeta", "Σ over the rows of dy"));
  return c;
}

} // namespace

const OperatorContract &rudnn::normBackwardContract(NormOperator op,
                                                    bool outerRows) {
  static const OperatorContract contracts[2][2] = {
      {buildBackward(NormOperator::LayerNorm, false),
       buildBackward(NormOperator::LayerNorm, true)},
      {buildBackward(NormOperator::RmsNorm, false),
       buildBackward(NormOperator::RmsNorm, true)}};
  return contracts[op == NormOperator::RmsNorm][outerRows ? 1 : 0];
}

const OperatorContract &rudnn::normContract(NormOperator op, bool outerRows) {
  static const OperatorContract contracts[3][2] = {
      {build(NormOperator::Moments, false), build(NormOperator::Moments, true)},
      {build(NormOperator::LayerNorm, false),
       build(NormOperator::LayerNorm, true)},
      {build(NormOperator::RmsNorm, false),
       build(NormOperator::RmsNorm, true)}};
  return contracts[static_cast<int>(op)][outerRows ? 1 : 0];
}
