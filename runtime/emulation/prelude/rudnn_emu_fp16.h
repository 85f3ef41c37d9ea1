//===- rudnn_emu_fp16.h - __half and __nv_bfloat16 for emulated kernels ---===//
//
// The types and functions of cuda_fp16.h and cuda_bf16.h that device code
// uses, on the host. Conversions round exactly as the GPU's cvt does (every
// rounding mode, subnormals, overflow to infinity, NaN to the canonical
// 0x7fff); arithmetic is done in float or double and rounded once, which
// equals the correctly rounded half/bfloat16 result the hardware gives
// (float has more than twice their precision plus two bits).
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_EMU_FP16_H
#define RUDNN_EMU_FP16_H

#include "rudnn_emulation.h"

#pragma GCC visibility push(hidden)

namespace rudnn_emu_fp {

using rudnn_emu_detail::Rounding;

/// A binary floating-point format of 16 bits.
struct Format {
  int precision; // significand bits, the implicit one included
  int emin, emax;
  unsigned short infinity; // exponent field all ones, positive
};

constexpr Format kHalf = {11, -14, 15, 0x7c00};
constexpr Format kBfloat16 = {8, -126, 127, 0x7f80};
constexpr unsigned short kCanonicalNan = 0x7fff;

inline unsigned short overflow(bool negative, const Format &format,
                               Rounding rounding) {
  const unsigned short sign = negative ? 0x8000 : 0;
  const unsigned short largest = format.infinity - 1;
  switch (rounding) {
  case Rounding::Nearest:
    return sign | format.infinity;
  case Rounding::Zero:
    return sign | largest;
  case Rounding::Up:
    return negative ? (sign | largest) : format.infinity;
  case Rounding::Down:
    return negative ? (sign | format.infinity) : largest;
  }
  return sign | format.infinity;
}

/// The bits of (-1)^negative * significand * 2^exponent, rounded to `format`.
inline unsigned short roundExact(bool negative, unsigned long long significand,
                                 int exponent, const Format &format,
                                 Rounding rounding) {
  const unsigned short sign = negative ? 0x8000 : 0;
  if (significand == 0)
    return sign;
  const int p = format.precision;
  // The value lies in [2^top, 2^(top + 1)).
  const int top = 63 - __builtin_clzll(significand) + exponent;
  if (top > format.emax)
    return overflow(negative, format, rounding);
  // The exponent of the last significand bit the result keeps.
  const int quantum = (top < format.emin ? format.emin : top) - (p - 1);
  const int shift = quantum - exponent;
  unsigned long long n;
  bool above = false, tie = false, inexact = false;
  if (shift <= 0) {
    n = significand << -shift;
  } else if (shift >= 64) {
    n = 0;
    inexact = true;
    above = shift == 64 && significand > (1ull << 63);
    tie = shift == 64 && significand == (1ull << 63);
  } else {
    n = significand >> shift;
    const unsigned long long rest = significand & ((1ull << shift) - 1);
    const unsigned long long half = 1ull << (shift - 1);
    inexact = rest != 0;
    above = rest > half;
    tie = rest == half;
  }
  bool up = false;
  switch (rounding) {
  case Rounding::Nearest:
    up = above || (tie && (n & 1));
    break;
  case Rounding::Zero:
    break;
  case Rounding::Up:
    up = inexact && !negative;
    break;
  case Rounding::Down:
    up = inexact && negative;
    break;
  }
  n += up;
  // A subnormal result is its significand; a carry out of either form moves
  // into the exponent field, which is exactly the next binade's encoding.
  unsigned long long bits =
      top < format.emin
          ? n
          : (static_cast<unsigned long long>(top - format.emin + 1)
             << (p - 1)) +
                (n - (1ull << (p - 1)));
  if (bits >= format.infinity)
    return overflow(negative, format, rounding);
  return static_cast<unsigned short>(sign | bits);
}

inline unsigned short fromFloat(float x, const Format &format,
                                Rounding rounding) {
  unsigned u;
  std::memcpy(&u, &x, 4);
  const bool negative = u >> 31;
  const unsigned magnitude = u & 0x7fffffffu;
  if (magnitude > 0x7f800000u)
    return kCanonicalNan;
  if (magnitude == 0x7f800000u)
    return (negative ? 0x8000 : 0) | format.infinity;
  const int field = static_cast<int>(magnitude >> 23);
  const unsigned fraction = magnitude & 0x7fffffu;
  return field == 0 ? roundExact(negative, fraction, -149, format, rounding)
                    : roundExact(negative, fraction | 0x800000u, field - 150,
                                 format, rounding);
}

inline unsigned short fromDouble(double x, const Format &format,
                                 Rounding rounding) {
  unsigned long long u;
  std::memcpy(&u, &x, 8);
  const bool negative = u >> 63;
  const unsigned long long magnitude = u & 0x7fffffffffffffffull;
  if (magnitude > 0x7ff0000000000000ull)
    return kCanonicalNan;
  if (magnitude == 0x7ff0000000000000ull)
    return (negative ? 0x8000 : 0) | format.infinity;
  const int field = static_cast<int>(magnitude >> 52);
  const unsigned long long fraction = magnitude & 0xfffffffffffffull;
  return field == 0 ? roundExact(negative, fraction, -1074, format, rounding)
                    : roundExact(negative, fraction | (1ull << 52),
                                 field - 1075, format, rounding);
}

inline unsigned short fromInteger(long long x, const Format &format,
                                  Rounding rounding) {
  const bool negative = x < 0;
  const unsigned long long magnitude =
      negative ? 0ull - static_cast<unsigned long long>(x)
               : static_cast<unsigned long long>(x);
  return roundExact(negative, magnitude, 0, format, rounding);
}

inline unsigned short fromUnsigned(unsigned long long x, const Format &format,
                                   Rounding rounding) {
  return roundExact(false, x, 0, format, rounding);
}

inline float halfToFloat(unsigned short h) {
  const unsigned sign = static_cast<unsigned>(h & 0x8000) << 16;
  const unsigned field = (h >> 10) & 0x1f;
  const unsigned fraction = h & 0x3ff;
  float magnitude;
  if (field == 0x1f) {
    unsigned bits = 0x7f800000u | (fraction << 13) | (fraction ? 0x400000u : 0);
    std::memcpy(&magnitude, &bits, 4);
  } else if (field == 0) {
    magnitude = std::ldexp(static_cast<float>(fraction), -24);
  } else {
    unsigned bits = ((field + 112) << 23) | (fraction << 13);
    std::memcpy(&magnitude, &bits, 4);
  }
  unsigned bits;
  std::memcpy(&bits, &magnitude, 4);
  bits |= sign;
  float result;
  std::memcpy(&result, &bits, 4);
  return result;
}

inline float bfloat16ToFloat(unsigned short b) {
  const unsigned bits = static_cast<unsigned>(b) << 16;
  float result;
  std::memcpy(&result, &bits, 4);
  return result;
}

} // namespace rudnn_emu_fp

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

