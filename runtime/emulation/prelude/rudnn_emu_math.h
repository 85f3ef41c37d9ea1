//===- rudnn_emu_math.h - Bit, integer and float intrinsics
//-----------------===//
//
// Part of the emulation prelude (rudnn_emulation.h includes it); relies on
// what that header declares before including it.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_EMU_MATH_H
#define RUDNN_EMU_MATH_H

//===----------------------------------------------------------------------===//
// Bit reinterpretation and integer intrinsics
//===----------------------------------------------------------------------===//

namespace rudnn_emu_detail {

template <typename To, typename From> inline To bitCast(From from) {
  static_assert(sizeof(To) == sizeof(From), "same size");
  To to;
  std::memcpy(&to, &from, sizeof(To));
  return to;
}

} // namespace rudnn_emu_detail

static inline int __float_as_int(float x) {
  return rudnn_emu_detail::bitCast<int>(x);
}
static inline unsigned __float_as_uint(float x) {
  return rudnn_emu_detail::bitCast<unsigned>(x);
}
static inline float __int_as_float(int x) {
  return rudnn_emu_detail::bitCast<float>(x);
}
static inline float __uint_as_float(unsigned x) {
  return rudnn_emu_detail::bitCast<float>(x);
}
static inline long long __double_as_longlong(double x) {
  return rudnn_emu_detail::bitCast<long long>(x);
}
static inline double __longlong_as_double(long long x) {
  return rudnn_emu_detail::bitCast<double>(x);
}
static inline int __double2hiint(double x) {
  return static_cast<int>(__double_as_longlong(x) >> 32);
}
static inline int __double2loint(double x) {
  return static_cast<int>(__double_as_longlong(x));
}
static inline double __hiloint2double(int hi, int lo) {
  return __longlong_as_double(static_cast<long long>(
      (static_cast<unsigned long long>(static_cast<unsigned>(hi)) << 32) |
      static_cast<unsigned>(lo)));
}

static inline int __popc(unsigned x) { return __builtin_popcount(x); }
static inline int __popcll(unsigned long long x) {
  return __builtin_popcountll(x);
}
static inline int __clz(int x) {
  return x == 0 ? 32 : __builtin_clz(static_cast<unsigned>(x));
}
static inline int __clzll(long long x) {
  return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x));
}
static inline int __ffs(int x) { return __builtin_ffs(x); }
static inline int __ffsll(long long x) { return __builtin_ffsll(x); }
static inline unsigned __brev(unsigned x) {
  unsigned r = 0;
  for (int i = 0; i < 32; ++i)
    r |= ((x >> i) & 1u) << (31 - i);
  return r;
}
static inline unsigned long long __brevll(unsigned long long x) {
  return (static_cast<unsigned long long>(__brev(static_cast<unsigned>(x)))
          << 32) |
         __brev(static_cast<unsigned>(x >> 32));
}
static inline unsigned __byte_perm(unsigned x, unsigned y, unsigned s) {
  unsigned long long bytes = (static_cast<unsigned long long>(y) << 32) | x;
  unsigned r = 0;
  for (int i = 0; i < 4; ++i) {
    unsigned selector = (s >> (4 * i)) & 7u;
    r |= static_cast<unsigned>((bytes >> (8 * selector)) & 0xffu) << (8 * i);
  }
  return r;
}
static inline unsigned __funnelshift_l(unsigned lo, unsigned hi,
                                       unsigned shift) {
  unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned>((v << (shift & 31u)) >> 32);
}
static inline unsigned __funnelshift_lc(unsigned lo, unsigned hi,
                                        unsigned shift) {
  unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned>((v << std::min(shift, 32u)) >> 32);
}
static inline unsigned __funnelshift_r(unsigned lo, unsigned hi,
                                       unsigned shift) {
  unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned>(v >> (shift & 31u));
}
static inline unsigned __funnelshift_rc(unsigned lo, unsigned hi,
                                        unsigned shift) {
  unsigned long long v = (static_cast<unsigned long long>(hi) << 32) | lo;
  return static_cast<unsigned>(v >> std::min(shift, 32u));
}
static inline int __mulhi(int x, int y) {
  return static_cast<int>((static_cast<long long>(x) * y) >> 32);
}
static inline unsigned __umulhi(unsigned x, unsigned y) {
  return static_cast<unsigned>((static_cast<unsigned long long>(x) * y) >> 32);
}
static inline long long __mul64hi(long long x, long long y) {
  return static_cast<long long>((static_cast<__int128>(x) * y) >> 64);
}
static inline unsigned long long __umul64hi(unsigned long long x,
                                            unsigned long long y) {
  return static_cast<unsigned long long>(
      (static_cast<unsigned __int128>(x) * y) >> 64);
}
static inline int __mul24(int x, int y) {
  // The low 24 bits of each operand, sign-extended.
  auto low24 = [](int v) {
    return static_cast<long long>(
               static_cast<int>(static_cast<unsigned>(v) << 8)) >>
           8;
  };
  return static_cast<int>(low24(x) * low24(y));
}
static inline unsigned __umul24(unsigned x, unsigned y) {
  return (x & 0xffffffu) * (y & 0xffffffu);
}
static inline int __hadd(int x, int y) {
  return static_cast<int>((static_cast<long long>(x) + y) >> 1);
}
static inline int __rhadd(int x, int y) {
  return static_cast<int>((static_cast<long long>(x) + y + 1) >> 1);
}
static inline unsigned __uhadd(unsigned x, unsigned y) {
  return static_cast<unsigned>((static_cast<unsigned long long>(x) + y) >> 1);
}
static inline unsigned __urhadd(unsigned x, unsigned y) {
  return static_cast<unsigned>((static_cast<unsigned long long>(x) + y + 1) >>
                               1);
}
static inline unsigned __sad(int x, int y, unsigned z) {
  return z + static_cast<unsigned>(x > y ? static_cast<long long>(x) - y
                                         : static_cast<long long>(y) - x);
}
static inline unsigned __usad(unsigned x, unsigned y, unsigned z) {
  return z + (x > y ? x - y : y - x);
}

