//===- HostFloat.h - float16 and bfloat16 on the host ------------*- C++
//-*-===//
//
// The one host-side conversion between double and the narrow formats
// kernels read and write: rounded once, to nearest even, subnormals
// included; too large is infinity; NaN is the GPU's canonical NaN. Tools,
// references, tests and benchmarks all go through these.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_RUNTIME_SUPPORT_HOSTFLOAT_H
#define RUDNN_RUNTIME_SUPPORT_HOSTFLOAT_H

#include <cstdint>

namespace rudnn::runtime {

/// A binary floating-point format: `precision` significand bits (the
/// implicit one included), normal exponents in [emin, emax], `bits` wide.
struct FloatFormat {
  int precision, emin, emax, bits;
  uint64_t infinity() const {
    return ((uint64_t{1} << (bits - precision)) - 1) << (precision - 1);
  }
  uint64_t sign() const { return uint64_t{1} << (bits - 1); }
  /// The GPU's canonical NaN: every bit but the sign set.
  uint64_t nan() const { return sign() - 1; }
};

constexpr FloatFormat kFloat64 = {53, -1022, 1023, 64};
constexpr FloatFormat kFloat32 = {24, -126, 127, 32};
constexpr FloatFormat kFloat16 = {11, -14, 15, 16};
constexpr FloatFormat kBfloat16 = {8, -126, 127, 16};

/// The bits of (-1)^negative · significand · 2^exponent in `format`.
uint64_t roundToFormat(bool negative, uint64_t significand, int exponent,
                       const FloatFormat &format);
/// The bits of `value` in `format`.
uint64_t roundToFormat(double value, const FloatFormat &format);

inline uint16_t toFloat16(double value) {
  return static_cast<uint16_t>(roundToFormat(value, kFloat16));
}
inline uint16_t toBfloat16(double value) {
  return static_cast<uint16_t>(roundToFormat(value, kBfloat16));
}
/// Exact: every float16 and bfloat16 value is a double.
double fromFloat16(uint16_t bits);
double fromBfloat16(uint16_t bits);

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_SUPPORT_HOSTFLOAT_H