struct __nv_bfloat16;

struct __align__(2) __half_raw {
  unsigned short x;
};
struct __align__(4) __half2_raw {
  unsigned short x, y;
};
struct __align__(2) __nv_bfloat16_raw {
  unsigned short x;
};
struct __align__(4) __nv_bfloat162_raw {
  unsigned short x, y;
};

// The conversions and operators mirror cuda_fp16.h / cuda_bf16.h, so code
// that NVRTC accepts (or finds ambiguous) behaves the same here.
#define RUDNN_EMU_16BIT_TYPE(T, Raw, format, Other)                            \
  struct __align__(2) T {                                                      \
  protected:                                                                   \
    unsigned short __x;                                                        \
                                                                               \
  public:                                                                      \
    T() = default;                                                             \
    constexpr T(const Raw &raw) : __x(raw.x) {}                                \
    T &operator=(const Raw &raw) {                                             \
      __x = raw.x;                                                             \
      return *this;                                                            \
    }                                                                          \
    operator Raw() const { return Raw{__x}; }                                  \
    explicit T(const Other value);                                             \
    T(const float value)                                                       \
        : __x(rudnn_emu_fp::fromFloat(value, format,                           \
                                      rudnn_emu_fp::Rounding::Nearest)) {}     \
    T(const double value)                                                      \
        : __x(rudnn_emu_fp::fromDouble(value, format,                          \
                                       rudnn_emu_fp::Rounding::Nearest)) {}    \
    T(const short value) : T(static_cast<long long>(value)) {}                 \
    T(const unsigned short value)                                              \
        : T(static_cast<unsigned long long>(value)) {}                         \
    T(const int value) : T(static_cast<long long>(value)) {}                   \
    T(const unsigned int value) : T(static_cast<unsigned long long>(value)) {} \
    T(const long value) : T(static_cast<long long>(value)) {}                  \
    T(const unsigned long value)                                               \
        : T(static_cast<unsigned long long>(value)) {}                         \
    T(const long long value)                                                   \
        : __x(rudnn_emu_fp::fromInteger(value, format,                         \
                                        rudnn_emu_fp::Rounding::Nearest)) {}   \
    T(const unsigned long long value)                                          \
        : __x(rudnn_emu_fp::fromUnsigned(value, format,                        \
                                         rudnn_emu_fp::Rounding::Nearest)) {}  \
    T &operator=(const float value) { return *this = T(value); }               \
    T &operator=(const double value) { return *this = T(value); }              \
    T &operator=(const short value) { return *this = T(value); }               \
    T &operator=(const unsigned short value) { return *this = T(value); }      \
    T &operator=(const int value) { return *this = T(value); }                 \
    T &operator=(const unsigned int value) { return *this = T(value); }        \
    T &operator=(const long long value) { return *this = T(value); }           \
    T &operator=(const unsigned long long value) { return *this = T(value); }  \
    operator float() const;                                                    \
    operator signed char() const { return toInteger<signed char>(); }          \
    operator unsigned char() const { return toInteger<unsigned char>(); }      \
    operator char() const { return toInteger<char>(); }                        \
    operator short() const { return toInteger<short>(); }                      \
    operator unsigned short() const { return toInteger<unsigned short>(); }    \
    operator int() const { return toInteger<int>(); }                          \
    operator unsigned int() const { return toInteger<unsigned int>(); }        \
    operator long() const { return toInteger<long>(); }                        \
    operator unsigned long() const { return toInteger<unsigned long>(); }      \
    operator long long() const { return toInteger<long long>(); }              \
    operator unsigned long long() const {                                      \
      return toInteger<unsigned long long>();                                  \
    }                                                                          \
    constexpr operator bool() const { return (__x & 0x7fffu) != 0; }           \
                                                                               \
  private:                                                                     \
    template <typename I> I toInteger() const {                                \
      return rudnn_emu_detail::toInteger<I>(static_cast<float>(*this),         \
                                            rudnn_emu_fp::Rounding::Zero);     \
    }                                                                          \
  };

