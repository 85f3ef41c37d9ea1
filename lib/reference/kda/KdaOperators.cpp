//===- KdaOperators.cpp - KDA's references by name ------------------------===//
//
// The adapters from contract names to the typed float64 reference, and
// their registration.
//
//===----------------------------------------------------------------------===//

#include "lib/reference/OperatorReferences.h"
#include "lib/reference/kda/KdaReference.h"

using namespace rudnn;
using namespace rudnn::reference;

namespace {

/// The forward's inputs and shape, shared by the forward and the backward;
/// with grouped value heads (q with fewer heads than v) q and k repeated
/// for every value head sharing them.
std::pair<KdaShape, KdaInputs> kdaInputs(const NamedValues &operands) {
  const Values &q = operand(operands, "q"), &v = operand(operands, "v");
  KdaShape shape{q.shape[0], q.shape[1], v.shape[2], q.shape[3], v.shape[3]};
  const int64_t rows = shape.batch * shape.length;
  auto perValueHead = [&](const Values &x) {
    return repeatHeads(x.data, rows, q.shape[2], shape.heads, shape.featureK);
  };
  KdaInputs in{perValueHead(q),
               perValueHead(operand(operands, "k")),
               v.data,
               operand(operands, "g").data,
               operand(operands, "beta").data,
               {}};
  if (auto it = operands.find("initial_state"); it != operands.end())
    in.initialState = it->second.data;
  return {shape, in};
}

/// The input transforms a KDA op's attributes and operands ask for.
KdaInputTransforms kdaTransforms(const NamedValues &operands,
                                 const std::map<std::string, double> &attrs) {
  KdaInputTransforms t;
  t.qkL2Norm = attributeOr(attrs, "qk_l2norm", 0) != 0;
  t.betaLogits = attributeOr(attrs, "beta_logits", 0) != 0;
  t.lowerBound = attributeOr(attrs, "gate_lower_bound", 0);
  if (auto it = operands.find("a_log"); it != operands.end())
    t.aLog = it->second.data;
  if (auto it = operands.find("dt_bias"); it != operands.end())
    t.dtBias = it->second.data;
  return t;
}

NamedValues kda(const NamedValues &operands,
                const std::map<std::string, double> &attributes) {
  auto [s, raw] = kdaInputs(operands);
  const KdaInputs in =
      transformKdaInputs(s, raw, kdaTransforms(operands, attributes));
  const int64_t chunk = static_cast<int64_t>(attribute(attributes, "chunk"));
  KdaOutputs out = kdaForward(s, in, attribute(attributes, "scale"), chunk);
  const int64_t N = (s.length + chunk - 1) / chunk;
  return {{"output", {{s.batch, s.length, s.heads, s.featureV}, out.output}},
          {"final_state",
           {{s.batch, s.heads, s.featureK, s.featureV}, out.finalState}},
          {"boundaries",
           {{N, s.batch, s.heads, s.featureK, s.featureV}, out.boundaries}}};
}

/// A backward's gradients by name: through the input transforms to the raw
/// inputs, q's and k's summed over each group of value heads; `states` the
/// rows of the state gradient (B, or S packed sequences).
NamedValues kdaGradients(const NamedValues &operands,
                         const std::map<std::string, double> &attributes,
                         const KdaShape &s, const KdaInputs &raw,
                         KdaGradients grad, int64_t states) {
  const KdaInputTransforms t = kdaTransforms(operands, attributes);
  const KdaParameterGradients parameters =
      transformKdaGradients(s, raw, t, grad);
  const std::vector<int64_t> &qShape = operand(operands, "q").shape;
  auto perKeyHead = [&](const std::vector<double> &x) {
    return sumHeadGroups(x, s.batch * s.length, qShape[2], s.heads, s.featureK);
  };
  NamedValues values = {
      {"dq", {qShape, perKeyHead(grad.dq)}},
      {"dk", {qShape, perKeyHead(grad.dk)}},
      {"dv", {{s.batch, s.length, s.heads, s.featureV}, grad.dv}},
      {"dg", {{s.batch, s.length, s.heads, s.featureK}, grad.dg}},
      {"dbeta", {{s.batch, s.length, s.heads}, grad.dbeta}},
      {"d_initial_state",
       {{states, s.heads, s.featureK, s.featureV}, grad.dInitialState}}};
  if (!parameters.dALog.empty())
    values["d_a_log"] = {{s.heads}, parameters.dALog};
  if (!parameters.dDtBias.empty())
    values["d_dt_bias"] = {{s.heads, s.featureK}, parameters.dDtBias};
  return values;
}

/// The output gradients a backward is given (d_final_state may be absent).
std::vector<double> dFinalStateOf(const NamedValues &operands) {
  auto it = operands.find("d_final_state");
  return it == operands.end() ? std::vector<double>() : it->second.data;
}

NamedValues
kdaBackwardReference(const NamedValues &operands,
                     const std::map<std::string, double> &attributes) {
  auto [s, raw] = kdaInputs(operands);
  const KdaInputs in =
      transformKdaInputs(s, raw, kdaTransforms(operands, attributes));
  return kdaGradients(operands, attributes, s, raw,
                      kdaBackward(s, in, attribute(attributes, "scale"),
                                  operand(operands, "d_output").data,
                                  dFinalStateOf(operands)),
                      s.batch);
}

/// The packed forms: one batch entry of every sequence's tokens, states a
/// sequence.
NamedValues kdaVarlen(const NamedValues &operands,
                      const std::map<std::string, double> &attributes) {
  auto [s, raw] = kdaInputs(operands);
  const KdaInputs in =
      transformKdaInputs(s, raw, kdaTransforms(operands, attributes));
  const std::vector<double> &offsets = operand(operands, "cu_seqlens").data;
  const int64_t chunk = static_cast<int64_t>(attribute(attributes, "chunk"));
  KdaOutputs out =
      kdaVarlenForward(s, in, offsets, attribute(attributes, "scale"), chunk);
  const auto S = static_cast<int64_t>(offsets.size()) - 1;
  const int64_t slots = (s.length + chunk - 1) / chunk + S + 1;
  return {
      {"output", {{1, s.length, s.heads, s.featureV}, out.output}},
      {"final_state", {{S, s.heads, s.featureK, s.featureV}, out.finalState}},
      {"boundaries",
       {{slots, 1, s.heads, s.featureK, s.featureV}, out.boundaries}}};
}

NamedValues
kdaVarlenBackwardReference(const NamedValues &operands,
                           const std::map<std::string, double> &attributes) {
  auto [s, raw] = kdaInputs(operands);
  const KdaInputs in =
      transformKdaInputs(s, raw, kdaTransforms(operands, attributes));
  const std::vector<double> &offsets = operand(operands, "cu_seqlens").data;
  return kdaGradients(operands, attributes, s, raw,
                      kdaVarlenBackward(s, in, offsets,
                                        attribute(attributes, "scale"),
                                        operand(operands, "d_output").data,
                                        dFinalStateOf(operands)),
                      static_cast<int64_t>(offsets.size()) - 1);
}

NamedValues kdaDecode(const NamedValues &operands,
                      const std::map<std::string, double> &attributes) {
  auto [s, raw] = kdaInputs(operands);
  const KdaInputs in =
      transformKdaInputs(s, raw, kdaTransforms(operands, attributes));
  const Values &pool = operand(operands, "state_pool");
  KdaPoolStep step =
      kdaPoolStep(s, in, pool.data, operand(operands, "slots").data,
                  attribute(attributes, "scale"));
  return {{"output", {{s.batch, s.length, s.heads, s.featureV}, step.output}},
          {"state_pool_out", {pool.shape, step.pool}},
          {"status", {{s.batch}, step.status}}};
}

} // namespace

void rudnn::reference::registerKdaReferences(ReferenceRegistry &registry) {
  registry.add("rudnn.kda", kda);
  registry.add("rudnn.kda_backward", kdaBackwardReference);
  registry.add("rudnn.kda_decode", kdaDecode);
  registry.add("rudnn.kda_varlen", kdaVarlen);
  registry.add("rudnn.kda_varlen_backward", kdaVarlenBackwardReference);
}
