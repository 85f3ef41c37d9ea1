//===- rudnn/norm.h - Moments, LayerNorm and RMSNorm ------------*- C++ -*-===//

#ifndef RUDNN_NORM_H
#define RUDNN_NORM_H

#include "rudnn/context.h"

#include <optional>

namespace rudnn {

/// x [N, C] or [M, N, C] (f32, f16 or bf16; any strides on the row dims,
/// the last contiguous); optionally residual, as x (normalised is then
/// h = x + residual), and gamma, beta [C] (dense, x's dtype). C is 1 to
/// 2^24; M at most 65535.
struct NormInputs {
  TensorView x;
  std::optional<TensorView> residual, gamma, beta;
};

/// y as x; mean and rstd [N] (or [M, N], dense f32); h = x + residual as x.
/// No output may overlap another or an input.
struct LayerNormOutputs {
  TensorView y;
  std::optional<TensorView> mean, rstd, h;
};

/// y as x; rstd [N] (or [M, N], dense f32); h = x + residual as x.
struct RmsNormOutputs {
  TensorView y;
  std::optional<TensorView> rstd, h;
};

/// mean and the population variance var [N] (or [M, N], dense f32).
struct MomentsOutputs {
  TensorView mean, var;
};

/// y = (h − mean) / sqrt(var + eps) · gamma + beta over the last dim, var
/// the population variance (torch.nn.functional.layer_norm), computed in
/// one pass (Welford, Chan) around each row's first element, so rows far
/// from zero keep their variance. One compile per signature (dtype, C,
/// rank, which inputs and outputs); the rows and strides never recompile,
/// and another eps reuses the compiled kernels. Throws InvalidArgument
/// naming the bad argument before anything is written.
void layerNorm(Context &context, const NormInputs &inputs,
               const LayerNormOutputs &outputs, float eps = 1e-5f,
               Stream stream = nullptr);

/// y = h / sqrt(mean(h²) + eps) · gamma (torch.nn.functional.rms_norm);
/// no beta.
void rmsNorm(Context &context, const NormInputs &inputs,
             const RmsNormOutputs &outputs, float eps = 1e-6f,
             Stream stream = nullptr);

/// Each row's mean and population variance; x alone.
void moments(Context &context, const TensorView &x,
             const MomentsOutputs &outputs, Stream stream = nullptr);

/// The backward's tensors: dy and x as the forward's x (x the rows it
/// normalised: h = x + residual when it added one, whose gradient is then
/// dx too), the saved mean (LayerNorm) and rstd, gamma when the forward
/// had one.
struct NormBackwardInputs {
  TensorView dy, x;
  std::optional<TensorView> mean;
  TensorView rstd;
  std::optional<TensorView> gamma;
};

/// dx as x; dgamma and dbeta [C] (dense, x's dtype), each optional.
struct NormBackwardOutputs {
  TensorView dx;
  std::optional<TensorView> dgamma, dbeta;
};

/// LayerNorm's gradients with x̂ = (x − mean)·rstd and g = dy·gamma:
/// dx = rstd·(g − mean(g) − x̂·mean(g·x̂)), dgamma = Σ dy·x̂, dbeta = Σ dy
/// over the rows, deterministic (the same bits every call: fixed blocks
/// sum their rows, then the blocks' sums are added in order).
void layerNormBackward(Context &context, const NormBackwardInputs &inputs,
                       const NormBackwardOutputs &outputs,
                       Stream stream = nullptr);

/// RMSNorm's: x̂ = x·rstd, dx = rstd·(g − x̂·mean(g·x̂)), dgamma = Σ dy·x̂;
/// no mean, no dbeta.
void rmsNormBackward(Context &context, const NormBackwardInputs &inputs,
                     const NormBackwardOutputs &outputs,
                     Stream stream = nullptr);

} // namespace rudnn

#endif // RUDNN_NORM_H
