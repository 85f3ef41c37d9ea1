//===- KdaForward.cpp - Kimi Delta Attention forward through the JIT ------===//
//
// Validates a call, finds (or builds once) the plan for its signature, binds
// the tensors and runs it. The plan holds both the chunked kernels and the
// recurrent decode kernel, guarded by T, so a call changing only B, T, H or
// strides never compiles.
//
//===----------------------------------------------------------------------===//

#include "lib/ContextImpl.h"
#include "lib/PlanBinding.h"
#include "lib/kda/KdaChecks.h"
#include "lib/kda/KdaKernels.h"

#include "rudnn/kda.h"

using namespace rudnn;
using namespace rudnn::runtime;

void rudnn::kdaForward(Context &context, const KdaForwardInputs &in,
                       const KdaForwardOutputs &out, const KdaOptions &options,
                       Stream stream) {
  // --- Validation: every fault named before anything runs. -----------------
  const KdaCallShape s = checkKdaForwardCall(in, out, options);
  const int64_t K = s.K, V = s.V;

  // --- The plan of this signature. ------------------------------------------
  KdaKernelSpec spec{in.q.dtype, in.g.dtype, in.beta.dtype, K, V, s.chunk};
  KdaPlanFlags flags{in.initialState.has_value(), out.finalState.has_value(),
                     out.boundaries.has_value(), static_cast<float>(s.scale)};
  std::shared_ptr<PlanExecutor> executor =
      context.impl().plan(kdaForwardSignature(spec, flags), [&] {
        return buildKdaForwardPlan(context.impl(), spec, flags);
      });

  // --- Bindings by buffer name; workspace entries stay 0. ------------------
  std::map<std::string, const TensorView *> named = {
      {"q", &in.q}, {"k", &in.k},       {"v", &in.v},
      {"g", &in.g}, {"beta", &in.beta}, {"output", &out.output}};
  if (in.initialState)
    named["initial_state"] = &*in.initialState;
  if (out.finalState)
    named["final_state"] = &*out.finalState;
  if (out.boundaries)
    named["boundaries"] = &*out.boundaries;
  PlanCall call = bindViews(executor->plan(), named);
  context.impl().run(*executor, call.bindings, call.params, stream);
}
