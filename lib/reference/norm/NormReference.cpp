//===- NormReference.cpp - Float64 moments, LayerNorm and RMSNorm ---------===//

#include "lib/reference/norm/NormReference.h"

#include <cmath>

using namespace rudnn::reference;

namespace {

/// h = x + residual, rows of `features`.
std::vector<double> sum(const NormInputs &in) {
  std::vector<double> h = in.x;
  if (!in.residual.empty())
    for (size_t i = 0; i < h.size(); ++i)
      h[i] += in.residual[i];
  return h;
}

double gammaAt(const NormInputs &in, int64_t c) {
  return in.gamma.empty() ? 1.0 : in.gamma[c];
}

/// The summed input h and y sized like it; `row(out, r, h)` for each row,
/// which writes the row's y.
template <typename Row>
NormOutputs normRows(const NormInputs &in, int64_t features, Row row) {
  NormOutputs out;
  out.h = sum(in);
  const int64_t rows = features ? int64_t(out.h.size()) / features : 0;
  out.y.resize(out.h.size());
  for (int64_t r = 0; r < rows; ++r)
    row(out, r, out.h.data() + r * features);
  return out;
}

} // namespace

NormOutputs rudnn::reference::layerNorm(const NormInputs &in, int64_t features,
                                        double eps) {
  return normRows(
      in, features, [&](NormOutputs &out, int64_t r, const double *h) {
        double mean = 0.0, var = 0.0;
        for (int64_t c = 0; c < features; ++c)
          mean += h[c];
        mean /= double(features);
        for (int64_t c = 0; c < features; ++c)
          var += (h[c] - mean) * (h[c] - mean);
        var /= double(features);
        const double rstd = 1.0 / std::sqrt(var + eps);
        for (int64_t c = 0; c < features; ++c)
          out.y[r * features + c] = (h[c] - mean) * rstd * gammaAt(in, c) +
                                    (in.beta.empty() ? 0.0 : in.beta[c]);
        out.mean.push_back(mean);
        out.var.push_back(var);
        out.rstd.push_back(rstd);
      });
}

NormOutputs rudnn::reference::rmsNorm(const NormInputs &in, int64_t features,
                                      double eps) {
  return normRows(
      in, features, [&](NormOutputs &out, int64_t r, const double *h) {
        double squares = 0.0;
        for (int64_t c = 0; c < features; ++c)
          squares += h[c] * h[c];
        const double rstd = 1.0 / std::sqrt(squares / double(features) + eps);
        for (int64_t c = 0; c < features; ++c)
          out.y[r * features + c] = h[c] * rstd * gammaAt(in, c);
        out.rstd.push_back(rstd);
      });
}

NormGradients rudnn::reference::normBackward(const std::vector<double> &dy,
                                             const std::vector<double> &x,
                                             const std::vector<double> &mean,
                                             const std::vector<double> &rstd,
                                             const std::vector<double> &gamma,
                                             int64_t features) {
  NormGradients out;
  const int64_t rows = features ? int64_t(x.size()) / features : 0;
  out.dx.resize(x.size());
  out.dgamma.assign(features, 0.0);
  out.dbeta.assign(features, 0.0);
  std::vector<double> xhat(features), g(features);
  for (int64_t r = 0; r < rows; ++r) {
    const double centre = mean.empty() ? 0.0 : mean[r];
    double sumG = 0.0, sumGX = 0.0;
    for (int64_t c = 0; c < features; ++c) {
      const int64_t i = r * features + c;
      xhat[c] = (x[i] - centre) * rstd[r];
      g[c] = dy[i] * (gamma.empty() ? 1.0 : gamma[c]);
      sumG += g[c];
      sumGX += g[c] * xhat[c];
      out.dgamma[c] += dy[i] * xhat[c];
      out.dbeta[c] += dy[i];
    }
    const double meanG = mean.empty() ? 0.0 : sumG / double(features),
                 meanGX = sumGX / double(features);
    for (int64_t c = 0; c < features; ++c)
      out.dx[r * features + c] = rstd[r] * (g[c] - meanG - xhat[c] * meanGX);
  }
  return out;
}
