//===- OperatorReferences.cpp - Float64 references by operator ------------===//

#include "lib/reference/OperatorReferences.h"
#include "lib/reference/AttentionReference.h"
#include "lib/reference/KdaReference.h"
#include "lib/reference/KvCacheReference.h"
#include "lib/reference/LstmReference.h"
#include "lib/reference/NormReference.h"

#include "rudnn/errors.h"

using namespace rudnn;
using namespace rudnn::reference;

namespace {

const Values &operand(const NamedValues &operands, const std::string &name) {
  auto it = operands.find(name);
  if (it == operands.end())
    throw InvalidArgument("the reference needs '" + name + "'");
  return it->second;
}

double attribute(const std::map<std::string, double> &attributes,
                 const std::string &name) {
  auto it = attributes.find(name);
  if (it == attributes.end())
    throw InvalidArgument("the reference needs attribute '" + name + "'");
  return it->second;
}

/// An attribute that may be absent (a flag not set, an open bound).
double attributeOr(const std::map<std::string, double> &attributes,
                   const std::string &name, double fallback) {
  auto it = attributes.find(name);
  return it == attributes.end() ? fallback : it->second;
}

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

/// The attributes both attention forms read.
AttentionOptions
attentionOptions(const std::map<std::string, double> &attributes) {
  AttentionOptions options;
  options.scale = attribute(attributes, "scale");
  options.softcap = attributeOr(attributes, "softcap", 0);
  options.causal = attributeOr(attributes, "causal", 0) != 0;
  options.windowLeft =
      static_cast<int64_t>(attributeOr(attributes, "window_left", -1));
  options.windowRight =
      static_cast<int64_t>(attributeOr(attributes, "window_right", -1));
  return options;
}

/// The padded forms' shape and inputs (q, k, v, the optional lengths and
/// mask).
std::pair<AttentionShape, AttentionInputs>
attentionInputs(const NamedValues &operands) {
  const Values &q = operand(operands, "q"), &k = operand(operands, "k"),
               &v = operand(operands, "v");
  AttentionShape s{q.shape[0], q.shape[1], k.shape[1], q.shape[2],
                   k.shape[2], q.shape[3], v.shape[3]};
  AttentionInputs in{q.data, k.data, v.data, {}, {}};
  if (auto it = operands.find("key_lengths"); it != operands.end())
    in.keyLengths = it->second.data;
  if (auto it = operands.find("key_mask"); it != operands.end())
    in.keyMask = it->second.data;
  return {s, in};
}

NamedValues attention(const NamedValues &operands,
                      const std::map<std::string, double> &attributes) {
  auto [s, in] = attentionInputs(operands);
  AttentionOutputs out = attentionForward(s, in, attentionOptions(attributes));
  return {{"o", {{s.batch, s.queries, s.heads, s.valueDim}, out.o}},
          {"lse", {{s.batch, s.heads, s.queries}, out.lse}}};
}

NamedValues attentionVarlen(const NamedValues &operands,
                            const std::map<std::string, double> &attributes) {
  const Values &q = operand(operands, "q"), &k = operand(operands, "k"),
               &v = operand(operands, "v");
  AttentionInputs in{q.data, k.data, v.data, {}, {}};
  AttentionOutputs out = attentionVarlenForward(
      q.shape[1], k.shape[1], q.shape[2], v.shape[2], in,
      operand(operands, "cu_seqlens_q").data,
      operand(operands, "cu_seqlens_k").data, attentionOptions(attributes));
  return {{"o", {{q.shape[0], q.shape[1], v.shape[2]}, out.o}},
          {"lse", {{q.shape[1], q.shape[0]}, out.lse}}};
}

/// From the given o and lse, as the kernels read them.
NamedValues
attentionBackwardReference(const NamedValues &operands,
                           const std::map<std::string, double> &attributes) {
  auto [s, in] = attentionInputs(operands);
  const AttentionOutputs saved{operand(operands, "o").data,
                               operand(operands, "lse").data};
  AttentionGradients grad = attentionBackwardFromSaved(
      s, in, saved, operand(operands, "d_output").data,
      attentionOptions(attributes));
  return {{"dq", {{s.batch, s.queries, s.heads, s.headDim}, grad.dq}},
          {"dk", {{s.batch, s.keys, s.kvHeads, s.headDim}, grad.dk}},
          {"dv", {{s.batch, s.keys, s.kvHeads, s.valueDim}, grad.dv}}};
}

/// Packed batches, from the given o and lse likewise.
NamedValues attentionVarlenBackwardReference(
    const NamedValues &operands,
    const std::map<std::string, double> &attributes) {
  const Values &q = operand(operands, "q"), &k = operand(operands, "k"),
               &v = operand(operands, "v");
  const AttentionInputs in{q.data, k.data, v.data, {}, {}};
  const AttentionOutputs saved{operand(operands, "o").data,
                               operand(operands, "lse").data};
  AttentionGradients grad =
      attentionVarlenBackward(q.shape[1], k.shape[1], q.shape[2], v.shape[2],
                              in, operand(operands, "d_output").data,
                              operand(operands, "cu_seqlens_q").data,
                              operand(operands, "cu_seqlens_k").data,
                              attentionOptions(attributes), &saved);
  return {{"dq", {q.shape, grad.dq}},
          {"dk", {k.shape, grad.dk}},
          {"dv", {v.shape, grad.dv}}};
}

/// Both K/V-cache forms: the caches are contiguous ("k_cache", "v_cache")
/// or pages ("k_pages", "v_pages" with "block_table").
NamedValues kvCache(const NamedValues &operands,
                    const std::map<std::string, double> &attributes,
                    bool paged) {
  const Values &q = operand(operands, "q"), &v = operand(operands, "v");
  const std::string kName = paged ? "k_pages" : "k_cache",
                    vName = paged ? "v_pages" : "v_cache";
  const Values &kCache = operand(operands, kName),
               &vCache = operand(operands, vName);
  KvCacheShape s;
  s.batch = q.shape[0];
  s.newTokens = q.shape[1];
  s.heads = q.shape[2];
  s.headDim = q.shape[3];
  s.kvHeads = v.shape[2];
  s.valueDim = v.shape[3];
  KvCacheInputs in{q.data,      operand(operands, "k").data,
                   v.data,      kCache.data,
                   vCache.data, operand(operands, "cache_lengths").data,
                   {}};
  if (paged) {
    const Values &table = operand(operands, "block_table");
    s.pages = kCache.shape[0];
    s.pageSize = kCache.shape[1];
    s.maxPages = table.shape[1];
    in.blockTable = table.data;
  } else {
    s.capacity = kCache.shape[1];
  }
  KvCacheOutputs out = kvCacheAttention(s, in, attribute(attributes, "scale"));
  return {{"o", {{s.batch, s.newTokens, s.heads, s.valueDim}, out.o}},
          {kName, {kCache.shape, out.kCache}},
          {vName, {vCache.shape, out.vCache}},
          {"lse", {{s.batch, s.heads, s.newTokens}, out.lse}},
          {"status", {{s.batch}, out.status}}};
}

NamedValues kvCacheContiguous(const NamedValues &operands,
                              const std::map<std::string, double> &attributes) {
  return kvCache(operands, attributes, false);
}

NamedValues kvCachePaged(const NamedValues &operands,
                         const std::map<std::string, double> &attributes) {
  return kvCache(operands, attributes, true);
}

/// The state_dict's tensors by their keys: "weight_ih_l0", ...,
/// "bias_hh_l1_reverse" (biases when present).
NamedValues lstm(const NamedValues &operands,
                 const std::map<std::string, double> &attributes) {
  LstmShape s;
  s.layers = static_cast<int64_t>(attribute(attributes, "num_layers"));
  s.directions = attributeOr(attributes, "bidirectional", 0) != 0 ? 2 : 1;
  s.batchFirst = attributeOr(attributes, "batch_first", 0) != 0;
  const Values &x = operand(operands, "x");
  s.steps = x.shape[s.batchFirst ? 1 : 0];
  s.batch = x.shape[s.batchFirst ? 0 : 1];
  s.inputSize = x.shape[2];
  s.hiddenSize = operand(operands, "weight_hh_l0").shape[1];
  auto optional = [&](const std::string &name) {
    auto it = operands.find(name);
    return it == operands.end() ? std::vector<double>() : it->second.data;
  };
  LstmInputs in{
      x.data, optional("h0"), optional("c0"), optional("lengths"), {}};
  for (int64_t layer = 0; layer < s.layers; ++layer)
    for (int64_t d = 0; d < s.directions; ++d) {
      const std::string suffix =
          "_l" + std::to_string(layer) + (d ? "_reverse" : "");
      in.weights.push_back({operand(operands, "weight_ih" + suffix).data,
                            operand(operands, "weight_hh" + suffix).data,
                            optional("bias_ih" + suffix),
                            optional("bias_hh" + suffix)});
    }
  LstmOutputs out = lstmForward(s, in);
  const int64_t width = s.directions * s.hiddenSize,
                states = s.layers * s.directions;
  std::vector<int64_t> outShape = {s.steps, s.batch, width};
  if (s.batchFirst)
    std::swap(outShape[0], outShape[1]);
  return {{"out", {outShape, out.out}},
          {"h_n", {{states, s.batch, s.hiddenSize}, out.hN}},
          {"c_n", {{states, s.batch, s.hiddenSize}, out.cN}}};
}

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

OperatorReference rudnn::reference::referenceFor(std::string_view op) {
  if (op == "rudnn.layer_norm_backward")
    return normBackwardReference<true>;
  if (op == "rudnn.rms_norm_backward")
    return normBackwardReference<false>;
  if (op == "rudnn.moments")
    return moments;
  if (op == "rudnn.layer_norm")
    return layerNormReference;
  if (op == "rudnn.rms_norm")
    return rmsNormReference;
  if (op == "rudnn.lstm")
    return lstm;
  if (op == "rudnn.kv_cache_attention")
    return kvCacheContiguous;
  if (op == "rudnn.kv_cache_attention_paged")
    return kvCachePaged;
  if (op == "rudnn.attention_backward")
    return attentionBackwardReference;
  if (op == "rudnn.attention_varlen_backward")
    return attentionVarlenBackwardReference;
  if (op == "rudnn.attention_varlen")
    return attentionVarlen;
  if (op == "rudnn.attention")
    return attention;
  if (op == "rudnn.kda")
    return kda;
  if (op == "rudnn.kda_backward")
    return kdaBackwardReference;
  if (op == "rudnn.kda_decode")
    return kdaDecode;
  if (op == "rudnn.kda_varlen")
    return kdaVarlen;
  if (op == "rudnn.kda_varlen_backward")
    return kdaVarlenBackwardReference;
  return nullptr;
}
