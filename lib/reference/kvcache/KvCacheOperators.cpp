//===- KvCacheOperators.cpp - The K/V cache's references by name ----------===//
//
// The adapters from contract names to the typed float64 reference, and
// their registration.
//
//===----------------------------------------------------------------------===//

#include "lib/reference/OperatorReferences.h"
#include "lib/reference/kvcache/KvCacheReference.h"

using namespace rudnn;
using namespace rudnn::reference;

namespace {

/// Both K/V-cache forms: the caches are contiguous ("k_cache", "v_cache")
/// or pages ("k_pages", "v_pages" with "block_table").
NamedValues kvCache(const NamedValues &operands,
                    const std::map<std::string, double> &attributes,
                    bool paged) {
  const Values &q = operand(operands, "q");
  const std::string kName = paged ? "k_pages" : "k_cache",
                    vName = paged ? "v_pages" : "v_cache";
  const Values &kCache = operand(operands, kName),
               &vCache = operand(operands, vName);
  KvCacheShape s;
  s.batch = q.shape[0];
  s.newTokens = q.shape[1];
  s.heads = q.shape[2];
  s.headDim = q.shape[3];
  s.kvHeads = vCache.shape[2];
  s.valueDim = vCache.shape[3];
  auto optional = [&](const char *name) {
    auto it = operands.find(name);
    return it == operands.end() ? std::vector<double>() : it->second.data;
  };
  KvCacheInputs in{q.data,
                   optional("k"),
                   optional("v"),
                   kCache.data,
                   vCache.data,
                   operand(operands, "cache_lengths").data,
                   {},
                   optional("cache_leftpad"),
                   optional("alibi_slopes"),
                   optional("cache_batch_idx"),
                   optional("rotary_cos"),
                   optional("rotary_sin")};
  if (auto it = operands.find("rotary_cos"); it != operands.end()) {
    s.rotaryRows = it->second.shape[0];
    s.rotaryPairs = it->second.shape[1];
  }
  if (paged) {
    const Values &table = operand(operands, "block_table");
    s.pages = kCache.shape[0];
    s.pageSize = kCache.shape[1];
    s.maxPages = table.shape[1];
    in.blockTable = table.data;
  } else {
    s.capacity = kCache.shape[1];
    s.cacheRows = kCache.shape[0];
  }
  KvCacheOptions options;
  options.scale = attribute(attributes, "scale");
  options.causal = attributeOr(attributes, "non_causal", 0) == 0;
  options.windowLeft =
      static_cast<int64_t>(attributeOr(attributes, "window_left", -1));
  options.windowRight =
      static_cast<int64_t>(attributeOr(attributes, "window_right", -1));
  options.softcap = attributeOr(attributes, "softcap", 0);
  options.rotaryInterleaved =
      attributeOr(attributes, "rotary_interleaved", 0) != 0;
  KvCacheOutputs out = kvCacheAttention(s, in, options);
  return {{"o", {{s.batch, s.newTokens, s.heads, s.valueDim}, out.o}},
          {kName, {kCache.shape, out.kCache}},
          {vName, {vCache.shape, out.vCache}},
          {"lse", {{s.batch, s.heads, s.newTokens}, out.lse}},
          {"status", {{s.batch}, out.status}}};
}

NamedValues kvCacheContiguous(const NamedValues &operands,
                              const std::map<std::string, double> &attributes) {
  return kvCache(operands, attributes, false);
}

NamedValues kvCachePaged(const NamedValues &operands,
                         const std::map<std::string, double> &attributes) {
  return kvCache(operands, attributes, true);
}

} // namespace

void rudnn::reference::registerKvCacheReferences(ReferenceRegistry &registry) {
  registry.add("rudnn.kv_cache_attention", kvCacheContiguous);
  registry.add("rudnn.kv_cache_attention_paged", kvCachePaged);
}
