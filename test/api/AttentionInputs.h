//===- AttentionInputs.h - Fresh inputs of an attention test ----*- C++ -*-===//

#ifndef RUDNN_TEST_API_ATTENTIONINPUTS_H
#define RUDNN_TEST_API_ATTENTIONINPUTS_H

#include "lib/reference/attention/AttentionReference.h"
#include "test/api/ApiFixture.h"

#include <random>

namespace rudnn::test {

/// Standard-normal q [rows, H, D], k [keyRows, G, D] and v [keyRows, G, E],
/// drawn from `random` in that order and rounded to `dtype` (rows: B·T,
/// or the packed total).
inline reference::AttentionInputs
randomAttentionInputs(int64_t rows, int64_t keyRows, int64_t H, int64_t G,
                      int64_t D, int64_t E, DType dtype, std::mt19937 &random) {
  reference::AttentionInputs in;
  in.q = normalValues(rows * H * D, random);
  in.k = normalValues(keyRows * G * D, random);
  in.v = normalValues(keyRows * G * E, random);
  roundTo(dtype, {&in.q, &in.k, &in.v});
  return in;
}

} // namespace rudnn::test

#endif // RUDNN_TEST_API_ATTENTIONINPUTS_H
