//===- AttentionInputs.h - Fresh inputs of an attention test ----*- C++ -*-===//

#ifndef RUDNN_TEST_API_ATTENTIONINPUTS_H
#define RUDNN_TEST_API_ATTENTIONINPUTS_H

#include "lib/reference/attention/AttentionReference.h"
#include "test/api/ApiFixture.h"
#include "test/support/PackedBatch.h"

#include "rudnn/attention.h"

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

/// The edge entries of a packed batch: no query, one query, no key, more
/// queries than keys (causal: rows that see nothing), then `queries`
/// queries over `keys` keys (past a tile of either).
inline std::vector<int> edgeQueries(int queries) {
  return {0, 1, 70, 5, 33, queries};
}
inline std::vector<int> edgeKeys(int keys) { return {3, 1, 70, 0, 20, keys}; }

/// A packed batch of entries with the given query and key counts, and its
/// fresh inputs over the totals (q [T, H, D], k [S, G, D], v [S, G, E]).
/// `random`, seeded from the totals and `salt`, draws what a test adds.
struct PackedAttention {
  PackedBatch batch;
  int64_t H, G, D, E;
  DType dtype;
  std::mt19937 random;
  reference::AttentionInputs in;

  PackedAttention(const std::vector<int> &queries, const std::vector<int> &keys,
                  int64_t H, int64_t G, int64_t D, int64_t E, DType dtype,
                  unsigned salt)
      : batch(queries, keys), H(H), G(G), D(D), E(E), dtype(dtype),
        random(unsigned(batch.T * salt + batch.S)),
        in(randomAttentionInputs(batch.T, batch.S, H, G, D, E, dtype, random)) {
  }
};

/// A packed batch's inputs in device memory.
struct PackedAttentionTensors {
  DeviceTensor q, k, v, cuQ, cuK;

  AttentionVarlenInputs views() const {
    return {q.view, k.view, v.view, cuQ.view, cuK.view, {}};
  }
};

/// The attention suites' fixture: uploads packed batches.
class AttentionApiTest : public ApiTest {
protected:
  PackedAttentionTensors uploadPacked(const PackedAttention &p) {
    const int64_t T = p.batch.T, S = p.batch.S;
    return {dense(p.in.q, {T, p.H, p.D}, p.dtype),
            dense(p.in.k, {S, p.G, p.D}, p.dtype),
            dense(p.in.v, {S, p.G, p.E}, p.dtype),
            offsets(p.batch.queryOffsets), offsets(p.batch.keyOffsets)};
  }
};

} // namespace rudnn::test

#endif // RUDNN_TEST_API_ATTENTIONINPUTS_H