RUDNN_EMU_16BIT_TYPE(__half, __half_raw, rudnn_emu_fp::kHalf, __nv_bfloat16)
RUDNN_EMU_16BIT_TYPE(__nv_bfloat16, __nv_bfloat16_raw, rudnn_emu_fp::kBfloat16,
                     __half)
#undef RUDNN_EMU_16BIT_TYPE

inline __half::operator float() const { return rudnn_emu_fp::halfToFloat(__x); }
inline __nv_bfloat16::operator float() const {
  return rudnn_emu_fp::bfloat16ToFloat(__x);
}
inline __half::__half(const __nv_bfloat16 value)
    : __x(rudnn_emu_fp::fromFloat(static_cast<float>(value),
                                  rudnn_emu_fp::kHalf,
                                  rudnn_emu_fp::Rounding::Nearest)) {}
// Every half is a float with at most 11 significant bits: one rounding.
inline __nv_bfloat16::__nv_bfloat16(const __half value)
    : __x(rudnn_emu_fp::fromFloat(static_cast<float>(value),
                                  rudnn_emu_fp::kBfloat16,
                                  rudnn_emu_fp::Rounding::Nearest)) {}

#define RUDNN_EMU_16BIT_PAIR(T2, T, Raw2, Raw)                                 \
  struct __align__(4) T2 {                                                     \
    T x, y;                                                                    \
    T2() = default;                                                            \
    constexpr T2(const T &a, const T &b) : x(a), y(b) {}                       \
    T2(const Raw2 &raw) : x(Raw{raw.x}), y(Raw{raw.y}) {}                      \
    T2 &operator=(const Raw2 &raw) { return *this = T2(raw); }                 \
    operator Raw2() const {                                                    \
      return Raw2{static_cast<Raw>(x).x, static_cast<Raw>(y).x};               \
    }                                                                          \
  };

RUDNN_EMU_16BIT_PAIR(__half2, __half, __half2_raw, __half_raw)
RUDNN_EMU_16BIT_PAIR(__nv_bfloat162, __nv_bfloat16, __nv_bfloat162_raw,
                     __nv_bfloat16_raw)
#undef RUDNN_EMU_16BIT_PAIR

typedef __half half;
typedef __half2 half2;
typedef __half __nv_half;
typedef __half2 __nv_half2;
typedef __half_raw __nv_half_raw;
typedef __half2_raw __nv_half2_raw;
typedef __half nv_half;
typedef __half2 nv_half2;
typedef __nv_bfloat16 nv_bfloat16;
typedef __nv_bfloat162 nv_bfloat162;

