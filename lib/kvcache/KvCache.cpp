//===- KvCache.cpp - Decoder attention over a K/V cache through the JIT ---===//
//
// The typed entry point over callOperator: validates a decoding step
// against its operator's contract and, without a status tensor, its
// entries on the host; the caches are both operands and results, updated
// in place by the plan. B, T, S (or P and M), H, G and the strides are read
// from the views; with a status the lengths and the block table never
// leave the device.
//
//===----------------------------------------------------------------------===//

#include "lib/attention/ScoreOptions.h"
#include "runtime/checks/ContractChecks.h"

#include "dialects/IR/attention/AttentionContracts.h"
#include "dialects/IR/kvcache/KvCachePolicy.h"

#include "rudnn/errors.h"
#include "rudnn/kv_cache.h"
#include "rudnn/operator.h"

#include <cmath>
#include <map>

using namespace rudnn;

namespace {

/// Without a status tensor the lengths (and block table) are checked on the
/// host, as kdaDecode checks its slots: each entry's append fits its
/// capacity, its left padding is within its length, its pages are in
/// [0, P), and no page one entry appends to is one another entry reads.
/// Throws InvalidArgument naming the entries.
void checkEntriesOnHost(Context &context, const KvCacheInputs &in,
                        const DimSizes &dims, Stream stream) {
  const int64_t B = dims['B'], T = in.k ? dims['T'] : 0;
  std::vector<int32_t> lengths(static_cast<size_t>(B)), leftpad;
  context.copyToHost(lengths.data(), in.cacheLengths.data,
                     lengths.size() * sizeof(int32_t), stream);
  if (in.cacheLeftpad) {
    leftpad.resize(static_cast<size_t>(B));
    context.copyToHost(leftpad.data(), in.cacheLeftpad->data,
                       leftpad.size() * sizeof(int32_t), stream);
  }
  std::vector<int32_t> rows;
  if (in.cacheBatchIdx) {
    rows.resize(static_cast<size_t>(B));
    context.copyToHost(rows.data(), in.cacheBatchIdx->data,
                       rows.size() * sizeof(int32_t), stream);
  }
  std::vector<int32_t> table;
  const bool paged = in.blockTable.has_value();
  const int64_t Z = paged ? dims['Z'] : 0, M = paged ? dims['M'] : 0;
  if (paged) {
    table.resize(static_cast<size_t>(B * M));
    context.copyToHost(table.data(), in.blockTable->data,
                       table.size() * sizeof(int32_t), stream);
  }
  context.synchronize(stream);
  const int64_t capacity = paged ? M * Z : dims['S'];
  const std::string hint = " (give 'status' to have such entries refused on "
                           "the device instead)";
  for (int64_t b = 0; b < B; ++b) {
    const int64_t length = lengths[b];
    if (length < 0 || length + T > capacity)
      throw InvalidArgument("'cache_lengths' entry " + std::to_string(b) +
                            " is " + std::to_string(length) + ": appending " +
                            std::to_string(T) + " tokens needs 0 ≤ length ≤ " +
                            std::to_string(capacity - T) + " (the capacity " +
                            std::to_string(capacity) + " less the tokens)" +
                            hint);
    if (!leftpad.empty() && (leftpad[b] < 0 || leftpad[b] > length))
      throw InvalidArgument("'cache_leftpad' entry " + std::to_string(b) +
                            " is " + std::to_string(leftpad[b]) +
                            ": the left padding must be 0 to the entry's "
                            "length, " +
                            std::to_string(length) + hint);
    if (in.rotaryCos && length + T > dims['R'])
      throw InvalidArgument(
          "'cache_lengths' entry " + std::to_string(b) + " is " +
          std::to_string(length) + ": its " + std::to_string(T) +
          " new tokens need rotary positions to " +
          std::to_string(length + T - 1) + ", past the " +
          std::to_string(dims['R']) + " of 'rotary_cos'" + hint);
    if (!rows.empty() && (rows[b] < 0 || rows[b] >= dims['N']))
      throw InvalidArgument("'cache_batch_idx' entry " + std::to_string(b) +
                            " is " + std::to_string(rows[b]) +
                            ", outside the cache's " +
                            std::to_string(dims['N']) + " rows" + hint);
    for (int64_t other = 0; T > 0 && !rows.empty() && other < b; ++other)
      if (rows[other] == rows[b])
        throw InvalidArgument("'cache_batch_idx' entries " +
                              std::to_string(other) + " and " +
                              std::to_string(b) + " both append to cache row " +
                              std::to_string(rows[b]) + hint);
  }
  if (!paged)
    return;
  // The entry appending to each page, and each page's readers.
  std::map<int32_t, int64_t> appender;
  for (int64_t b = 0; b < B; ++b) {
    const int64_t used = (lengths[b] + T + Z - 1) / Z;
    for (int64_t slot = 0; slot < used; ++slot) {
      const int32_t page = table[b * M + slot];
      if (page < 0 || page >= dims['P'])
        throw InvalidArgument(
            "'block_table' entry " + std::to_string(b) + " holds page " +
            std::to_string(page) + " at slot " + std::to_string(slot) +
            ", outside the " + std::to_string(dims['P']) + " pages" + hint);
      if (T > 0 && slot >= lengths[b] / Z) {
        auto [it, inserted] = appender.emplace(page, b);
        if (!inserted && it->second != b)
          throw InvalidArgument("'block_table' entries " +
                                std::to_string(it->second) + " and " +
                                std::to_string(b) + " both append to page " +
                                std::to_string(page) + hint);
      }
    }
  }
  for (int64_t b = 0; b < B; ++b) {
    const int64_t used = (lengths[b] + T + Z - 1) / Z;
    for (int64_t slot = 0; slot < used; ++slot) {
      auto it = appender.find(table[b * M + slot]);
      if (it != appender.end() && it->second != b)
        throw InvalidArgument(
            "'block_table' entry " + std::to_string(it->second) +
            " appends to page " + std::to_string(it->first) + ", which entry " +
            std::to_string(b) + " reads: the pages an entry appends to must " +
            "be its own" + hint);
    }
  }
}

} // namespace

