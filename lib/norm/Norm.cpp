//===- Norm.cpp - Moments, LayerNorm and RMSNorm through the JIT ----------===//
//
// The typed entry points over callOperator: each names its tensors as the
// operator's contract does and adds the rules its own structs cannot say.
// The rows and strides are read from the views, eps is a kernel argument.
//
//===----------------------------------------------------------------------===//

#include "rudnn/norm.h"
#include "rudnn/errors.h"
#include "rudnn/operator.h"

using namespace rudnn;

namespace {

/// `tensors` with `name` added when `view` is given.
/// x's rank picks the contract: [N, C] or [M, N, C].
void checkRows(const TensorView &x) {
  if (x.shape.size() != 2 && x.shape.size() != 3)
    throw InvalidArgument("'x' must be [N, C] or [M, N, C], got rank " +
                          std::to_string(x.shape.size()));
}

NamedTensors forwardTensors(const NormInputs &in) {
  checkRows(in.x);
  NamedTensors tensors = {{"x", in.x}};
  addIfGiven(tensors, "residual", in.residual);
  addIfGiven(tensors, "gamma", in.gamma);
  return tensors;
}

void requireResidualFor(const std::optional<TensorView> &h,
                        const NormInputs &in) {
  if (h && !in.residual)
    throw InvalidArgument("'h' is x + residual: it needs a 'residual'");
}

} // namespace

void rudnn::layerNorm(Context &context, const NormInputs &in,
                      const LayerNormOutputs &out, float eps, Stream stream) {
  requireResidualFor(out.h, in);
  NamedTensors tensors = forwardTensors(in);
  addIfGiven(tensors, "beta", in.beta);
  tensors.emplace_back("y", out.y);
  addIfGiven(tensors, "mean", out.mean);
  addIfGiven(tensors, "rstd", out.rstd);
  addIfGiven(tensors, "h", out.h);
  callOperator(context, "rudnn.layer_norm", {{"eps", double(eps)}}, tensors,
               stream);
}

void rudnn::rmsNorm(Context &context, const NormInputs &in,
                    const RmsNormOutputs &out, float eps, Stream stream) {
  if (in.beta)
    throw InvalidArgument("'beta': RMSNorm has no shift");
  requireResidualFor(out.h, in);
  NamedTensors tensors = forwardTensors(in);
  tensors.emplace_back("y", out.y);
  addIfGiven(tensors, "rstd", out.rstd);
  addIfGiven(tensors, "h", out.h);
  callOperator(context, "rudnn.rms_norm", {{"eps", double(eps)}}, tensors,
               stream);
}

void rudnn::moments(Context &context, const TensorView &x,
                    const MomentsOutputs &out, Stream stream) {
  checkRows(x);
  callOperator(context, "rudnn.moments", {},
               {{"x", x}, {"mean", out.mean}, {"var", out.var}}, stream);
}

void rudnn::layerNormBackward(Context &context, const NormBackwardInputs &in,
                              const NormBackwardOutputs &out, Stream stream) {
  checkRows(in.x);
  if (!in.mean)
    throw InvalidArgument("'mean' is missing: LayerNorm's backward reads "
                          "the forward's mean");
  NamedTensors tensors = {{"dy", in.dy},
                          {"x", in.x},
                          {"mean", *in.mean},
                          {"rstd", in.rstd},
                          {"dx", out.dx}};
  addIfGiven(tensors, "gamma", in.gamma);
  addIfGiven(tensors, "dgamma", out.dgamma);
  addIfGiven(tensors, "dbeta", out.dbeta);
  callOperator(context, "rudnn.layer_norm_backward", {}, tensors, stream);
}

void rudnn::rmsNormBackward(Context &context, const NormBackwardInputs &in,
                            const NormBackwardOutputs &out, Stream stream) {
  checkRows(in.x);
  if (in.mean)
    throw InvalidArgument("'mean': RMSNorm's backward reads rstd alone");
  if (out.dbeta)
    throw InvalidArgument("'dbeta': RMSNorm has no shift");
  NamedTensors tensors = {
      {"dy", in.dy}, {"x", in.x}, {"rstd", in.rstd}, {"dx", out.dx}};
  addIfGiven(tensors, "gamma", in.gamma);
  addIfGiven(tensors, "dgamma", out.dgamma);
  callOperator(context, "rudnn.rms_norm_backward", {}, tensors, stream);
}