//===----------------------------------------------------------------------===//
// Functions, once for each type
//===----------------------------------------------------------------------===//

namespace rudnn_emu_fp {

template <typename T> struct RawOf;
template <> struct RawOf<__half> { using type = __half_raw; };
template <> struct RawOf<__nv_bfloat16> { using type = __nv_bfloat16_raw; };

inline unsigned short bits(__half h) { return static_cast<__half_raw>(h).x; }
inline unsigned short bits(__nv_bfloat16 b) {
  return static_cast<__nv_bfloat16_raw>(b).x;
}
template <typename T> inline T fromBits(unsigned short b) {
  return T(typename RawOf<T>::type{b});
}
template <typename T> inline const Format &formatOf();
template <> inline const Format &formatOf<__half>() { return kHalf; }
template <> inline const Format &formatOf<__nv_bfloat16>() { return kBfloat16; }

template <typename T> inline T round(float x, Rounding rounding) {
  return fromBits<T>(fromFloat(x, formatOf<T>(), rounding));
}
template <typename T> inline T roundDouble(double x, Rounding rounding) {
  return fromBits<T>(fromDouble(x, formatOf<T>(), rounding));
}
template <typename T> inline bool isNan(T x) {
  const Format &format = formatOf<T>();
  return (bits(x) & 0x7fff) > format.infinity;
}

/// max/min that return the other operand for one NaN, the canonical NaN for
/// two, and order -0 below +0.
template <typename T> inline T maxOrMin(T a, T b, bool wantMax) {
  const bool nanA = isNan(a), nanB = isNan(b);
  if (nanA && nanB)
    return fromBits<T>(kCanonicalNan);
  if (nanA)
    return b;
  if (nanB)
    return a;
  const float fa = static_cast<float>(a), fb = static_cast<float>(b);
  if (fa == fb) {
    const bool negativeA = bits(a) & 0x8000;
    return (negativeA == wantMax) ? b : a;
  }
  return (fa > fb) == wantMax ? a : b;
}

} // namespace rudnn_emu_fp

