//===- HostFloat.cpp - float16 and bfloat16 on the host -------------------===//

#include "runtime/support/HostFloat.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace rudnn::runtime;

uint64_t rudnn::runtime::roundToFormat(bool negative, uint64_t significand,
                                       int exponent,
                                       const FloatFormat &format) {
  const uint64_t sign = negative ? format.sign() : 0;
  if (significand == 0)
    return sign;
  const int p = format.precision;
  // The value lies in [2^top, 2^(top + 1)).
  const int top = 63 - __builtin_clzll(significand) + exponent;
  if (top > format.emax)
    return sign | format.infinity();
  // The exponent of the last significand bit the result keeps.
  const int quantum = (top < format.emin ? format.emin : top) - (p - 1);
  const int shift = quantum - exponent;
  uint64_t n;
  bool above = false, tie = false;
  if (shift <= 0) {
    n = significand << -shift;
  } else if (shift >= 64) {
    n = 0;
    above = shift == 64 && significand > (uint64_t{1} << 63);
    tie = shift == 64 && significand == (uint64_t{1} << 63);
  } else {
    n = significand >> shift;
    const uint64_t rest = significand & ((uint64_t{1} << shift) - 1);
    const uint64_t half = uint64_t{1} << (shift - 1);
    above = rest > half;
    tie = rest == half;
  }
  n += above || (tie && (n & 1));
  // A subnormal result is its significand; a carry out of either form moves
  // into the exponent field, which is exactly the next binade's encoding.
  const uint64_t bits =
      top < format.emin
          ? n
          : (static_cast<uint64_t>(top - format.emin + 1) << (p - 1)) +
                (n - (uint64_t{1} << (p - 1)));
  if (bits >= format.infinity())
    return sign | format.infinity();
  return sign | bits;
}

uint64_t rudnn::runtime::roundToFormat(double value,
                                       const FloatFormat &format) {
  uint64_t u;
  std::memcpy(&u, &value, 8);
  const bool negative = u >> 63;
  const uint64_t magnitude = u & 0x7fffffffffffffffull;
  if (magnitude > 0x7ff0000000000000ull)
    return format.nan();
  if (magnitude == 0x7ff0000000000000ull)
    return (negative ? format.sign() : 0) | format.infinity();
  const int field = static_cast<int>(magnitude >> 52);
  const uint64_t fraction = magnitude & 0xfffffffffffffull;
  return field == 0 ? roundToFormat(negative, fraction, -1074, format)
                    : roundToFormat(negative, fraction | (uint64_t{1} << 52),
                                    field - 1075, format);
}

double rudnn::runtime::fromFloat16(uint16_t bits) {
  const double sign = (bits & 0x8000) ? -1.0 : 1.0;
  const int field = (bits >> 10) & 0x1f;
  const int fraction = bits & 0x3ff;
  if (field == 0x1f)
    return fraction ? std::numeric_limits<double>::quiet_NaN()
                    : sign * std::numeric_limits<double>::infinity();
  if (field == 0)
    return sign * std::ldexp(fraction, -24);
  return sign * std::ldexp(fraction | 0x400, field - 25);
}

double rudnn::runtime::fromBfloat16(uint16_t bits) {
  // bfloat16 is the upper half of a float32.
  const uint32_t wide = static_cast<uint32_t>(bits) << 16;
  float value;
  std::memcpy(&value, &wide, 4);
  return value;
}
