//===- NormOperators.cpp - The norms' references by name ------------------===//
//
// The adapters from contract names to the typed float64 reference, and
// their registration.
//
//===----------------------------------------------------------------------===//

#include "lib/reference/OperatorReferences.h"
#include "lib/reference/norm/NormReference.h"

using namespace rudnn;
using namespace rudnn::reference;

namespace {

/// x [N, C] or [M, N, C]: the statistics take its rows' shape.
struct NormCall {
  NormInputs in;
  std::vector<int64_t> rows, stats;
  int64_t features;
};

NormCall normCall(const NamedValues &operands) {
  const Values &x = operand(operands, "x");
  NormCall call;
  call.in.x = x.data;
  auto optional = [&](const std::string &name) {
    auto it = operands.find(name);
    return it == operands.end() ? std::vector<double>() : it->second.data;
  };
  call.in.residual = optional("residual");
  call.in.gamma = optional("gamma");
  call.in.beta = optional("beta");
  call.rows = x.shape;
  call.stats.assign(x.shape.begin(), x.shape.end() - 1);
  call.features = x.shape.back();
  return call;
}

NamedValues moments(const NamedValues &operands,
                    const std::map<std::string, double> &) {
  NormCall call = normCall(operands);
  NormOutputs out = layerNorm(call.in, call.features, 0.0);
  return {{"mean", {call.stats, out.mean}}, {"var", {call.stats, out.var}}};
}

NamedValues
layerNormReference(const NamedValues &operands,
                   const std::map<std::string, double> &attributes) {
  NormCall call = normCall(operands);
  NormOutputs out =
      layerNorm(call.in, call.features, attributeOr(attributes, "eps", 1e-5));
  return {{"y", {call.rows, out.y}},
          {"mean", {call.stats, out.mean}},
          {"rstd", {call.stats, out.rstd}},
          {"h", {call.rows, out.h}}};
}

NamedValues rmsNormReference(const NamedValues &operands,
                             const std::map<std::string, double> &attributes) {
  NormCall call = normCall(operands);
  NormOutputs out =
      rmsNorm(call.in, call.features, attributeOr(attributes, "eps", 1e-5));
  return {{"y", {call.rows, out.y}},
          {"rstd", {call.stats, out.rstd}},
          {"h", {call.rows, out.h}}};
}

template <bool Layer>
NamedValues normBackwardReference(const NamedValues &operands,
                                  const std::map<std::string, double> &) {
  const Values &x = operand(operands, "x");
  auto optional = [&](const std::string &name) {
    auto it = operands.find(name);
    return it == operands.end() ? std::vector<double>() : it->second.data;
  };
  const int64_t features = x.shape.back();
  NormGradients out = normBackward(
      operand(operands, "dy").data, x.data,
      Layer ? operand(operands, "mean").data : std::vector<double>(),
      operand(operands, "rstd").data, optional("gamma"), features);
  NamedValues results = {{"dx", {x.shape, out.dx}},
                         {"dgamma", {{features}, out.dgamma}}};
  if (Layer)
    results["dbeta"] = {{features}, out.dbeta};
  return results;
}

} // namespace

void rudnn::reference::registerNormReferences(ReferenceRegistry &registry) {
  registry.add("rudnn.moments", moments);
  registry.add("rudnn.layer_norm", layerNormReference);
  registry.add("rudnn.rms_norm", rmsNormReference);
  registry.add("rudnn.layer_norm_backward", normBackwardReference<true>);
  registry.add("rudnn.rms_norm_backward", normBackwardReference<false>);
}
