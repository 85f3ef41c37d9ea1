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
#include "lib/PlanBinding.h"
#include "lib/kda/KdaChecks.h"
#include "lib/kda/KdaKernels.h"

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

  // --- The plan of this signature. ------------------------------------------
  KdaKernelSpec spec{fw.q.dtype, fw.g.dtype, fw.beta.dtype, K, V, s.chunk};
  KdaBackwardFlags flags{fw.initialState.has_value(),
                         in.dFinalState.has_value(), in.boundaries.has_value(),
                         static_cast<float>(s.scale)};
  std::shared_ptr<PlanExecutor> executor =
      context.impl().plan(kdaBackwardSignature(spec, flags), [&] {
        return buildKdaBackwardPlan(context.impl(), spec, flags);
      });

  // --- Bindings by buffer name; an unwanted d_initial_state stays 0. -------
  std::map<std::string, const TensorView *> named = {
      {"q", &fw.q},    {"k", &fw.k},         {"v", &fw.v},
      {"g", &fw.g},    {"beta", &fw.beta},   {"d_output", &in.dOutput},
      {"dq", &out.dq}, {"dk", &out.dk},      {"dv", &out.dv},
      {"dg", &out.dg}, {"dbeta", &out.dbeta}};
  if (fw.initialState)
    named["initial_state"] = &*fw.initialState;
  if (in.dFinalState)
    named["d_final_state"] = &*in.dFinalState;
  if (out.dInitialState)
    named["d_initial_state"] = &*out.dInitialState;
  if (in.boundaries)
    named["boundaries"] = &*in.boundaries;
  PlanCall call = bindViews(executor->plan(), named);
  context.impl().run(*executor, call.bindings, call.params, stream);
}
