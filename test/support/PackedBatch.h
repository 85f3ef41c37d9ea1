//===- PackedBatch.h - A packed batch's offsets -----------------*- C++ -*-===//

#ifndef RUDNN_TEST_SUPPORT_PACKEDBATCH_H
#define RUDNN_TEST_SUPPORT_PACKEDBATCH_H

#include <cstdint>
#include <vector>

namespace rudnn::test {

/// The offsets (cu_seqlens) of entries of the given query and key counts,
/// with the totals T and S and the offsets' count C = entries + 1.
struct PackedBatch {
  std::vector<double> queryOffsets{0}, keyOffsets{0};
  int64_t T = 0, S = 0, C = 1;

  PackedBatch(const std::vector<int> &queries, const std::vector<int> &keys) {
    for (size_t b = 0; b < queries.size(); ++b) {
      queryOffsets.push_back(queryOffsets.back() + queries[b]);
      keyOffsets.push_back(keyOffsets.back() + keys[b]);
    }
    T = static_cast<int64_t>(queryOffsets.back());
    S = static_cast<int64_t>(keyOffsets.back());
    C = static_cast<int64_t>(queryOffsets.size());
  }
};

} // namespace rudnn::test

#endif // RUDNN_TEST_SUPPORT_PACKEDBATCH_H
