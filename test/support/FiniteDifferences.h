//===- FiniteDifferences.h - Gradients by central differences ---*- C++ -*-===//

#ifndef RUDNN_TEST_SUPPORT_FINITEDIFFERENCES_H
#define RUDNN_TEST_SUPPORT_FINITEDIFFERENCES_H

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <tuple>
#include <vector>

namespace rudnn::test {

/// An input by name, where the perturbed copy keeps its values, and the
/// gradient claimed for it.
using GradientCheck =
    std::tuple<std::string, std::vector<double> *, const std::vector<double> *>;

/// Each element of each input against the central difference of `loss`
/// (evaluated after each perturbation) with step `step`.
inline void expectCentralDifferences(const std::vector<GradientCheck> &checks,
                                     const std::function<double()> &loss,
                                     double step = 1e-6,
                                     double tolerance = 1e-7) {
  for (const auto &[name, values, gradient] : checks) {
    ASSERT_EQ(values->size(), gradient->size()) << name;
    for (size_t i = 0; i < values->size(); ++i) {
      const double kept = (*values)[i];
      (*values)[i] = kept + step;
      const double up = loss();
      (*values)[i] = kept - step;
      const double down = loss();
      (*values)[i] = kept;
      EXPECT_NEAR((*gradient)[i], (up - down) / (2 * step), tolerance)
          << name << "[" << i << "]";
    }
  }
}

} // namespace rudnn::test

#endif // RUDNN_TEST_SUPPORT_FINITEDIFFERENCES_H
