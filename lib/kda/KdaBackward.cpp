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

#include "rudnn/kda.h"

using namespace rudnn;
using namespace rudnn::runtime;

void rudnn::kdaBackward(Context &context, const KdaBackwardInputs &in,
                        const KdaBackwardOutputs &out,
                        const KdaOptions &options, Stream stream) {
  // --- Validation: every fault named before anything runs. -----------------
  const KdaForwardInputs &fw = in.forward;
  const KdaCallShape s = checkKdaInputs(fw, options);
  const int64_t B = s.B, T = s.T, H = s.H, K = s.K, V = s.V, N = s.N;
  checkDtype("d_output", in.dOutput, fw.v.dtype);
  checkTensor("d_output", in.dOutput, {B, T, H, V}, TensorLayout::Strided);
  if (in.dFinalState) {
    checkTensor("d_final_state", *in.dFinalState, {B, H, K, V},
                TensorLayout::Dense);
    checkDtype("d_final_state", *in.dFinalState, DType::F32);
  }
  if (in.boundaries) {
    if (!options.chunk)
      throw InvalidArgument("saved 'boundaries' need the forward's 'chunk' "
                            "in the options");
    checkTensor("boundaries", *in.boundaries, {N, B, H, K, V},
                TensorLayout::Dense);
    checkDtype("boundaries", *in.boundaries, DType::F32);
  }
  checkDtype("dq", out.dq, fw.q.dtype);
  checkDtype("dk", out.dk, fw.k.dtype);
  checkDtype("dv", out.dv, fw.v.dtype);
  checkDtype("dg", out.dg, DType::F32);
  checkDtype("dbeta", out.dbeta, fw.beta.dtype);
  checkTensor("dq", out.dq, {B, T, H, K}, TensorLayout::Strided);
  checkTensor("dk", out.dk, {B, T, H, K}, TensorLayout::Strided);
  checkTensor("dv", out.dv, {B, T, H, V}, TensorLayout::Strided);
  checkTensor("dg", out.dg, {B, T, H, K}, TensorLayout::Strided);
  checkTensor("dbeta", out.dbeta, {B, T, H}, TensorLayout::AnyStrides);
  if (out.dInitialState) {
    if (!fw.initialState)
      throw InvalidArgument(
          "'d_initial_state' is given but there is no 'initial_state'");
    checkTensor("d_initial_state", *out.dInitialState, {B, H, K, V},
                TensorLayout::Dense);
    checkDtype("d_initial_state", *out.dInitialState, DType::F32);
  }
  checkKdaBackwardViews(in, out);
  checkKdaGridLimits(s);

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
  std::vector<int64_t> params = {B, T, H, N};
  for (const TensorView *view :
       {&fw.q, &fw.k, &fw.v, &fw.g, &fw.beta, &in.dOutput, &out.dq, &out.dk,
        &out.dv, &out.dg, &out.dbeta})
    params.insert(params.end(), view->strides.begin(),
                  view->strides.begin() + 3);
  context.impl().run(*executor, bindByName(executor->plan(), named), params,
                     stream);
}
