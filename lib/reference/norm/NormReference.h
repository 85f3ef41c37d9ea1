//===- NormReference.h - Float64 moments, LayerNorm and RMSNorm -*- C++ -*-===//
//
// The definitions, computed in float64 with the two-pass variance, rows of
// `features` elements one after another.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_LIB_REFERENCE_NORM_NORMREFERENCE_H
#define RUDNN_LIB_REFERENCE_NORM_NORMREFERENCE_H

#include <cstdint>
#include <vector>

namespace rudnn::reference {

struct NormInputs {
  std::vector<double> x;
  std::vector<double> residual, gamma, beta; // empty: none
};

struct NormOutputs {
  std::vector<double> y, mean, var, rstd, h; // per row: mean, var, rstd
};

/// h = x + residual; mean and population variance of each row of h;
/// LayerNorm y = (h − mean) / sqrt(var + eps) · gamma + beta.
NormOutputs layerNorm(const NormInputs &in, int64_t features, double eps);

/// h = x + residual; rstd = 1 / sqrt(mean(h²) + eps); y = h · rstd · gamma.
NormOutputs rmsNorm(const NormInputs &in, int64_t features, double eps);

struct NormGradients {
  std::vector<double> dx, dgamma, dbeta;
};

/// The analytic gradients at x from the saved statistics (mean empty for
/// RMSNorm, gamma empty for ones): x̂ = (x − mean)·rstd, g = dy·gamma,
/// dx = rstd·(g − mean(g) − x̂·mean(g·x̂)) (no mean(g) for RMSNorm),
/// dgamma = Σ dy·x̂, dbeta = Σ dy.
NormGradients normBackward(const std::vector<double> &dy,
                           const std::vector<double> &x,
                           const std::vector<double> &mean,
                           const std::vector<double> &rstd,
                           const std::vector<double> &gamma, int64_t features);

} // namespace rudnn::reference

#endif // RUDNN_LIB_REFERENCE_NORM_NORMREFERENCE_H
