//===- Compare.h - How close a result is to its reference -------*- C++ -*-===//
//
// A result is compared with its float64 reference by ‖got − want‖ relative
// to ‖want‖. Where the result is far smaller than the terms it is made of
// (cancellation: a state of 0.04 left by terms of size 1), rounding errors
// scale with the terms, not with the result, so the basis has a floor: the
// result's sensitivity ‖s‖, how far the result moves per unit of relative
// change when every input moves by a small relative amount of random sign
// (computed from the reference in float64). For a result without
// cancellation ‖s‖ is about ‖want‖. The comparison says which basis it used.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_LIB_REFERENCE_COMPARE_H
#define RUDNN_LIB_REFERENCE_COMPARE_H

#include <algorithm>
#include <cmath>
#include <vector>

namespace rudnn::reference {

/// ‖x‖₂ over the finite entries.
inline double norm(const std::vector<double> &x) {
  double sum = 0;
  for (double v : x)
    sum += std::isfinite(v) ? v * v : 0.0; // an exact −inf lse is no size
  return std::sqrt(sum);
}

/// ‖got − want‖ / ‖want‖ (infinite when `got` holds a NaN or infinity).
inline double relativeError(const std::vector<double> &got,
                            const std::vector<double> &want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    // An infinite reference (the −inf log-sum-exp of a row with nothing to
    // sum) must be matched exactly; it adds to neither norm.
    if (std::isinf(want[i])) {
      num += got[i] == want[i] ? 0.0 : INFINITY;
      continue;
    }
    double diff = got[i] - want[i];
    num += std::isfinite(got[i]) ? diff * diff : INFINITY;
    den += want[i] * want[i];
  }
  if (got.size() != want.size())
    return INFINITY;
  return std::sqrt(num / std::max(den, 1e-300));
}

struct Comparison {
  /// ‖got − want‖ / basis.
  double error = 0;
  /// The basis: ‖want‖, or the sensitivity's norm when that is larger.
  double basis = 0;
  bool basisIsSensitivity = false;
};

/// `got` against `want`, relative to max(‖want‖, ‖sensitivity‖); without a
/// sensitivity, relative to ‖want‖ alone.
inline Comparison compare(const std::vector<double> &got,
                          const std::vector<double> &want,
                          const std::vector<double> &sensitivity = {}) {
  Comparison c;
  const double wantNorm = norm(want);
  const double floor = norm(sensitivity);
  c.basisIsSensitivity = floor > wantNorm;
  c.basis = std::max(wantNorm, floor);
  c.error = relativeError(got, want) * std::max(wantNorm, 1e-150) /
            std::max(c.basis, 1e-150);
  return c;
}

} // namespace rudnn::reference

#endif // RUDNN_LIB_REFERENCE_COMPARE_H
