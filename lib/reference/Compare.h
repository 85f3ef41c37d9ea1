//===- Compare.h - How close a result is to its reference -------*- C++ -*-===//

#ifndef RUDNN_LIB_REFERENCE_COMPARE_H
#define RUDNN_LIB_REFERENCE_COMPARE_H

#include <algorithm>
#include <cmath>
#include <vector>

namespace rudnn::reference {

/// ‖got − want‖ / ‖want‖ (infinite when `got` holds a NaN or infinity).
inline double relativeError(const std::vector<double> &got,
                            const std::vector<double> &want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < got.size() && i < want.size(); ++i) {
    double diff = got[i] - want[i];
    num += std::isfinite(got[i]) ? diff * diff : INFINITY;
    den += want[i] * want[i];
  }
  if (got.size() != want.size())
    return INFINITY;
  return std::sqrt(num / std::max(den, 1e-300));
}

} // namespace rudnn::reference

#endif // RUDNN_LIB_REFERENCE_COMPARE_H