#define RUDNN_EMU_16BIT_FUNCTIONS(T, T2, suffix, suffix2)                      \
  /* Arithmetic: computed in float (fma in double) and rounded once. */        \
  inline T __hadd(const T a, const T b) {                                      \
    return T(static_cast<float>(a) + static_cast<float>(b));                   \
  }                                                                            \
  inline T __hsub(const T a, const T b) {                                      \
    return T(static_cast<float>(a) - static_cast<float>(b));                   \
  }                                                                            \
  inline T __hmul(const T a, const T b) {                                      \
    return T(static_cast<float>(a) * static_cast<float>(b));                   \
  }                                                                            \
  inline T __hdiv(const T a, const T b) {                                      \
    return T(static_cast<float>(a) / static_cast<float>(b));                   \
  }                                                                            \
  inline T __hfma(const T a, const T b, const T c) {                           \
    return T(static_cast<double>(a) * static_cast<double>(b) +                 \
             static_cast<double>(c));                                          \
  }                                                                            \
  inline T __hadd_rn(const T a, const T b) { return __hadd(a, b); }            \
  inline T __hsub_rn(const T a, const T b) { return __hsub(a, b); }            \
  inline T __hmul_rn(const T a, const T b) { return __hmul(a, b); }            \
  inline T __hneg(const T a) {                                                 \
    return rudnn_emu_fp::fromBits<T>(rudnn_emu_fp::bits(a) ^ 0x8000);          \
  }                                                                            \
  inline T __habs(const T a) {                                                 \
    return rudnn_emu_fp::fromBits<T>(rudnn_emu_fp::bits(a) & 0x7fff);          \
  }                                                                            \
  inline T __hadd_sat(const T a, const T b) {                                  \
    return T(__saturatef(static_cast<float>(__hadd(a, b))));                   \
  }                                                                            \
  inline T __hsub_sat(const T a, const T b) {                                  \
    return T(__saturatef(static_cast<float>(__hsub(a, b))));                   \
  }                                                                            \
  inline T __hmul_sat(const T a, const T b) {                                  \
    return T(__saturatef(static_cast<float>(__hmul(a, b))));                   \
  }                                                                            \
  inline T __hfma_sat(const T a, const T b, const T c) {                       \
    return T(__saturatef(static_cast<float>(__hfma(a, b, c))));                \
  }                                                                            \
  inline T __hmax(const T a, const T b) {                                      \
    return rudnn_emu_fp::maxOrMin(a, b, true);                                 \
  }                                                                            \
  inline T __hmin(const T a, const T b) {                                      \
    return rudnn_emu_fp::maxOrMin(a, b, false);                                \
  }                                                                            \
  inline T __hmax_nan(const T a, const T b) {                                  \
    return rudnn_emu_fp::isNan(a) || rudnn_emu_fp::isNan(b)                    \
               ? rudnn_emu_fp::fromBits<T>(rudnn_emu_fp::kCanonicalNan)        \
               : __hmax(a, b);                                                 \
  }                                                                            \
  inline T __hmin_nan(const T a, const T b) {                                  \
    return rudnn_emu_fp::isNan(a) || rudnn_emu_fp::isNan(b)                    \
               ? rudnn_emu_fp::fromBits<T>(rudnn_emu_fp::kCanonicalNan)        \
               : __hmin(a, b);                                                 \
  }                                                                            \
  /* Comparisons; the u forms are true for unordered operands. */              \
  inline bool __heq(const T a, const T b) {                                    \
    return static_cast<float>(a) == static_cast<float>(b);                     \
  }                                                                            \
  inline bool __hne(const T a, const T b) {                                    \
    return static_cast<float>(a) < static_cast<float>(b) ||                    \
           static_cast<float>(a) > static_cast<float>(b);                      \
  }                                                                            \
  inline bool __hlt(const T a, const T b) {                                    \
    return static_cast<float>(a) < static_cast<float>(b);                      \
  }                                                                            \
  inline bool __hle(const T a, const T b) {                                    \
    return static_cast<float>(a) <= static_cast<float>(b);                     \
  }                                                                            \
  inline bool __hgt(const T a, const T b) {                                    \
    return static_cast<float>(a) > static_cast<float>(b);                      \
  }                                                                            \
  inline bool __hge(const T a, const T b) {                                    \
    return static_cast<float>(a) >= static_cast<float>(b);                     \
  }                                                                            \
  inline bool __hequ(const T a, const T b) { return !__hne(a, b); }            \
  inline bool __hneu(const T a, const T b) { return !__heq(a, b); }            \
  inline bool __hltu(const T a, const T b) { return !__hge(a, b); }            \
  inline bool __hleu(const T a, const T b) { return !__hgt(a, b); }            \
  inline bool __hgtu(const T a, const T b) { return !__hle(a, b); }            \
  inline bool __hgeu(const T a, const T b) { return !__hlt(a, b); }            \
  inline bool __hisnan(const T a) { return rudnn_emu_fp::isNan(a); }           \
  inline int __hisinf(const T a) {                                             \
    const unsigned short b = rudnn_emu_fp::bits(a);                            \
    const unsigned short inf = rudnn_emu_fp::formatOf<T>().infinity;           \
    return b == inf ? 1 : b == (inf | 0x8000) ? -1 : 0;                        \
  }                                                                            \
  /* Operators, as cuda_fp16.h defines them. */                                \
  inline T operator+(const T &a, const T &b) { return __hadd(a, b); }          \
  inline T operator-(const T &a, const T &b) { return __hsub(a, b); }          \
  inline T operator*(const T &a, const T &b) { return __hmul(a, b); }          \
  inline T operator/(const T &a, const T &b) { return __hdiv(a, b); }          \
  inline T &operator+=(T &a, const T &b) { return a = __hadd(a, b); }          \
  inline T &operator-=(T &a, const T &b) { return a = __hsub(a, b); }          \
  inline T &operator*=(T &a, const T &b) { return a = __hmul(a, b); }          \
  inline T &operator/=(T &a, const T &b) { return a = __hdiv(a, b); }          \
  inline T &operator++(T &a) { return a = __hadd(a, T(1.0f)); }                \
  inline T &operator--(T &a) { return a = __hsub(a, T(1.0f)); }                \
  inline T operator++(T &a, int) {                                             \
    T old = a;                                                                 \
    ++a;                                                                       \
    return old;                                                                \
  }                                                                            \
  inline T operator--(T &a, int) {                                             \
    T old = a;                                                                 \
    --a;                                                                       \
    return old;                                                                \
  }                                                                            \
  inline T operator+(const T &a) { return a; }                                 \
  inline T operator-(const T &a) { return __hneg(a); }                         \
  inline bool operator==(const T &a, const T &b) { return __heq(a, b); }       \
  inline bool operator!=(const T &a, const T &b) { return __hneu(a, b); }      \
  inline bool operator<(const T &a, const T &b) { return __hlt(a, b); }        \
  inline bool operator<=(const T &a, const T &b) { return __hle(a, b); }       \
  inline bool operator>(const T &a, const T &b) { return __hgt(a, b); }        \
  inline bool operator>=(const T &a, const T &b) { return __hge(a, b); }       \
  /* Pairs, lane-wise. */                                                      \
  inline T2 __hadd2(const T2 a, const T2 b) {                                  \
    return T2(__hadd(a.x, b.x), __hadd(a.y, b.y));                             \
  }                                                                            \
  inline T2 __hsub2(const T2 a, const T2 b) {                                  \
    return T2(__hsub(a.x, b.x), __hsub(a.y, b.y));                             \
  }                                                                            \
  inline T2 __hmul2(const T2 a, const T2 b) {                                  \
    return T2(__hmul(a.x, b.x), __hmul(a.y, b.y));                             \
  }                                                                            \
  inline T2 __h2div(const T2 a, const T2 b) {                                  \
    return T2(__hdiv(a.x, b.x), __hdiv(a.y, b.y));                             \
  }                                                                            \
  inline T2 __hfma2(const T2 a, const T2 b, const T2 c) {                      \
    return T2(__hfma(a.x, b.x, c.x), __hfma(a.y, b.y, c.y));                   \
  }                                                                            \
  inline T2 __hneg2(const T2 a) { return T2(__hneg(a.x), __hneg(a.y)); }       \
  inline T2 __habs2(const T2 a) { return T2(__habs(a.x), __habs(a.y)); }       \
  inline T2 __hmax2(const T2 a, const T2 b) {                                  \
    return T2(__hmax(a.x, b.x), __hmax(a.y, b.y));                             \
  }                                                                            \
  inline T2 __hmin2(const T2 a, const T2 b) {                                  \
    return T2(__hmin(a.x, b.x), __hmin(a.y, b.y));                             \
  }                                                                            \
  inline bool __hbeq2(const T2 a, const T2 b) {                                \
    return __heq(a.x, b.x) && __heq(a.y, b.y);                                 \
  }                                                                            \
  inline T2 operator+(const T2 &a, const T2 &b) { return __hadd2(a, b); }      \
  inline T2 operator-(const T2 &a, const T2 &b) { return __hsub2(a, b); }      \
  inline T2 operator*(const T2 &a, const T2 &b) { return __hmul2(a, b); }      \
  inline T2 operator/(const T2 &a, const T2 &b) { return __h2div(a, b); }      \
  inline T2 &operator+=(T2 &a, const T2 &b) { return a = __hadd2(a, b); }      \
  inline T2 &operator-=(T2 &a, const T2 &b) { return a = __hsub2(a, b); }      \
  inline T2 &operator*=(T2 &a, const T2 &b) { return a = __hmul2(a, b); }      \
  inline T2 &operator/=(T2 &a, const T2 &b) { return a = __h2div(a, b); }      \
  inline T2 operator-(const T2 &a) { return __hneg2(a); }                      \
  inline bool operator==(const T2 &a, const T2 &b) { return __hbeq2(a, b); }   \
  inline bool operator!=(const T2 &a, const T2 &b) {                           \
    return __hneu(a.x, b.x) && __hneu(a.y, b.y);                               \
  }                                                                            \
  /* Moving halves around. */                                                  \
  inline float __low2float(const T2 a) { return static_cast<float>(a.x); }     \
  inline float __high2float(const T2 a) { return static_cast<float>(a.y); }    \
  inline T __low2##suffix(const T2 a) { return a.x; }                          \
  inline T __high2##suffix(const T2 a) { return a.y; }                         \
  inline T2 __halves2##suffix2(const T a, const T b) { return T2(a, b); }      \
  inline T2 __##suffix##2##suffix2(const T a) { return T2(a, a); }             \
  inline T2 __lows2##suffix2(const T2 a, const T2 b) { return T2(a.x, b.x); }  \
  inline T2 __highs2##suffix2(const T2 a, const T2 b) { return T2(a.y, b.y); } \
  inline T2 __low2##suffix2(const T2 a) { return T2(a.x, a.x); }               \
  inline T2 __high2##suffix2(const T2 a) { return T2(a.y, a.y); }              \
  inline T2 __lowhigh2highlow(const T2 a) { return T2(a.y, a.x); }             \
  inline T2 make_##suffix2(const T a, const T b) { return T2(a, b); }          \
  /* Math: evaluated in float and rounded once. */                             \
  inline T hsqrt(const T a) { return T(sqrtf(static_cast<float>(a))); }        \
  inline T hrsqrt(const T a) {                                                 \
    return T(1.0f / sqrtf(static_cast<float>(a)));                             \
  }                                                                            \
  inline T hrcp(const T a) { return T(1.0f / static_cast<float>(a)); }         \
  inline T hexp(const T a) { return T(expf(static_cast<float>(a))); }          \
  inline T hexp2(const T a) { return T(exp2f(static_cast<float>(a))); }        \
  inline T hexp10(const T a) { return T(powf(10.0f, static_cast<float>(a))); } \
  inline T hlog(const T a) { return T(logf(static_cast<float>(a))); }          \
  inline T hlog2(const T a) { return T(log2f(static_cast<float>(a))); }        \
  inline T hlog10(const T a) { return T(log10f(static_cast<float>(a))); }      \
  inline T hsin(const T a) { return T(sinf(static_cast<float>(a))); }          \
  inline T hcos(const T a) { return T(cosf(static_cast<float>(a))); }          \
  inline T htanh(const T a) { return T(tanhf(static_cast<float>(a))); }        \
  inline T hfloor(const T a) { return T(floorf(static_cast<float>(a))); }      \
  inline T hceil(const T a) { return T(ceilf(static_cast<float>(a))); }        \
  inline T htrunc(const T a) { return T(truncf(static_cast<float>(a))); }      \
  inline T hrint(const T a) { return T(nearbyintf(static_cast<float>(a))); }   \
  /* Atomics: a compare-and-swap loop on the bits. */                          \
  inline T atomicAdd(T *address, const T val) {                                \
    return rudnn_emu_detail::atomicUpdate(                                     \
        address, [val](T old) { return __hadd(old, val); });                   \
  }                                                                            \
  inline T2 atomicAdd(T2 *address, const T2 val) {                             \
    return rudnn_emu_detail::atomicUpdate(                                     \
        address, [val](T2 old) { return __hadd2(old, val); });                 \
  }

