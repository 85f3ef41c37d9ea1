//===- Attention.cpp - Tiled attention through the JIT --------------------===//
//
// The typed entry points over callOperator: the options become the
// operators' attributes (the grid's limits checked here, where the sizes
// are known); B, T, S, H, G, the offsets' count and
// strides are read from the views.
//
//===----------------------------------------------------------------------===//

#include "lib/attention/ScoreOptions.h"

#include "dialects/IR/attention/AttentionContracts.h"

#include "rudnn/attention.h"
#include "rudnn/errors.h"
#include "rudnn/operator.h"

#include <climits>
#include <cmath>

using namespace rudnn;

void rudnn::addScoreOptions(OperatorAttributes &attributes,
                            std::optional<float> scale, float softcap,
                            int64_t windowLeft, int64_t windowRight) {
  if (!(softcap >= 0) || !std::isfinite(softcap))
    throw InvalidArgument("'softcap' must be 0 (none) or positive and "
                          "finite, got " +
                          std::to_string(softcap));
  if (windowLeft < -1 || windowRight < -1 || windowLeft > kAttentionMaxWindow ||
      windowRight > kAttentionMaxWindow)
    throw InvalidArgument("window bounds must be -1 (unbounded) or 0 to " +
                          std::to_string(kAttentionMaxWindow) + ", got (" +
                          std::to_string(windowLeft) + ", " +
                          std::to_string(windowRight) + ")");
  // Without a scale, rudnn-specialize chooses D^-0.5; the verifier checks
  // a given one.
  if (scale)
    attributes.emplace_back("scale", double(*scale));
  if (softcap > 0)
    attributes.emplace_back("softcap", double(softcap));
  if (windowLeft >= 0 || windowRight >= 0) {
    attributes.emplace_back("window_left", windowLeft);
    attributes.emplace_back("window_right", windowRight);
  }
}

namespace {

/// The options as the operators' attributes.
OperatorAttributes attributesOf(const AttentionOptions &options) {
  OperatorAttributes attributes = {{"causal", options.causal}};
  addScoreOptions(attributes, options.scale, options.softcap,
                  options.windowLeft, options.windowRight);
  return attributes;
}

/// The backward's attributes: the forward's and `deterministic`.
OperatorAttributes backwardAttributesOf(const AttentionOptions &options) {
  OperatorAttributes attributes = attributesOf(options);
  if (options.deterministic)
    attributes.emplace_back("deterministic", true);
  return attributes;
}

/// The kernels index rows in 32 bits. `rows` is [B, T, H, *] (packed:
/// [T, H, *]). (Their grids' limits are the plan's own check.)
void checkLengths(const TensorView &rows, const TensorView &keys, bool packed) {
  if (rows.shape.size() < 3 || keys.shape.size() < 3)
    return; // the contract names the rank
  const size_t time = packed ? 0 : 1;
  if (rows.shape[time] > INT32_MAX || keys.shape[time] > INT32_MAX)
    throw InvalidArgument("T and S must each fit in 32 bits");
}

} // namespace

namespace {

/// The padded forms' inputs by contract name (the optional ones if given).
NamedTensors paddedTensors(const AttentionInputs &in) {
  NamedTensors tensors = {{"q", in.q}, {"k", in.k}, {"v", in.v}};
  addIfGiven(tensors, "key_lengths", in.keyLengths);
  addIfGiven(tensors, "key_mask", in.keyMask);
  addIfGiven(tensors, "alibi_slopes", in.alibiSlopes);
  return tensors;
}

/// The packed forms' inputs likewise.
NamedTensors packedTensors(const AttentionVarlenInputs &in) {
  NamedTensors tensors = {{"q", in.q},
                          {"k", in.k},
                          {"v", in.v},
                          {"cu_seqlens_q", in.cuSeqlensQ},
                          {"cu_seqlens_k", in.cuSeqlensK}};
  addIfGiven(tensors, "alibi_slopes", in.alibiSlopes);
  return tensors;
}

/// The forward's inputs, then the backward's own: o, lse, d_output and the
/// gradients.
template <typename BackwardInputs>
NamedTensors backwardTensors(NamedTensors tensors, const BackwardInputs &in,
                             const AttentionGradients &out) {
  tensors.insert(tensors.end(), {{"o", in.o},
                                 {"lse", in.lse},
                                 {"d_output", in.dOutput},
                                 {"dq", out.dq},
                                 {"dk", out.dk},
                                 {"dv", out.dv}});
  return tensors;
}

} // namespace

void rudnn::attentionForward(Context &context, const AttentionInputs &in,
                             const AttentionOutputs &out,
                             const AttentionOptions &options, Stream stream) {
  checkLengths(in.q, in.k, /*packed=*/false);
  NamedTensors tensors = paddedTensors(in);
  tensors.emplace_back("o", out.o);
  addIfGiven(tensors, "lse", out.lse);
  callOperator(context, "rudnn.attention", attributesOf(options), tensors,
               stream);
}

void rudnn::attentionVarlenForward(Context &context,
                                   const AttentionVarlenInputs &in,
                                   const AttentionOutputs &out,
                                   const AttentionOptions &options,
                                   Stream stream) {
  checkLengths(in.q, in.k, /*packed=*/true);
  NamedTensors tensors = packedTensors(in);
  tensors.emplace_back("o", out.o);
  addIfGiven(tensors, "lse", out.lse);
  callOperator(context, "rudnn.attention_varlen", attributesOf(options),
               tensors, stream);
}

void rudnn::attentionBackward(Context &context,
                              const AttentionBackwardInputs &in,
                              const AttentionGradients &out,
                              const AttentionOptions &options, Stream stream) {
  checkLengths(in.forward.q, in.forward.k, /*packed=*/false);
  callOperator(context, "rudnn.attention_backward",
               backwardAttributesOf(options),
               backwardTensors(paddedTensors(in.forward), in, out), stream);
}

void rudnn::attentionVarlenBackward(Context &context,
                                    const AttentionVarlenBackwardInputs &in,
                                    const AttentionGradients &out,
                                    const AttentionOptions &options,
                                    Stream stream) {
  checkLengths(in.forward.q, in.forward.k, /*packed=*/true);
  callOperator(context, "rudnn.attention_varlen_backward",
               backwardAttributesOf(options),
               backwardTensors(packedTensors(in.forward), in, out), stream);
}
