//===- KdaChecks.cpp - What KDA's typed entry points add ------------------===//

#include "lib/kda/KdaChecks.h"

#include "rudnn/errors.h"

#include <cmath>
#include <cstdint>

using namespace rudnn;

KdaInputTransforms rudnn::inputTransformsOf(bool aLog, bool dtBias,
                                            const KdaOptions &options) {
  if (dtBias && !aLog)
    throw InvalidArgument("'dt_bias' comes with 'a_log': the gate is formed "
                          "only from both");
  if (options.gateLowerBound) {
    if (!aLog)
      throw InvalidArgument("'gate_lower_bound' needs 'a_log'");
    if (!(*options.gateLowerBound < 0))
      throw InvalidArgument("'gate_lower_bound' must be negative, got " +
                            std::to_string(*options.gateLowerBound));
  }
  return {options.qkL2Norm, options.betaLogits, aLog, dtBias,
          options.gateLowerBound ? *options.gateLowerBound : 0.f};
}

bool rudnn::groupedHeads(const TensorView &q, const TensorView &v) {
  return q.shape.size() == 4 && v.shape.size() == 4 && q.shape[2] != v.shape[2];
}

OperatorAttributes rudnn::kdaAttributes(const TensorView &q,
                                        const TensorView &v,
                                        const KdaInputTransforms &transforms,
                                        const KdaOptions &options,
                                        bool chunked) {
  OperatorAttributes attributes = {{"grouped_heads", groupedHeads(q, v)},
                                   {"qk_l2norm", transforms.qkL2Norm},
                                   {"beta_logits", transforms.betaLogits}};
  if (options.scale) {
    if (!(*options.scale > 0) || !std::isfinite(*options.scale))
      throw InvalidArgument("'scale' must be positive and finite, got " +
                            std::to_string(*options.scale));
    attributes.emplace_back("scale", double(*options.scale));
  }
  if (transforms.gate && transforms.lowerBound < 0)
    attributes.emplace_back("gate_lower_bound", double(transforms.lowerBound));
  if (options.chunk && !chunked)
    throw InvalidArgument("a decoding step takes no 'chunk': it runs token "
                          "by token");
  if (options.chunk) {
    if (*options.chunk != 16 && *options.chunk != 32 && *options.chunk != 64)
      throw InvalidArgument("'chunk' must be 16, 32 or 64, got " +
                            std::to_string(*options.chunk));
    attributes.emplace_back("chunk", int64_t(*options.chunk));
  }
  return attributes;
}

NamedTensors rudnn::kdaInputTensors(const KdaForwardInputs &in) {
  NamedTensors tensors = {
      {"q", in.q}, {"k", in.k}, {"v", in.v}, {"g", in.g}, {"beta", in.beta}};
  addIfGiven(tensors, "cu_seqlens", in.cuSeqlens);
  addIfGiven(tensors, "initial_state", in.initialState);
  addIfGiven(tensors, "a_log", in.aLog);
  addIfGiven(tensors, "dt_bias", in.dtBias);
  return tensors;
}

void rudnn::checkKdaForwardCall(const KdaForwardInputs &in,
                                const KdaForwardOutputs &out,
                                const KdaOptions &options) {
  if (out.tiles && !out.boundaries)
    throw InvalidArgument("'tiles' are saved with the 'boundaries': give "
                          "both or neither");
  inputTransformsOf(in.aLog.has_value(), in.dtBias.has_value(), options);
}

void rudnn::checkKdaBackwardCall(const KdaBackwardInputs &in,
                                 const KdaBackwardOutputs &out,
                                 const KdaOptions &options) {
  const KdaForwardInputs &fw = in.forward;
  if (in.tiles && !in.boundaries)
    throw InvalidArgument("saved 'tiles' come with the forward's "
                          "'boundaries': give both");
  if (out.dInitialState && !fw.initialState)
    throw InvalidArgument(
        "'d_initial_state' is given but there is no 'initial_state'");
  inputTransformsOf(fw.aLog.has_value(), fw.dtBias.has_value(), options);
  if (fw.aLog.has_value() != out.dALog.has_value())
    throw InvalidArgument(fw.aLog ? "'a_log' is given: give 'd_a_log' for its "
                                    "gradient"
                                  : "'d_a_log' is given but there is no "
                                    "'a_log'");
  if (fw.dtBias.has_value() != out.dDtBias.has_value())
    throw InvalidArgument(fw.dtBias ? "'dt_bias' is given: give 'd_dt_bias' "
                                      "for its gradient"
                                    : "'d_dt_bias' is given but there is no "
                                      "'dt_bias'");
}
