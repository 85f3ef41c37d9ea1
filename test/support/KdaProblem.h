//===- KdaProblem.h - Random KDA problems and their checks ------*- C++ -*-===//

#ifndef RUDNN_TEST_SUPPORT_KDAPROBLEM_H
#define RUDNN_TEST_SUPPORT_KDAPROBLEM_H

#include "lib/reference/Compare.h"
#include "lib/reference/kda/KdaReference.h"
#include "runtime/support/HostFloat.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

namespace rudnn::test {

inline uint16_t toBf16(double x) { return runtime::toBfloat16(x); }
inline float fromBf16(uint16_t x) {
  return static_cast<float>(runtime::fromBfloat16(x));
}

using reference::relativeError;

/// `count` standard normal values.
inline std::vector<double> normalValues(size_t count, std::mt19937 &random) {
  std::normal_distribution<double> normal;
  std::vector<double> values(count);
  for (double &x : values)
    x = normal(random);
  return values;
}

/// Inputs drawn as real callers provide them: q, v normal; keys
/// L2-normalised; beta in (0.05, 0.95); g uniform in [gMin, 0]; the
/// initial state normal × 0.5. With `bf16`, q, k, v and beta are rounded to
/// bf16 (g stays f32), so the reference sees what the kernel reads.
inline reference::KdaInputs randomKdaInputs(const reference::KdaShape &shape,
                                            double gMin, bool initialState,
                                            bool bf16, unsigned seed) {
  const int64_t rows = shape.batch * shape.length * shape.heads;
  const int64_t K = shape.featureK, V = shape.featureV;
  std::mt19937 random(seed);
  std::normal_distribution<double> normal;
  std::uniform_real_distribution<double> unit(0, 1);
  reference::KdaInputs in;
  in.q.resize(rows * K);
  in.k.resize(rows * K);
  in.g.resize(rows * K);
  in.v.resize(rows * V);
  in.beta.resize(rows);
  for (double &x : in.q)
    x = normal(random);
  for (double &x : in.v)
    x = normal(random);
  for (double &x : in.g)
    x = static_cast<float>(gMin * unit(random));
  for (double &x : in.beta)
    x = 0.05 + 0.9 * unit(random);
  for (int64_t row = 0; row < rows; ++row) {
    double norm = 0;
    for (int64_t d = 0; d < K; ++d) {
      double x = normal(random);
      in.k[row * K + d] = x;
      norm += x * x;
    }
    for (int64_t d = 0; d < K; ++d)
      in.k[row * K + d] /= std::sqrt(norm);
  }
  if (initialState) {
    in.initialState.resize(shape.batch * shape.heads * K * V);
    for (double &x : in.initialState)
      x = static_cast<float>(0.5 * normal(random));
  }
  for (std::vector<double> *data : {&in.q, &in.k, &in.v, &in.beta})
    for (double &x : *data)
      x = bf16 ? fromBf16(toBf16(static_cast<float>(x)))
               : static_cast<float>(x);
  return in;
}

} // namespace rudnn::test

#endif // RUDNN_TEST_SUPPORT_KDAPROBLEM_H