// CUDA's min/max overloads (math_functions.hpp).
#define RUDNN_EMU_MIN_MAX(R, A, B)                                             \
  static inline R min(A a, B b) {                                              \
    return static_cast<R>(a) < static_cast<R>(b) ? static_cast<R>(a)           \
                                                 : static_cast<R>(b);          \
  }                                                                            \
  static inline R max(A a, B b) {                                              \
    return static_cast<R>(a) > static_cast<R>(b) ? static_cast<R>(a)           \
                                                 : static_cast<R>(b);          \
  }
RUDNN_EMU_MIN_MAX(int, int, int)
RUDNN_EMU_MIN_MAX(unsigned int, unsigned int, unsigned int)
RUDNN_EMU_MIN_MAX(unsigned int, int, unsigned int)
RUDNN_EMU_MIN_MAX(unsigned int, unsigned int, int)
RUDNN_EMU_MIN_MAX(long, long, long)
RUDNN_EMU_MIN_MAX(unsigned long, unsigned long, unsigned long)
RUDNN_EMU_MIN_MAX(unsigned long, long, unsigned long)
RUDNN_EMU_MIN_MAX(unsigned long, unsigned long, long)
RUDNN_EMU_MIN_MAX(long long, long long, long long)
RUDNN_EMU_MIN_MAX(unsigned long long, unsigned long long, unsigned long long)
RUDNN_EMU_MIN_MAX(unsigned long long, long long, unsigned long long)
RUDNN_EMU_MIN_MAX(unsigned long long, unsigned long long, long long)
#undef RUDNN_EMU_MIN_MAX
static inline float min(float a, float b) { return fminf(a, b); }
static inline float max(float a, float b) { return fmaxf(a, b); }
static inline double min(double a, double b) { return fmin(a, b); }
static inline double max(double a, double b) { return fmax(a, b); }
static inline double min(float a, double b) { return fmin(a, b); }
static inline double max(float a, double b) { return fmax(a, b); }
static inline double min(double a, float b) { return fmin(a, b); }
static inline double max(double a, float b) { return fmax(a, b); }
static inline unsigned umin(unsigned a, unsigned b) { return a < b ? a : b; }
static inline unsigned umax(unsigned a, unsigned b) { return a > b ? a : b; }
static inline long long llmin(long long a, long long b) {
  return a < b ? a : b;
}
static inline long long llmax(long long a, long long b) {
  return a > b ? a : b;
}
static inline unsigned long long ullmin(unsigned long long a,
                                        unsigned long long b) {
  return a < b ? a : b;
}
static inline unsigned long long ullmax(unsigned long long a,
                                        unsigned long long b) {
  return a > b ? a : b;
}

//===----------------------------------------------------------------------===//
// Floating-point intrinsics
//===----------------------------------------------------------------------===//