RUDNN_EMU_16BIT_FUNCTIONS(__half, __half2, half, half2)
RUDNN_EMU_16BIT_FUNCTIONS(__nv_bfloat16, __nv_bfloat162, bfloat16, bfloat162)
#undef RUDNN_EMU_16BIT_FUNCTIONS

//===----------------------------------------------------------------------===//
// Conversions
//===----------------------------------------------------------------------===//

#define RUDNN_EMU_16BIT_CONVERSIONS(T, T2, name, name2)                        \
  inline T __float2##name(const float a) { return T(a); }                      \
  inline T __float2##name##_rn(const float a) { return T(a); }                 \
  inline T __float2##name##_rz(const float a) {                                \
    return rudnn_emu_fp::round<T>(a, rudnn_emu_fp::Rounding::Zero);            \
  }                                                                            \
  inline T __float2##name##_rd(const float a) {                                \
    return rudnn_emu_fp::round<T>(a, rudnn_emu_fp::Rounding::Down);            \
  }                                                                            \
  inline T __float2##name##_ru(const float a) {                                \
    return rudnn_emu_fp::round<T>(a, rudnn_emu_fp::Rounding::Up);              \
  }                                                                            \
  inline T __double2##name(const double a) { return T(a); }                    \
  inline float __##name##2float(const T a) { return static_cast<float>(a); }   \
  inline T2 __float2##name2##_rn(const float a) { return T2(T(a), T(a)); }     \
  inline T2 __floats2##name2##_rn(const float a, const float b) {              \
    return T2(T(a), T(b));                                                     \
  }                                                                            \
  inline T2 __float22##name2##_rn(const float2 a) {                            \
    return T2(T(a.x), T(a.y));                                                 \
  }                                                                            \
  inline float2 __##name2##2float2(const T2 a) {                               \
    return make_float2(static_cast<float>(a.x), static_cast<float>(a.y));      \
  }                                                                            \
  inline short __##name##_as_short(const T a) {                                \
    return static_cast<short>(rudnn_emu_fp::bits(a));                          \
  }                                                                            \
  inline unsigned short __##name##_as_ushort(const T a) {                      \
    return rudnn_emu_fp::bits(a);                                              \
  }                                                                            \
  inline T __short_as_##name(const short a) {                                  \
    return rudnn_emu_fp::fromBits<T>(static_cast<unsigned short>(a));          \
  }                                                                            \
  inline T __ushort_as_##name(const unsigned short a) {                        \
    return rudnn_emu_fp::fromBits<T>(a);                                       \
  }

