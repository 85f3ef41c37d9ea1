//===- KdaForward.cpp - Kimi Delta Attention forward through the JIT ------===//
//
// The typed entry point over callOperator: rudnn.kda (rudnn.kda_varlen for
// packed sequences) with the tensors by their contract names. The function
// of a signature holds both the chunked kernels and the recurrent decode
// kernel, guarded by T, so a call changing only B, T, H or strides never
// compiles.
//
//===----------------------------------------------------------------------===//

#include "lib/kda/KdaChecks.h"

#include "rudnn/errors.h"
#include "rudnn/kda.h"
#include "rudnn/operator.h"

using namespace rudnn;

namespace {

const char *forwardOperator(const KdaForwardInputs &in) {
  return in.cuSeqlens ? "rudnn.kda_varlen" : "rudnn.kda";
}

/// The attributes of a forward call saving what `out` asks for.
OperatorAttributes forwardAttributes(const KdaForwardInputs &in,
                                     const KdaOptions &options,
                                     bool saveBoundaries, bool saveTiles) {
  OperatorAttributes attributes = kdaAttributes(
      in.q, in.v,
      inputTransformsOf(in.aLog.has_value(), in.dtBias.has_value(), options),
      options, /*chunked=*/true);
  attributes.emplace_back("save_boundaries", saveBoundaries);
  attributes.emplace_back("save_tiles", saveTiles);
  return attributes;
}

} // namespace

void rudnn::kdaForward(Context &context, const KdaForwardInputs &in,
                       const KdaForwardOutputs &out, const KdaOptions &options,
                       Stream stream) {
  checkKdaForwardCall(in, out, options);
  NamedTensors tensors = kdaInputTensors(in);
  tensors.emplace_back("output", out.output);
  addIfGiven(tensors, "final_state", out.finalState);
  addIfGiven(tensors, "boundaries", out.boundaries);
  addIfGiven(tensors, "tiles", out.tiles);
  callOperator(context, forwardOperator(in),
               forwardAttributes(in, options, out.boundaries.has_value(),
                                 out.tiles.has_value()),
               tensors, stream);
}

KdaSavedShapes rudnn::kdaSavedShapes(Context &context,
                                     const KdaForwardInputs &in,
                                     const KdaOptions &options) {
  checkKdaForwardCall(
      in, KdaForwardOutputs{in.v, std::nullopt, std::nullopt, std::nullopt},
      options);
  const NamedTensors tensors = kdaInputTensors(in);
  Function function = operatorFunction(
      context, forwardOperator(in), forwardAttributes(in, options, true, true),
      tensors, {"boundaries", "tiles"});
  // The function's arguments are the inputs given, in the contract's order,
  // which kdaInputTensors follows.
  std::vector<TensorView> arguments;
  for (const auto &[name, view] : tensors)
    arguments.push_back(view);
  std::vector<std::vector<int64_t>> shapes = function.resultShapes(arguments);
  return {static_cast<int>(function.operators().front().attributes.at("chunk")),
          shapes.at(0), shapes.at(1)};
}
