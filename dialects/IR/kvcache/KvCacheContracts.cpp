//===- KvCacheContracts.cpp - The contracts of the K/V-cache ops ----------===//

#include "dialects/IR/attention/AttentionContracts.h"

using namespace rudnn;

namespace {

/// The dims both forms share, then the cache's own.
std::vector<DimContract> cacheDims(std::vector<DimContract> own) {
  DimContract heads{'H', "query heads", "query heads, a multiple of G"};
  heads.multipleOf = 'G';
  std::vector<DimContract> dims = {
      {'B', "dim", "batch"},
      {'T', "dim", "new tokens of each entry"},
      heads,
      {'G', "key heads", "key and value heads"},
      {'D', "head dim", "query and key features", true, 1,
       kAttentionMaxHeadDim},
      {'E', "head dim", "value features", true, 1, kAttentionMaxHeadDim}};
  dims.insert(dims.end(), own.begin(), own.end());
  return dims;
}

/// cache_lengths [B]: tokens already cached, drawn to leave room for T.
TensorContract cacheLengths(std::string_view room) {
  TensorContract lengths =
      contractTensor("cache_lengths", "B", ElementRule::I32,
                     "tokens each entry has cached (not modified): the new "
                     "ones go to positions [len, len + T)",
                     Sample::CacheLengths);
  lengths.packing = Packing::Dense;
  lengths.counts = 'T';
  lengths.room = room;
  return lengths;
}

/// q, k, v: the new tokens' queries, keys and values (k and v absent:
/// an attend-only call, nothing appended).
std::vector<TensorContract> newTokens() {
  auto fresh = [](std::string_view name, std::string_view layout,
                  std::string_view doc) {
    TensorContract tensor = withElementsOf(
        contractTensor(name, layout, ElementRule::Float, doc), "q");
    tensor.optional = true;
    return tensor;
  };
  return {contractTensor("q", "BTHD", ElementRule::Float,
                         "the new tokens' queries"),
          fresh("k", "BTGD", "the new tokens' keys (absent: attend only)"),
          fresh("v", "BTGE", "the new tokens' values (absent: attend only)")};
}

/// The options after the lengths: the left padding, the cache rows of a
/// contiguous cache's entries (`batchIndex`), the ALiBi slopes and the
/// rotary tables.
std::vector<TensorContract> options(bool batchIndex) {
  TensorContract leftpad =
      contractTensor("cache_leftpad", "B", ElementRule::I32,
                     "cached tokens before it are padding, never attended");
  leftpad.packing = Packing::Dense;
  leftpad.optional = true;
  TensorContract rows = contractTensor(
      "cache_batch_idx", "B", ElementRule::I32,
      "the cache row of each entry (distinct when appending)", Sample::Pages);
  rows.packing = Packing::Dense;
  rows.optional = true;
  rows.counts = 'N';
  TensorContract slopes = contractTensor(
      "alibi_slopes", "BH", ElementRule::F32,
      "ALiBi: a key j's score gains −slope · |d − j|, d the query's "
      "diagonal");
  slopes.optional = true;
  auto table = [](std::string_view name, std::string_view doc) {
    TensorContract rotary = withElementsOf(
        contractTensor(name, "RQ", ElementRule::Float, doc), "q");
    rotary.packing = Packing::Dense;
    rotary.optional = true;
    return rotary;
  };
  std::vector<TensorContract> tensors = {leftpad};
  if (batchIndex)
    tensors.push_back(rows);
  tensors.insert(
      tensors.end(),
      {slopes,
       table("rotary_cos", "cosines of the rotary angles, a row a position"),
       table("rotary_sin", "sines of the rotary angles, a row a position")});
  return tensors;
}

/// The rotary tables' dims.
std::vector<DimContract> rotaryDims() {
  return {{'R', "dim", "rotary positions"},
          {'Q', "dim", "rotary feature pairs (Q ≤ D / 2)", false, 1,
           kAttentionMaxHeadDim / 2}};
}

/// A cache operand of `layout`, and the result that is it, updated.
std::pair<TensorContract, TensorContract>
cache(std::string_view name, std::string_view layout, std::string_view doc) {
  TensorContract operand = withElementsOf(
      contractTensor(name, layout, ElementRule::Float, doc), "q");
  TensorContract result = operand;
  result.doc = "the same memory, the new tokens appended";
  result.updates = name;
  return {operand, result};
}

/// o, the updated caches, then the optional lse and status.
std::vector<TensorContract> results(TensorContract kCache,
                                    TensorContract vCache) {
  TensorContract lse = contractTensor(
      "lse", "BHT", ElementRule::F32,
      "log-sum-exp of each new token's scores (−inf for a refused entry)");
  lse.packing = Packing::Dense;
  lse.optional = true;
  TensorContract status = refusalStatus(
      "0: appended and attended; 1: refused (a negative length, an append "
      "past the cache or the rotary positions, a page out of range, a left "
      "padding past the length, a cache row out of range or shared): "
      "caches untouched, o 0");
  return {withElementsOf(contractTensor("o", "BTHE", ElementRule::Float,
                                        "each new token's attention to the "
                                        "cache up to and including itself"),
                         "q"),
          std::move(kCache), std::move(vCache), lse, status};
}

} // namespace

const OperatorContract &rudnn::kvCacheAttentionContract() {
  static const OperatorContract contract = [] {
    OperatorContract c;
    c.op = "rudnn.kv_cache_attention";
    c.summary = "One decoding step over a K/V cache appended in place";
    DimContract rows{'N', "dim", "cache rows (B without cache_batch_idx)"};
    rows.defaultsTo = 'B';
    std::vector<DimContract> own = {{'S', "dim", "cache capacity, Tmax"}, rows};
    for (const DimContract &dim : rotaryDims())
      own.push_back(dim);
    c.dims = cacheDims(own);
    auto [kCache, kResult] = cache("k_cache", "NSGD", "cached keys");
    auto [vCache, vResult] = cache("v_cache", "NSGE", "cached values");
    c.operands = newTokens();
    c.operands.insert(c.operands.end(), {kCache, vCache, cacheLengths("S")});
    for (const TensorContract &option : options(true))
      c.operands.push_back(option);
    c.results = results(kResult, vResult);
    return c;
  }();
  return contract;
}

const OperatorContract &rudnn::kvCacheAttentionPagedContract() {
  static const OperatorContract contract = [] {
    OperatorContract c;
    c.op = "rudnn.kv_cache_attention_paged";
    c.summary = "One decoding step over a paged K/V cache";
    std::vector<DimContract> own = {
        {'P', "dim", "pages"},
        {'Z', "page size", "tokens a page", true, 1, kKvCacheMaxPageSize},
        {'M', "dim", "pages an entry may have"}};
    for (const DimContract &dim : rotaryDims())
      own.push_back(dim);
    c.dims = cacheDims(own);
    auto [kPages, kResult] = cache("k_pages", "PZGD", "pages of keys");
    auto [vPages, vResult] = cache("v_pages", "PZGE", "pages of values");
    TensorContract table =
        contractTensor("block_table", "BM", ElementRule::I32,
                       "entry b's token t lives on page block_table[b, t / "
                       "Z], row t % Z; the pages it appends to are its own",
                       Sample::Pages);
    table.counts = 'P';
    c.operands = newTokens();
    c.operands.insert(c.operands.end(),
                      {kPages, vPages, table, cacheLengths("MZ")});
    for (const TensorContract &option : options(false))
      c.operands.push_back(option);
    c.results = results(kResult, vResult);
    return c;
  }();
  return contract;
}
