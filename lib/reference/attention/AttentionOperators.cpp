//===- AttentionOperators.cpp - Attention's references by name ------------===//
//
// The adapters from contract names to the typed float64 reference, and
// their registration.
//
//===----------------------------------------------------------------------===//

#include "lib/reference/OperatorReferences.h"
#include "lib/reference/attention/AttentionReference.h"

using namespace rudnn;
using namespace rudnn::reference;

namespace {

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

/// q, k, v and the optional ALiBi slopes of either form.
AttentionInputs baseInputs(const NamedValues &operands) {
  AttentionInputs in;
  in.q = operand(operands, "q").data;
  in.k = operand(operands, "k").data;
  in.v = operand(operands, "v").data;
  if (auto it = operands.find("alibi_slopes"); it != operands.end())
    in.alibiSlopes = it->second.data;
  return in;
}

/// The padded forms' shape and inputs (q, k, v, the optional lengths,
/// mask and slopes).
std::pair<AttentionShape, AttentionInputs>
attentionInputs(const NamedValues &operands) {
  const Values &q = operand(operands, "q"), &k = operand(operands, "k"),
               &v = operand(operands, "v");
  AttentionShape s{q.shape[0], q.shape[1], k.shape[1], q.shape[2],
                   k.shape[2], q.shape[3], v.shape[3]};
  AttentionInputs in = baseInputs(operands);
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
  const AttentionInputs in = baseInputs(operands);
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
  const AttentionInputs in = baseInputs(operands);
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

} // namespace

void rudnn::reference::registerAttentionReferences(
    ReferenceRegistry &registry) {
  registry.add("rudnn.attention", attention);
  registry.add("rudnn.attention_varlen", attentionVarlen);
  registry.add("rudnn.attention_backward", attentionBackwardReference);
  registry.add("rudnn.attention_varlen_backward",
               attentionVarlenBackwardReference);
}
