//===- KdaChecks.cpp - Validating KDA calls -------------------------------===//

#include "lib/kda/KdaChecks.h"
#include "runtime/ContractChecks.h"

#include "dialects/IR/KdaContracts.h"
#include "dialects/IR/KdaPolicy.h"

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
  inputTransformsOf(in.aLog.has_value(), in.dtBias.has_value(), options);
}

} // namespace

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

namespace {

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
  return inputTransformsOf(in.aLog.has_value(), in.dtBias.has_value(), options);
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

namespace {

/// A call's contract and its views in the contract's order.
struct ContractViews {
  const OperatorContract &contract;
  std::vector<const TensorView *> operands, results;
};

ContractViews forwardViews(const KdaForwardInputs &in,
                           const KdaForwardOutputs &out) {
  const bool grouped = groupedHeads(in.q, in.v);
  std::vector<const TensorView *> results = {
      &out.output, viewOf(out.finalState), viewOf(out.boundaries),
      viewOf(out.tiles)};
  if (in.cuSeqlens)
    return {kdaVarlenContract(grouped),
            {&in.q, &in.k, &in.v, &in.g, &in.beta, &*in.cuSeqlens,
             viewOf(in.initialState), viewOf(in.aLog), viewOf(in.dtBias)},
            results};
  return {kdaContract(grouped),
          {&in.q, &in.k, &in.v, &in.g, &in.beta, viewOf(in.initialState),
           viewOf(in.aLog), viewOf(in.dtBias)},
          results};
}

ContractViews backwardViews(const KdaBackwardInputs &in,
                            const KdaBackwardOutputs &out) {
  const KdaForwardInputs &fw = in.forward;
  const bool grouped = groupedHeads(fw.q, fw.v);
  std::vector<const TensorView *> operands = {&fw.q, &fw.k, &fw.v, &fw.g,
                                              &fw.beta};
  if (fw.cuSeqlens)
    operands.push_back(&*fw.cuSeqlens);
  for (const TensorView *view :
       {viewOf(fw.initialState), viewOf(in.boundaries), viewOf(in.tiles),
        &in.dOutput, viewOf(in.dFinalState), viewOf(fw.aLog),
        viewOf(fw.dtBias)})
    operands.push_back(view);
  return {fw.cuSeqlens ? kdaVarlenBackwardContract(grouped)
                       : kdaBackwardContract(grouped),
          operands,
          {&out.dq, &out.dk, &out.dv, &out.dg, &out.dbeta,
           viewOf(out.dInitialState), viewOf(out.dALog), viewOf(out.dDtBias)}};
}

KdaCallShape checkViewsAndOptions(const ContractViews &views,
                                  const KdaOptions &options) {
  return checkCallAndOptions(views.contract, views.operands, views.results,
                             options);
}

} // namespace

KdaCallShape rudnn::checkKdaForwardCall(const KdaForwardInputs &in,
                                        const KdaForwardOutputs &out,
                                        const KdaOptions &options) {
  if (out.tiles && !out.boundaries)
    throw InvalidArgument("'tiles' are saved with the 'boundaries': give "
                          "both or neither");
  checkTransforms(in, options);
  KdaCallShape s = checkViewsAndOptions(forwardViews(in, out), options);
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
  return checkViewsAndOptions(backwardViews(in, out), options);
}

namespace {
/// The sizes a chunk fixes of what a forward saves: N (ceil(T / chunk),
/// or packed the chunk slots ceil(T / chunk) + S + 1), and W with tiles.
DimSizes savedSizes(const KdaForwardInputs &in, int64_t chunk, bool tiles) {
  DimSizes bound;
  int64_t chunks = (in.q.shape[1] + chunk - 1) / chunk;
  if (in.cuSeqlens)
    chunks += in.cuSeqlens->shape[0];
  bound.bind('N', chunks);
  if (tiles)
    bound.bind('W', mlir::rudnn::kdaSavedTileWords(
                        chunk, in.q.shape[3], in.v.shape[3],
                        static_cast<int64_t>(dtypeSize(in.q.dtype))));
  return bound;
}
} // namespace

void rudnn::checkKdaSavedSizes(const KdaForwardInputs &in,
                               const KdaForwardOutputs &out, int64_t chunk) {
  if (!out.boundaries)
    return;
  const ContractViews views = forwardViews(in, out);
  checkCall(views.contract, views.operands, views.results,
            savedSizes(in, chunk, out.tiles.has_value()));
}

void rudnn::checkKdaSavedSizes(const KdaBackwardInputs &in,
                               const KdaBackwardOutputs &out, int64_t chunk) {
  if (!in.boundaries)
    return;
  const ContractViews views = backwardViews(in, out);
  checkCall(views.contract, views.operands, views.results,
            savedSizes(in.forward, chunk, in.tiles.has_value()));
}
