//===- KdaChecks.cpp - Validating KDA calls -------------------------------===//

#include "lib/kda/KdaChecks.h"
#include "lib/ContractChecks.h"

#include "dialects/IR/KdaContracts.h"
#include "dialects/IR/TargetPolicy.h"

#include <cmath>

using namespace rudnn;
using mlir::rudnn::chooseKdaChunk;
using mlir::rudnn::DefaultTarget;

namespace {

/// The chunk and scale of `options`, or the defaults for K and V.
void resolveOptions(KdaCallShape &s, const KdaOptions &options) {
  // The default target's budget, so every backend chooses alike.
  s.chunk =
      options.chunk
          ? *options.chunk
          : chooseKdaChunk(s.K, s.V, DefaultTarget::kSmemPerBlock).value_or(16);
  if (s.chunk != 16 && s.chunk != 32 && s.chunk != 64)
    throw InvalidArgument("'chunk' must be 16, 32 or 64, got " +
                          std::to_string(s.chunk));
  s.scale = options.scale ? *options.scale : 1.0 / std::sqrt(double(s.K));
  if (!(s.scale > 0) || !std::isfinite(s.scale))
    throw InvalidArgument("'scale' must be positive and finite, got " +
                          std::to_string(s.scale));
  s.N = (s.T + s.chunk - 1) / s.chunk;
}

/// The views' sizes, the options resolved against them, then the views
/// again with N bound to ceil(T / chunk) when a boundaries tensor is given.
KdaCallShape checkCallAndOptions(const OperatorContract &contract,
                                 std::vector<const TensorView *> operands,
                                 std::vector<const TensorView *> results,
                                 const TensorView *boundaries,
                                 const KdaOptions &options) {
  DimSizes dims = checkCall(contract, operands, results);
  KdaCallShape s{dims['B'], dims['T'], dims['H'], dims['K'],
                 dims['V'], 0,         0,         0};
  resolveOptions(s, options);
  if (boundaries) {
    DimSizes bound;
    bound.bind('N', s.N);
    const int where = contract.operandIndex("boundaries");
    if (where >= 0)
      operands[where] = boundaries;
    else
      results[contract.resultIndex("boundaries")] = boundaries;
    checkCall(contract, operands, results, bound);
  }
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
      {&out.output, viewOf(out.finalState), nullptr}, viewOf(out.boundaries),
      options);
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
                              viewOf(fw.initialState), nullptr, &in.dOutput,
                              viewOf(in.dFinalState)},
                             {&out.dq, &out.dk, &out.dv, &out.dg, &out.dbeta,
                              viewOf(out.dInitialState)},
                             viewOf(in.boundaries), options);
}
