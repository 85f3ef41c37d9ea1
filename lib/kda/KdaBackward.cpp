//===- KdaBackward.cpp - Kimi Delta Attention backward through the JIT ----===//
//
// Validates a call, finds (or builds once) the plan for its signature, binds
// the tensors and runs it: the forward's prepare and propagate recompute the
// chunk quantities and boundary states in the workspace (with the forward's
// saved boundaries, prepare and restore), then the backward's
// state_gradient and gradients write the six gradients.
//
//===----------------------------------------------------------------------===//

#include "lib/ContextImpl.h"
#include "lib/kda/KdaChecks.h"
#include "lib/kda/KdaKernels.h"
#include "runtime/ViewChecks.h"

#include "rudnn/kda.h"

using namespace rudnn;
using namespace rudnn::runtime;

void rudnn::kdaBackward(Context &context, const KdaBackwardInputs &in,
                        const KdaBackwardOutputs &out,
                        const KdaOptions &options, Stream stream) {
  // --- Validation: every fault named before anything runs. -----------------
  const KdaForwardInputs &fw = in.forward;
  const KdaCallShape s = checkKdaBackwardCall(in, out, options);
  const int64_t K = s.K, V = s.V;

  // --- The function of this signature, compiled at its first call. ------
  KdaKernelSpec spec{fw.q.dtype, fw.g.dtype, fw.beta.dtype, K, V, s.chunk};
  spec.alignedViews = hasAlignedRows(fw.q, 16) && hasAlignedRows(fw.k, 16) &&
                      hasAlignedRows(fw.v, 16) &&
                      hasAlignedRows(in.dOutput, 16);
  spec.packed = fw.cuSeqlens.has_value();
  KdaBackwardFlags flags{
      fw.initialState.has_value(),   in.dFinalState.has_value(),
      in.boundaries.has_value(),     static_cast<float>(s.scale),
      out.dInitialState.has_value(), in.tiles.has_value(),
      groupedHeads(fw.q, fw.v)};
  std::vector<TensorView> arguments = {fw.q, fw.k, fw.v, fw.g, fw.beta};
  if (fw.cuSeqlens)
    arguments.push_back(*fw.cuSeqlens);
  if (fw.initialState)
    arguments.push_back(*fw.initialState);
  if (in.boundaries)
    arguments.push_back(*in.boundaries);
  if (in.tiles)
    arguments.push_back(*in.tiles);
  arguments.push_back(in.dOutput);
  if (in.dFinalState)
    arguments.push_back(*in.dFinalState);
  flags.transforms = inputTransformsOf(fw, options);
  for (const std::optional<TensorView> &parameter : {fw.aLog, fw.dtBias})
    if (parameter)
      arguments.push_back(*parameter);
  std::vector<TensorView> results = {out.dq, out.dk, out.dv, out.dg, out.dbeta};
  if (out.dInitialState)
    results.push_back(*out.dInitialState);
  for (const std::optional<TensorView> &gradient : {out.dALog, out.dDtBias})
    if (gradient)
      results.push_back(*gradient);
  Function function = kdaBackwardFunction(context, spec, flags);
  checkKdaSavedSizes(in, out, chunkOf(function));
  function.call(arguments, results, stream);
}
