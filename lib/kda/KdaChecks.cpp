//===- KdaChecks.cpp - Validating KDA calls -------------------------------===//

#include "lib/kda/KdaChecks.h"
#include "lib/ContractChecks.h"

#include "dialects/IR/KdaContracts.h"
#include "dialects/IR/TargetPolicy.h"

#include <cmath>

using namespace rudnn;

namespace {

/// The chunk and scale of `options`, or the defaults for K and V.
void resolveOptions(KdaCallShape &s, const KdaOptions &options) {
  // Without one, rudnn-specialize chooses the chunk for the context's target.
  s.chunk = options.chunk ? *options.chunk : 0;
  if (options.chunk && s.chunk != 16 && s.chunk != 32 && s.chunk != 64)
    throw InvalidArgument("'chunk' must be 16, 32 or 64, got " +
                          std::to_string(s.chunk));
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

KdaCallShape rudnn::checkKdaForwardCall(const KdaForwardInputs &in,
                                        const KdaForwardOutputs &out,
                                        const KdaOptions &options) {
  return checkCallAndOptions(
      kdaContract(),
      {&in.q, &in.k, &in.v, &in.g, &in.beta, viewOf(in.initialState)},
      {&out.output, viewOf(out.finalState), viewOf(out.boundaries)}, options);
}

KdaCallShape rudnn::checkKdaBackwardCall(const KdaBackwardInputs &in,
                                         const KdaBackwardOutputs &out,
                                         const KdaOptions &options) {
  const KdaForwardInputs &fw = in.forward;
  if (in.boundaries && !options.chunk)
    throw InvalidArgument("saved 'boundaries' need the forward's 'chunk' "
                          "in the options");
  if (out.dInitialState && !fw.initialState)
    throw InvalidArgument(
        "'d_initial_state' is given but there is no 'initial_state'");
  return checkCallAndOptions(kdaBackwardContract(),
                             {&fw.q, &fw.k, &fw.v, &fw.g, &fw.beta,
                              viewOf(fw.initialState), viewOf(in.boundaries),
                              &in.dOutput, viewOf(in.dFinalState)},
                             {&out.dq, &out.dk, &out.dv, &out.dg, &out.dbeta,
                              viewOf(out.dInitialState)},
                             options);
}

void rudnn::checkKdaBoundaryCount(const KdaForwardInputs &in,
                                  const KdaForwardOutputs &out, int64_t chunk) {
  if (!out.boundaries)
    return;
  DimSizes bound;
  bound.bind('N', (in.q.shape[1] + chunk - 1) / chunk);
  checkCall(kdaContract(),
            {&in.q, &in.k, &in.v, &in.g, &in.beta, viewOf(in.initialState)},
            {&out.output, viewOf(out.finalState), viewOf(out.boundaries)},
            bound);
}

void rudnn::checkKdaBoundaryCount(const KdaBackwardInputs &in,
                                  const KdaBackwardOutputs &out,
                                  int64_t chunk) {
  if (!in.boundaries)
    return;
  const KdaForwardInputs &fw = in.forward;
  DimSizes bound;
  bound.bind('N', (fw.q.shape[1] + chunk - 1) / chunk);
  checkCall(kdaBackwardContract(),
            {&fw.q, &fw.k, &fw.v, &fw.g, &fw.beta, viewOf(fw.initialState),
             viewOf(in.boundaries), &in.dOutput, viewOf(in.dFinalState)},
            {&out.dq, &out.dk, &out.dv, &out.dg, &out.dbeta,
             viewOf(out.dInitialState)},
            bound);
}
