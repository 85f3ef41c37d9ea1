//===- Hash.cpp - 128-bit content hashes (XXH3) ---------------------------===//

#include "runtime/cache/Hash.h"

#include <xxhash.h>

#include <cstdio>

using namespace rudnn::runtime;

std::string Hash128::hex() const {
  char text[33];
  std::snprintf(text, sizeof(text), "%016llx%016llx",
                static_cast<unsigned long long>(high),
                static_cast<unsigned long long>(low));
  return text;
}

bool Hash128::fromHex(std::string_view text, Hash128 &out) {
  if (text.size() != 32)
    return false;
  auto parse = [](std::string_view digits, uint64_t &value) {
    value = 0;
    for (char c : digits) {
      int digit = c >= '0' && c <= '9'   ? c - '0'
                  : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                         : -1;
      if (digit < 0)
        return false;
      value = value << 4 | static_cast<uint64_t>(digit);
    }
    return true;
  };
  return parse(text.substr(0, 16), out.high) && parse(text.substr(16), out.low);
}

struct Hasher::State {
  XXH3_state_t *xxh = XXH3_createState();
  ~State() { XXH3_freeState(xxh); }
};

Hasher::Hasher() : state(std::make_unique<State>()) {
  XXH3_128bits_reset(state->xxh);
}

Hasher::~Hasher() = default;

Hasher &Hasher::add(std::string_view bytes) {
  uint64_t size = bytes.size();
  XXH3_128bits_update(state->xxh, &size, sizeof(size));
  XXH3_128bits_update(state->xxh, bytes.data(), bytes.size());
  return *this;
}

Hasher &Hasher::add(uint64_t value) {
  XXH3_128bits_update(state->xxh, &value, sizeof(value));
  return *this;
}

Hash128 Hasher::finish() const {
  XXH128_hash_t digest = XXH3_128bits_digest(state->xxh);
  return {digest.low64, digest.high64};
}

Hash128 rudnn::runtime::hash128(std::string_view bytes) {
  XXH128_hash_t digest = XXH3_128bits(bytes.data(), bytes.size());
  return {digest.low64, digest.high64};
}

uint64_t rudnn::runtime::hash64(std::string_view bytes) {
  return XXH3_64bits(bytes.data(), bytes.size());
}