RUDNN_EMU_16BIT_CONVERSIONS(__half, __half2, half, half2)
RUDNN_EMU_16BIT_CONVERSIONS(__nv_bfloat16, __nv_bfloat162, bfloat16, bfloat162)
#undef RUDNN_EMU_16BIT_CONVERSIONS

#define RUDNN_EMU_TO_INTEGER(T, from, to, I)                                   \
  inline I __##from##2##to##_rn(const T a) {                                   \
    return rudnn_emu_detail::toInteger<I>(static_cast<float>(a),               \
                                          rudnn_emu_fp::Rounding::Nearest);    \
  }                                                                            \
  inline I __##from##2##to##_rz(const T a) {                                   \
    return rudnn_emu_detail::toInteger<I>(static_cast<float>(a),               \
                                          rudnn_emu_fp::Rounding::Zero);       \
  }                                                                            \
  inline I __##from##2##to##_rd(const T a) {                                   \
    return rudnn_emu_detail::toInteger<I>(static_cast<float>(a),               \
                                          rudnn_emu_fp::Rounding::Down);       \
  }                                                                            \
  inline I __##from##2##to##_ru(const T a) {                                   \
    return rudnn_emu_detail::toInteger<I>(static_cast<float>(a),               \
                                          rudnn_emu_fp::Rounding::Up);         \
  }