void rudnn::kvCacheAttention(Context &context, const KvCacheInputs &in,
                             const KvCacheOutputs &out,
                             const KvCacheOptions &options, Stream stream) {
  // Validation: every fault named before anything runs. The caches are
  // their own results.
  const bool paged = in.blockTable.has_value();
  DimSizes dims =
      paged ? checkCall(kvCacheAttentionPagedContract(),
                        {&in.q, viewOf(in.k), viewOf(in.v), &in.kCache,
                         &in.vCache, &*in.blockTable, &in.cacheLengths,
                         viewOf(in.cacheLeftpad), viewOf(in.alibiSlopes),
                         viewOf(in.rotaryCos), viewOf(in.rotarySin)},
                        {&out.o, &in.kCache, &in.vCache, viewOf(out.lse),
                         viewOf(out.status)})
            : checkCall(kvCacheAttentionContract(),
                        {&in.q, viewOf(in.k), viewOf(in.v), &in.kCache,
                         &in.vCache, &in.cacheLengths, viewOf(in.cacheLeftpad),
                         viewOf(in.cacheBatchIdx), viewOf(in.alibiSlopes),
                         viewOf(in.rotaryCos), viewOf(in.rotarySin)},
                        {&out.o, &in.kCache, &in.vCache, viewOf(out.lse),
                         viewOf(out.status)});
  // What the verifier cannot see on dynamic sizes (the operator's rules on
  // k, v and the rotary tables' presence it checks itself).
  if (paged && in.cacheBatchIdx)
    throw InvalidArgument("'cache_batch_idx' maps entries to the rows of a "
                          "contiguous cache; a paged one has its block table");
  if (in.rotaryCos && 2 * dims['Q'] > dims['D'])
    throw InvalidArgument(
        "'rotary_cos' has " + std::to_string(dims['Q']) +
        " pairs a position: at most D / 2 = " + std::to_string(dims['D'] / 2));
  if (!paged && !in.cacheBatchIdx && dims['N'] != dims['B'])
    throw InvalidArgument("'k_cache' has " + std::to_string(dims['N']) +
                          " rows for " + std::to_string(dims['B']) +
                          " entries: without 'cache_batch_idx' they are one "
                          "each");
  if (options.splits < 0 || options.splits > mlir::rudnn::kDecodeMaxSplits)
    throw InvalidArgument("'splits' must be 0 (the device chooses) or 1 to " +
                          std::to_string(mlir::rudnn::kDecodeMaxSplits) +
                          ", got " + std::to_string(options.splits));
  for (char letter : {'B', 'T', 'S', 'P', 'M', 'N', 'R'})
    if (dims.has(letter) && dims[letter] > INT32_MAX / 2)
      throw InvalidArgument(std::string("dim ") + letter +
                            " must be below 2^30");
  if (!out.status)
    checkEntriesOnHost(context, in, dims, stream);
  OperatorAttributes attributes;
  if (!options.causal)
    attributes.emplace_back("non_causal", true);
  if (options.rotaryInterleaved && in.rotaryCos)
    attributes.emplace_back("rotary_interleaved", true);
  addScoreOptions(attributes, options.scale, options.softcap,
                  options.windowLeft, options.windowRight);
  if (options.splits)
    attributes.emplace_back("splits", int64_t(options.splits));
  // The caches are operands, and results updated in place: named once.
  NamedTensors tensors = {{"q", in.q},
                          {paged ? "k_pages" : "k_cache", in.kCache},
                          {paged ? "v_pages" : "v_cache", in.vCache},
                          {"cache_lengths", in.cacheLengths},
                          {"o", out.o}};
  addIfGiven(tensors, "k", in.k);
  addIfGiven(tensors, "v", in.v);
  addIfGiven(tensors, "block_table", in.blockTable);
  addIfGiven(tensors, "cache_leftpad", in.cacheLeftpad);
  addIfGiven(tensors, "alibi_slopes", in.alibiSlopes);
  addIfGiven(tensors, "cache_batch_idx", in.cacheBatchIdx);
  addIfGiven(tensors, "rotary_cos", in.rotaryCos);
  addIfGiven(tensors, "rotary_sin", in.rotarySin);
  addIfGiven(tensors, "lse", out.lse);
  addIfGiven(tensors, "status", out.status);
  callOperator(context,
               paged ? "rudnn.kv_cache_attention_paged"
                     : "rudnn.kv_cache_attention",
               attributes, tensors, stream);
}
