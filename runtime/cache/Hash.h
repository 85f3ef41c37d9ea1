//===- Hash.h - 128-bit content hashes (XXH3) -------------------*- C++ -*-===//

#ifndef RUDNN_RUNTIME_CACHE_HASH_H
#define RUDNN_RUNTIME_CACHE_HASH_H

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace rudnn::runtime {

/// An XXH3-128 digest.
struct Hash128 {
  uint64_t low = 0, high = 0;

  /// 32 lowercase hex digits, high half first.
  std::string hex() const;
  /// Parses `hex()`'s output; false on anything else.
  static bool fromHex(std::string_view text, Hash128 &out);
  bool operator==(const Hash128 &other) const {
    return low == other.low && high == other.high;
  }
  bool operator!=(const Hash128 &other) const { return !(*this == other); }
};

/// Streaming XXH3-128. Each `add` is length-prefixed, so ("ab", "c") and
/// ("a", "bc") hash differently.
class Hasher {
public:
  Hasher();
  ~Hasher();
  Hasher(const Hasher &) = delete;
  Hasher &operator=(const Hasher &) = delete;

  Hasher &add(std::string_view bytes);
  Hasher &add(uint64_t value);
  Hash128 finish() const;

private:
  struct State;
  std::unique_ptr<State> state;
};

/// One-shot XXH3-128 of `bytes`.
Hash128 hash128(std::string_view bytes);
/// One-shot XXH3-64 of `bytes` (entry checksums).
uint64_t hash64(std::string_view bytes);

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_CACHE_HASH_H