namespace rudnn_emu_detail {

/// A subnormal float becomes a zero of the same sign (the .ftz modifier).
inline float flushSubnormal(float x) {
  return std::fpclassify(x) == FP_SUBNORMAL ? std::copysign(0.0f, x) : x;
}

enum class Rounding { Nearest, Zero, Down, Up };

/// cvt.{rni,rzi,rmi,rpi}.sXX/uXX from an fXX: rounds and saturates. NaN
/// gives 0 from f32 to a 32-bit integer, otherwise 1 << (bits - 1)
/// (INT64_MIN, 2^63, INT32_MIN, 2^31), as the PTX ISA defines.
template <typename I, typename F>
inline I toInteger(F value, Rounding rounding) {
  const double x = value;
  if (std::isnan(x)) {
    if (sizeof(F) == 4 && sizeof(I) == 4)
      return 0;
    using U = typename std::make_unsigned<I>::type;
    return static_cast<I>(U(1) << (8 * sizeof(I) - 1));
  }
  double r = rounding == Rounding::Nearest ? std::nearbyint(x)
             : rounding == Rounding::Zero  ? std::trunc(x)
             : rounding == Rounding::Down  ? std::floor(x)
                                           : std::ceil(x);
  if (r <= static_cast<double>(std::numeric_limits<I>::min()))
    return std::numeric_limits<I>::min();
  if (r >= static_cast<double>(std::numeric_limits<I>::max()))
    return std::numeric_limits<I>::max();
  return static_cast<I>(r);
}

/// An approximate instruction's result: exact outside check mode; in check
/// mode moved by up to `ulps` units in the last place, or by up to
/// `absolute`, as the CUDA Math API bounds its error, deterministically per
/// input, so a kernel that needs more accuracy than documented fails here.
inline float approximate(float exact, float input, int ulps,
                         float absolute = 0) {
#ifdef RUDNN_EMU_CHECK
  // Infinities, NaN and exact zeros (documented special cases) stay.
  if (!std::isfinite(exact) || exact == 0)
    return exact;
  uint32_t bits;
  std::memcpy(&bits, &input, sizeof bits);
  uint64_t h = (bits + 0x9e3779b97f4a7c15ull) * 0xbf58476d1ce4e5b9ull;
  h = (h ^ (h >> 31)) * 0x94d049bb133111ebull;
  const int step = static_cast<int>((h >> 33) % 3) - 1; // -1, 0 or +1
  if (absolute > 0)
    return exact + step * absolute;
  float result = exact;
  const int moves = step * static_cast<int>(1 + (h >> 40) % ulps);
  for (int i = 0; i < std::abs(moves); ++i)
    result = std::nextafter(result, moves > 0 ? INFINITY : -INFINITY);
  return result;
#else
  (void)input, (void)ulps, (void)absolute;
  return exact;
#endif
}

} // namespace rudnn_emu_detail

