//===- KdaChecks.cpp - Validating KDA calls -------------------------------===//

#include "lib/kda/KdaChecks.h"
#include "runtime/ContractChecks.h"

#include "dialects/IR/KdaContracts.h"
#include "dialects/IR/TargetPolicy.h"

#include <cmath>

using namespace rudnn;

namespace {

/// The options' chunk, checked; 0 without one (rudnn-specialize then
/// chooses it for the context's target).
int64_t optionChunk(const KdaOptions &options) {
  const int64_t chunk = options.chunk ? *options.chunk : 0;
  if (options.chunk && chunk != 16 && chunk != 32 && chunk != 64)
    throw InvalidArgument("'chunk' must be 16, 32 or 64, got " +
                          std::to_string(chunk));
  return chunk;
}

/// The input transforms' rules the contracts cannot state.
void checkTransforms(const KdaForwardInputs &in, const KdaOptions &options) {
  if (in.dtBias && !in.aLog)
    throw InvalidArgument("'dt_bias' comes with 'a_log': the gate is formed "
                          "only from both");
  if (options.gateLowerBound) {
    if (!in.aLog)
      throw InvalidArgument("'gate_lower_bound' needs 'a_log'");
    if (!(*options.gateLowerBound < 0))
      throw InvalidArgument("'gate_lower_bound' must be negative, got " +
                            std::to_string(*options.gateLowerBound));
  }
}

/// The chunk and scale of `options`, or the defaults for K and V.
void resolveOptions(KdaCallShape &s, const KdaOptions &options) {
  s.chunk = optionChunk(options);
  s.scale = options.scale ? *options.scale : 1.0 / std::sqrt(double(s.K));
  if (!(s.scale > 0) || !std::isfinite(s.scale))
    throw InvalidArgument("'scale' must be positive and finite, got " +
                          std::to_string(s.scale));
}

/// The views' sizes and the options resolved against them.
KdaCallShape
checkCallAndOptions(const OperatorContract &contract,
                    const std::vector<const TensorView *> &operands,
                    const std::vector<const TensorView *> &results,
                    const KdaOptions &options) {
  DimSizes dims = checkCall(contract, operands, results);
  KdaCallShape s{dims['B'], dims['T'], dims['H'], dims['K'],
                 dims['V'], 0,         0,         0};
  resolveOptions(s, options);
  for (int64_t dim : {s.B, s.H, s.T})
    if (dim > INT32_MAX)
      throw InvalidArgument("B, T and H must each fit in 32 bits");
  if (s.B * s.H > 65535)
    throw Unsupported("B·H = " + std::to_string(s.B * s.H) +
                      " exceeds 65535, the grid's second dimension");
  return s;
}

} // namespace

KdaInputTransforms rudnn::inputTransformsOf(const KdaForwardInputs &in,
                                            const KdaOptions &options) {
  return {options.qkL2Norm, options.betaLogits, in.aLog.has_value(),
          in.dtBias.has_value(),
          options.gateLowerBound ? *options.gateLowerBound : 0.f};
}

bool rudnn::groupedHeads(const TensorView &q, const TensorView &v) {
  return q.shape.size() == 4 && v.shape.size() == 4 && q.shape[2] != v.shape[2];
}

int64_t rudnn::resolveKdaChunk(int64_t featureK, int64_t featureV, DType input,
                               const KdaOptions &options) {
  if (const int64_t chunk = optionChunk(options))
    return chunk;
  std::optional<int64_t> chunk = mlir::rudnn::chooseKdaChunk(
      featureK, featureV, mlir::rudnn::DefaultTarget::kSmemPerBlock,
      static_cast<int64_t>(dtypeSize(input)));
  if (!chunk)
    throw Unsupported("no chunk fits K = " + std::to_string(featureK) +
                      ", V = " + std::to_string(featureV) +
                      " in the target's shared memory");
  return *chunk;
}

KdaCallShape rudnn::checkKdaForwardCall(const KdaForwardInputs &in,
                                        const KdaForwardOutputs &out,
                                        const KdaOptions &options) {
  if (out.tiles && !out.boundaries)
    throw InvalidArgument("'tiles' are saved with the 'boundaries': give "
                          "both or neither");
  checkTransforms(in, options);
  if (in.cuSeqlens) {
    if (out.boundaries || out.tiles)
      throw InvalidArgument("packed sequences ('cu_seqlens') save no "
                            "'boundaries' or 'tiles'");
    return checkCallAndOptions(kdaVarlenContract(groupedHeads(in.q, in.v)),
                               {&in.q, &in.k, &in.v, &in.g, &in.beta,
                                &*in.cuSeqlens, viewOf(in.initialState),
                                viewOf(in.aLog), viewOf(in.dtBias)},
                               {&out.output, viewOf(out.finalState)}, options);
  }
  KdaCallShape s = checkCallAndOptions(
      kdaContract(groupedHeads(in.q, in.v)),
      {&in.q, &in.k, &in.v, &in.g, &in.beta, viewOf(in.initialState),
       viewOf(in.aLog), viewOf(in.dtBias)},
      {&out.output, viewOf(out.finalState), viewOf(out.boundaries),
       viewOf(out.tiles)},
      options);
  // The tiles' size depends on the chunk: fix it before compiling.
  if (out.tiles && !s.chunk)
    s.chunk = resolveKdaChunk(s.K, s.V, in.q.dtype, options);
  return s;
}

