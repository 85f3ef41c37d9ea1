//===- CompareTest.cpp - Results against their float64 references --------===//

#include "lib/reference/Compare.h"

#include <gtest/gtest.h>

#include <limits>

using namespace rudnn::reference;

namespace {

TEST(Compare, RelativeToTheResultWithoutCancellation) {
  const std::vector<double> want{3, 4}, got{3, 4.05};
  Comparison c = compare(got, want, /*sensitivity=*/{2.9, 3.9});
  EXPECT_FALSE(c.basisIsSensitivity);
  EXPECT_DOUBLE_EQ(c.basis, 5.0);
  EXPECT_NEAR(c.error, 0.05 / 5.0, 1e-12);
}

// A result of 0.01 left by terms of size 1: an error of 1e-3 is a rounding
// error of the terms, a tenth of the result.
TEST(Compare, RelativeToTheSensitivityUnderCancellation) {
  const std::vector<double> want{0.01}, got{0.011};
  EXPECT_NEAR(compare(got, want).error, 0.1, 1e-12);
  Comparison c = compare(got, want, {1.0});
  EXPECT_TRUE(c.basisIsSensitivity);
  EXPECT_DOUBLE_EQ(c.basis, 1.0);
  EXPECT_NEAR(c.error, 1e-3, 1e-12);
}

TEST(Compare, WrongResultsAndNonFiniteValuesStillFail) {
  const std::vector<double> want{0.01}, sensitivity{1.0};
  EXPECT_GT(compare({0.5}, want, sensitivity).error, 0.4);
  EXPECT_EQ(
      compare({std::numeric_limits<double>::quiet_NaN()}, want, sensitivity)
          .error,
      INFINITY);
  EXPECT_EQ(compare({0.01, 0.0}, want, sensitivity).error, INFINITY);
}

} // namespace
