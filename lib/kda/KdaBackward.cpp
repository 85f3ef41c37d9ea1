//===- KdaBackward.cpp - Kimi Delta Attention backward through the JIT ----===//
//
// The typed entry point over callOperator: rudnn.kda_backward
// (rudnn.kda_varlen_backward for packed sequences). The forward's prepare
// and propagate recompute the chunk quantities and boundary states in the
// workspace (with the forward's saved boundaries, prepare and restore;
// with its tiles too, restore alone), then the backward's state_gradient
// and gradients write the gradients.
//
//===----------------------------------------------------------------------===//

#include "lib/kda/KdaChecks.h"

#include "rudnn/kda.h"
#include "rudnn/operator.h"

using namespace rudnn;

void rudnn::kdaBackward(Context &context, const KdaBackwardInputs &in,
                        const KdaBackwardOutputs &out,
                        const KdaOptions &options, Stream stream) {
  const KdaForwardInputs &fw = in.forward;
  checkKdaBackwardCall(in, out, options);
  NamedTensors tensors = kdaInputTensors(fw);
  addIfGiven(tensors, "boundaries", in.boundaries);
  addIfGiven(tensors, "tiles", in.tiles);
  tensors.emplace_back("d_output", in.dOutput);
  addIfGiven(tensors, "d_final_state", in.dFinalState);
  for (auto [name, view] : {std::pair{"dq", &out.dq},
                            {"dk", &out.dk},
                            {"dv", &out.dv},
                            {"dg", &out.dg},
                            {"dbeta", &out.dbeta}})
    tensors.emplace_back(name, *view);
  addIfGiven(tensors, "d_initial_state", out.dInitialState);
  addIfGiven(tensors, "d_a_log", out.dALog);
  addIfGiven(tensors, "d_dt_bias", out.dDtBias);
  callOperator(context,
               fw.cuSeqlens ? "rudnn.kda_varlen_backward"
                            : "rudnn.kda_backward",
               kdaAttributes(fw.q, fw.v,
                             inputTransformsOf(fw.aLog.has_value(),
                                               fw.dtBias.has_value(), options),
                             options, /*chunked=*/true),
               tensors, stream);
}