#define RUDNN_EMU_FROM_INTEGER(T, from, to, I, convert)                        \
  inline T __##from##2##to##_rn(const I a) {                                   \
    return rudnn_emu_fp::fromBits<T>(rudnn_emu_fp::convert(                    \
        a, rudnn_emu_fp::formatOf<T>(), rudnn_emu_fp::Rounding::Nearest));     \
  }                                                                            \
  inline T __##from##2##to##_rz(const I a) {                                   \
    return rudnn_emu_fp::fromBits<T>(rudnn_emu_fp::convert(                    \
        a, rudnn_emu_fp::formatOf<T>(), rudnn_emu_fp::Rounding::Zero));        \
  }                                                                            \
  inline T __##from##2##to##_rd(const I a) {                                   \
    return rudnn_emu_fp::fromBits<T>(rudnn_emu_fp::convert(                    \
        a, rudnn_emu_fp::formatOf<T>(), rudnn_emu_fp::Rounding::Down));        \
  }                                                                            \
  inline T __##from##2##to##_ru(const I a) {                                   \
    return rudnn_emu_fp::fromBits<T>(rudnn_emu_fp::convert(                    \
        a, rudnn_emu_fp::formatOf<T>(), rudnn_emu_fp::Rounding::Up));          \
  }
#define RUDNN_EMU_INTEGERS(T, name)                                            \
  RUDNN_EMU_TO_INTEGER(T, name, short, short)                                  \
  RUDNN_EMU_TO_INTEGER(T, name, ushort, unsigned short)                        \
  RUDNN_EMU_TO_INTEGER(T, name, int, int)                                      \
  RUDNN_EMU_TO_INTEGER(T, name, uint, unsigned int)                            \
  RUDNN_EMU_TO_INTEGER(T, name, ll, long long)                                 \
  RUDNN_EMU_TO_INTEGER(T, name, ull, unsigned long long)                       \
  RUDNN_EMU_FROM_INTEGER(T, short, name, short, fromInteger)                   \
  RUDNN_EMU_FROM_INTEGER(T, ushort, name, unsigned short, fromUnsigned)        \
  RUDNN_EMU_FROM_INTEGER(T, int, name, int, fromInteger)                       \
  RUDNN_EMU_FROM_INTEGER(T, uint, name, unsigned int, fromUnsigned)            \
  RUDNN_EMU_FROM_INTEGER(T, ll, name, long long, fromInteger)                  \
  RUDNN_EMU_FROM_INTEGER(T, ull, name, unsigned long long, fromUnsigned)

RUDNN_EMU_INTEGERS(__half, half)
RUDNN_EMU_INTEGERS(__nv_bfloat16, bfloat16)
#undef RUDNN_EMU_INTEGERS
#undef RUDNN_EMU_FROM_INTEGER
#undef RUDNN_EMU_TO_INTEGER

inline __half __double2half_rn(const double a) { return __half(a); }
inline __nv_bfloat16 __double2bfloat16_rn(const double a) {
  return __nv_bfloat16(a);
}

#pragma GCC visibility pop

#endif // RUDNN_EMU_FP16_H