// The fast forms: exact here, perturbed within CUDA's documented error in
// check mode. glibc declares functions of these names already, hence macros.
static inline float rudnn_emu_expf(float x) {
  return rudnn_emu_detail::approximate(
      expf(x), x, 2 + static_cast<int>(std::fabs(1.173f * x)));
}
static inline float rudnn_emu_exp10f(float x) {
  return rudnn_emu_detail::approximate(
      powf(10.0f, x), x, 2 + static_cast<int>(std::fabs(2.97f * x)));
}
/// __logf, __log2f, __log10f: an absolute bound on [0.5, 2], ulps outside.
static inline float rudnn_emu_log(float exact, float x, int ulps,
                                  float absolute) {
  return x >= 0.5f && x <= 2.0f
             ? rudnn_emu_detail::approximate(exact, x, 1, absolute)
             : rudnn_emu_detail::approximate(exact, x, ulps);
}
static inline float rudnn_emu_logf(float x) {
  return rudnn_emu_log(logf(x), x, 3, 0x1p-22f);
}
static inline float rudnn_emu_log2f(float x) {
  return rudnn_emu_log(log2f(x), x, 2, 0x1p-22f);
}
static inline float rudnn_emu_log10f(float x) {
  return rudnn_emu_log(log10f(x), x, 3, 0x1p-24f);
}
static inline float rudnn_emu_powf(float x, float y) {
  return rudnn_emu_detail::approximate(powf(x, y), x * 0.75f + y, 2);
}
/// __sinf, __cosf: an absolute error of 2^-21.41 on [-pi, pi].
static inline float rudnn_emu_trig(float exact, float x) {
  return std::fabs(x) <= 3.14159265f
             ? rudnn_emu_detail::approximate(exact, x, 1, 0x1p-22f)
             : exact;
}
static inline float rudnn_emu_sinf(float x) {
  return rudnn_emu_trig(sinf(x), x);
}
static inline float rudnn_emu_cosf(float x) {
  return rudnn_emu_trig(cosf(x), x);
}
static inline float rudnn_emu_tanf(float x) {
  return rudnn_emu_detail::approximate(tanf(x), x, 4);
}
static inline void rudnn_emu_sincosf(float x, float *s, float *c) {
  *s = rudnn_emu_sinf(x);
  *c = rudnn_emu_cosf(x);
}
#define __expf(x) rudnn_emu_expf(x)
#define __exp10f(x) rudnn_emu_exp10f(x)
#define __logf(x) rudnn_emu_logf(x)
#define __log2f(x) rudnn_emu_log2f(x)
#define __log10f(x) rudnn_emu_log10f(x)
#define __powf(x, y) rudnn_emu_powf(x, y)
#define __sinf(x) rudnn_emu_sinf(x)
#define __cosf(x) rudnn_emu_cosf(x)
#define __tanf(x) rudnn_emu_tanf(x)
#define __sincosf(x, s, c) rudnn_emu_sincosf(x, s, c)
/// x times the flushed reciprocal of y, so that 2^126 < |y| < 2^128 gives 0
/// (and an infinite x NaN) as CUDA documents; 2 ulps.
static inline float __fdividef(float x, float y) {
  const float quotient = x * rudnn_emu_detail::flushSubnormal(1.0f / y);
  const float magnitude = std::fabs(y);
  return magnitude >= 0x1p-126f && magnitude <= 0x1p126f
             ? rudnn_emu_detail::approximate(quotient, x - y, 2)
             : quotient;
}
/// 2 ulps, as the CUDA Math API bounds rsqrtf.
static inline float rsqrtf(float x) {
  return rudnn_emu_detail::approximate(1.0f / sqrtf(x), x, 2);
}
static inline double rsqrt(double x) { return 1.0 / sqrt(x); }
static inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
static inline double rcbrt(double x) { return 1.0 / cbrt(x); }
static inline float __saturatef(float x) {
  // NaN fails both tests and saturates to 0, as on the device.
  return x >= 1.0f ? 1.0f : (x > 0.0f ? x : 0.0f);
}
static inline float __frcp_rn(float x) { return 1.0f / x; }
static inline float __fsqrt_rn(float x) { return sqrtf(x); }
static inline float __frsqrt_rn(float x) { return 1.0f / sqrtf(x); }
static inline float __fdiv_rn(float x, float y) { return x / y; }
static inline float __fadd_rn(float x, float y) { return x + y; }
static inline float __fsub_rn(float x, float y) { return x - y; }
static inline float __fmul_rn(float x, float y) { return x * y; }
static inline float __fmaf_rn(float x, float y, float z) {
  return fmaf(x, y, z);
}
static inline double __drcp_rn(double x) { return 1.0 / x; }
static inline double __dsqrt_rn(double x) { return sqrt(x); }
static inline double __ddiv_rn(double x, double y) { return x / y; }
static inline double __dadd_rn(double x, double y) { return x + y; }
static inline double __dsub_rn(double x, double y) { return x - y; }
static inline double __dmul_rn(double x, double y) { return x * y; }
static inline double __fma_rn(double x, double y, double z) {
  return fma(x, y, z);
}

#define RUDNN_EMU_TO_INTEGER(name, F, I, rounding)                             \
  static inline I name(F x) {                                                  \
    return rudnn_emu_detail::toInteger<I, F>(                                  \
        x, rudnn_emu_detail::Rounding::rounding);                              \
  }
#define RUDNN_EMU_TO_INTEGER_ALL(prefix, F, I)                                 \
  RUDNN_EMU_TO_INTEGER(prefix##_rn, F, I, Nearest)                             \
  RUDNN_EMU_TO_INTEGER(prefix##_rz, F, I, Zero)                                \
  RUDNN_EMU_TO_INTEGER(prefix##_rd, F, I, Down)                                \
  RUDNN_EMU_TO_INTEGER(prefix##_ru, F, I, Up)
RUDNN_EMU_TO_INTEGER_ALL(__float2int, float, int)
RUDNN_EMU_TO_INTEGER_ALL(__float2uint, float, unsigned int)
RUDNN_EMU_TO_INTEGER_ALL(__float2ll, float, long long)
RUDNN_EMU_TO_INTEGER_ALL(__float2ull, float, unsigned long long)
RUDNN_EMU_TO_INTEGER_ALL(__double2int, double, int)
RUDNN_EMU_TO_INTEGER_ALL(__double2uint, double, unsigned int)
RUDNN_EMU_TO_INTEGER_ALL(__double2ll, double, long long)
RUDNN_EMU_TO_INTEGER_ALL(__double2ull, double, unsigned long long)
#undef RUDNN_EMU_TO_INTEGER_ALL
#undef RUDNN_EMU_TO_INTEGER

static inline float __int2float_rn(int x) { return static_cast<float>(x); }
static inline float __uint2float_rn(unsigned x) {
  return static_cast<float>(x);
}
static inline float __ll2float_rn(long long x) { return static_cast<float>(x); }
static inline float __ull2float_rn(unsigned long long x) {
  return static_cast<float>(x);
}
static inline double __int2double_rn(int x) { return x; }
static inline double __uint2double_rn(unsigned x) { return x; }
static inline float __double2float_rn(double x) {
  return static_cast<float>(x);
}

#endif // RUDNN_EMU_MATH_H