KdaCallShape rudnn::checkKdaBackwardCall(const KdaBackwardInputs &in,
                                         const KdaBackwardOutputs &out,
                                         const KdaOptions &options) {
  const KdaForwardInputs &fw = in.forward;
  if (in.boundaries && !options.chunk)
    throw InvalidArgument("saved 'boundaries' need the forward's 'chunk' "
                          "in the options");
  if (in.tiles && !in.boundaries)
    throw InvalidArgument("saved 'tiles' come with the forward's "
                          "'boundaries': give both");
  if (out.dInitialState && !fw.initialState)
    throw InvalidArgument(
        "'d_initial_state' is given but there is no 'initial_state'");
  checkTransforms(fw, options);
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
  if (fw.cuSeqlens) {
    if (in.boundaries || in.tiles)
      throw InvalidArgument("packed sequences ('cu_seqlens') take no saved "
                            "'boundaries' or 'tiles'");
    return checkCallAndOptions(
        kdaVarlenBackwardContract(groupedHeads(fw.q, fw.v)),
        {&fw.q, &fw.k, &fw.v, &fw.g, &fw.beta, &*fw.cuSeqlens,
         viewOf(fw.initialState), &in.dOutput, viewOf(in.dFinalState),
         viewOf(fw.aLog), viewOf(fw.dtBias)},
        {&out.dq, &out.dk, &out.dv, &out.dg, &out.dbeta,
         viewOf(out.dInitialState), viewOf(out.dALog), viewOf(out.dDtBias)},
        options);
  }
  return checkCallAndOptions(
      kdaBackwardContract(groupedHeads(fw.q, fw.v)),
      {&fw.q, &fw.k, &fw.v, &fw.g, &fw.beta, viewOf(fw.initialState),
       viewOf(in.boundaries), viewOf(in.tiles), &in.dOutput,
       viewOf(in.dFinalState), viewOf(fw.aLog), viewOf(fw.dtBias)},
      {&out.dq, &out.dk, &out.dv, &out.dg, &out.dbeta,
       viewOf(out.dInitialState), viewOf(out.dALog), viewOf(out.dDtBias)},
      options);
}

namespace {
/// The sizes a chunk fixes of what a forward saves: N, and W with tiles.
DimSizes savedSizes(const TensorView &q, const TensorView &v, int64_t chunk,
                    bool tiles) {
  DimSizes bound;
  bound.bind('N', (q.shape[1] + chunk - 1) / chunk);
  if (tiles)
    bound.bind('W', mlir::rudnn::kdaSavedTileWords(
                        chunk, q.shape[3], v.shape[3],
                        static_cast<int64_t>(dtypeSize(q.dtype))));
  return bound;
}
} // namespace

void rudnn::checkKdaSavedSizes(const KdaForwardInputs &in,
                               const KdaForwardOutputs &out, int64_t chunk) {
  if (!out.boundaries)
    return;
  checkCall(kdaContract(groupedHeads(in.q, in.v)),
            {&in.q, &in.k, &in.v, &in.g, &in.beta, viewOf(in.initialState),
             viewOf(in.aLog), viewOf(in.dtBias)},
            {&out.output, viewOf(out.finalState), viewOf(out.boundaries),
             viewOf(out.tiles)},
            savedSizes(in.q, in.v, chunk, out.tiles.has_value()));
}

void rudnn::checkKdaSavedSizes(const KdaBackwardInputs &in,
                               const KdaBackwardOutputs &out, int64_t chunk) {
  if (!in.boundaries)
    return;
  const KdaForwardInputs &fw = in.forward;
  checkCall(kdaBackwardContract(groupedHeads(fw.q, fw.v)),
            {&fw.q, &fw.k, &fw.v, &fw.g, &fw.beta, viewOf(fw.initialState),
             viewOf(in.boundaries), viewOf(in.tiles), &in.dOutput,
             viewOf(in.dFinalState), viewOf(fw.aLog), viewOf(fw.dtBias)},
            {&out.dq, &out.dk, &out.dv, &out.dg, &out.dbeta,
             viewOf(out.dInitialState), viewOf(out.dALog), viewOf(out.dDtBias)},
            savedSizes(fw.q, fw.v, chunk, in.tiles.has_value()));
}
