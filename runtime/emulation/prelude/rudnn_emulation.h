//===- rudnn_emulation.h - CUDA device code compiled for the host CPU -----===//
//
// Force-included before every emulated kernel (g++ -include), so the text
// NVRTC compiles builds with the host compiler: the CUDA qualifiers, built-in
// indices, vector types, barriers, warp shuffles and votes, atomics and math
// intrinsics, each with CUDA's semantics. Everything a warp or a block does
// together goes through the executor's table (rudnn_emu_abi.h).
//
// Every CUDA thread of a block is a fiber and a block's fibers share one OS
// thread, one block at a time: `__shared__` variables are therefore
// `static thread_local`, private to the block that runs on that OS thread.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_EMULATION_H
#define RUDNN_EMULATION_H

#ifndef __RUDNN_EMULATION__
#error "the emulation prelude needs -D__RUDNN_EMULATION__"
#endif

#include "rudnn_emu_abi.h"

// Device asserts report through the executor (assert.h here).
[[noreturn]] static inline void rudnn_emu_assert_fail(const char *expression,
                                                      const char *file,
                                                      int line,
                                                      const char *function);

// The standard headers come first: libstdc++ spells attributes such as
// __noinline__ that the CUDA qualifiers below redefine.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>
#include <utility>

//===----------------------------------------------------------------------===//
// Qualifiers
//===----------------------------------------------------------------------===//

// Kernels stay inside their object; only the entries are exported.
#define __global__ __attribute__((visibility("hidden")))
#define __device__
#define __host__
#define __forceinline__ inline __attribute__((always_inline))
#define __noinline__ __attribute__((noinline))
#define __launch_bounds__(...)
#define __align__(n) __attribute__((aligned(n)))
#define __constant__
#define __managed__
#define __grid_constant__
#define __shared__ static thread_local

// Device code carries `#pragma unroll`, which only NVRTC acts on.
#pragma GCC diagnostic ignored "-Wunknown-pragmas"

#pragma GCC visibility push(hidden)

//===----------------------------------------------------------------------===//
// The executor's table and the running CUDA thread
//===----------------------------------------------------------------------===//

static const rudnn_emu_host *rudnn_emu_host_table = nullptr;
static thread_local rudnn_emu_thread *rudnn_emu_current_thread = nullptr;

static inline rudnn_emu_thread *rudnn_emu_current() {
  return rudnn_emu_current_thread;
}

static inline const rudnn_emu_host *rudnn_emu_table() {
  return rudnn_emu_host_table;
}

// Keeps the compiler from caching memory in registers across a point where
// other CUDA threads of the block (fibers on this OS thread) run.
#define RUDNN_EMU_COMPILER_BARRIER() __asm__ __volatile__("" ::: "memory")

[[noreturn]] static inline void rudnn_emu_trap(const char *message) {
  // The executor resumes a trapped thread only to unwind it: trap() throws
  // then, out of the kernel.
  rudnn_emu_table()->trap(message);
  abort();
}

/// Every lane of `mask` passes `bytes` at `value`; `all` receives the
/// contributions lane by lane. Returns the lanes that took part (exited
/// lanes of `mask` do not); other entries of `all` are left untouched.
static inline unsigned rudnn_emu_warp_exchange(unsigned mask, const void *value,
                                               void *all, size_t bytes) {
  if (!(mask & (1u << rudnn_emu_current()->lane)))
    rudnn_emu_trap(
        "warp-synchronous call whose mask excludes the calling lane");
  RUDNN_EMU_COMPILER_BARRIER();
  unsigned result = rudnn_emu_table()->warpExchange(mask, value, all, bytes);
  RUDNN_EMU_COMPILER_BARRIER();
  return result;
}

#pragma GCC visibility pop

extern "C" __attribute__((visibility("default"))) int
rudnn_emu_bind(const rudnn_emu_host *host) {
  rudnn_emu_host_table = host;
  return RUDNN_EMU_ABI_VERSION;
}

extern "C" __attribute__((visibility("default"))) void
rudnn_emu_set_current(rudnn_emu_thread *thread) {
  rudnn_emu_current_thread = thread;
}

#pragma GCC visibility push(hidden)

//===----------------------------------------------------------------------===//
// Vector types (vector_types.h): CUDA's layouts and alignments
//===----------------------------------------------------------------------===//

#define RUDNN_EMU_VECTOR_TYPES(T, name, align1, align2, align4)                \
  struct __align__(align1) name##1 {                                           \
    T x;                                                                       \
  };                                                                           \
  struct __align__(align2) name##2 {                                           \
    T x, y;                                                                    \
  };                                                                           \
  struct name##3 {                                                             \
    T x, y, z;                                                                 \
  };                                                                           \
  struct __align__(align4) name##4 {                                           \
    T x, y, z, w;                                                              \
  };                                                                           \
  static inline name##1 make_##name##1(T x) { return name##1 {x}; }            \
  static inline name##2 make_##name##2(T x, T y) { return name##2 {x, y}; }    \
  static inline name##3 make_##name##3(T x, T y, T z) {                        \
    return name##3 {x, y, z};                                                  \
  }                                                                            \
  static inline name##4 make_##name##4(T x, T y, T z, T w) {                   \
    return name##4 {x, y, z, w};                                               \
  }

RUDNN_EMU_VECTOR_TYPES(signed char, char, 1, 2, 4)
RUDNN_EMU_VECTOR_TYPES(unsigned char, uchar, 1, 2, 4)
RUDNN_EMU_VECTOR_TYPES(short, short, 2, 4, 8)
RUDNN_EMU_VECTOR_TYPES(unsigned short, ushort, 2, 4, 8)
RUDNN_EMU_VECTOR_TYPES(int, int, 4, 8, 16)
RUDNN_EMU_VECTOR_TYPES(unsigned int, uint, 4, 8, 16)
RUDNN_EMU_VECTOR_TYPES(long, long, 8, 16, 16)
RUDNN_EMU_VECTOR_TYPES(unsigned long, ulong, 8, 16, 16)
RUDNN_EMU_VECTOR_TYPES(long long, longlong, 8, 16, 16)
RUDNN_EMU_VECTOR_TYPES(unsigned long long, ulonglong, 8, 16, 16)
RUDNN_EMU_VECTOR_TYPES(float, float, 4, 8, 16)
RUDNN_EMU_VECTOR_TYPES(double, double, 8, 16, 16)

#undef RUDNN_EMU_VECTOR_TYPES

struct dim3 {
  unsigned int x, y, z;
  constexpr dim3(unsigned int vx = 1, unsigned int vy = 1, unsigned int vz = 1)
      : x(vx), y(vy), z(vz) {}
  constexpr dim3(uint3 v) : x(v.x), y(v.y), z(v.z) {}
  constexpr operator uint3() const { return uint3{x, y, z}; }
};

//===----------------------------------------------------------------------===//
// Built-in variables
//===----------------------------------------------------------------------===//

static inline uint3 rudnn_emu_uint3(const rudnn_emu_dim3 &v) {
  return uint3{v.x, v.y, v.z};
}

#define threadIdx (::rudnn_emu_uint3(::rudnn_emu_current()->threadIdx))
#define blockIdx (::rudnn_emu_uint3(::rudnn_emu_current()->blockIdx))
#define blockDim (::dim3(::rudnn_emu_uint3(::rudnn_emu_current()->blockDim)))
#define gridDim (::dim3(::rudnn_emu_uint3(::rudnn_emu_current()->gridDim)))

static constexpr int warpSize = 32;

//===----------------------------------------------------------------------===//
// Dynamic shared memory and the kernel entries
//===----------------------------------------------------------------------===//

/// `extern __shared__` has no host equivalent: the block's dynamic shared
/// memory comes from the executor (rudnn/shared.cuh has the NVRTC form).
#define RUDNN_DYNAMIC_SHARED(type, name)                                       \
  type *name = reinterpret_cast<type *>(::rudnn_emu_current()->dynamicShared)

namespace rudnn_emu_detail {

// Copied out rather than dereferenced: the executor need not align arguments.
template <typename T> inline T loadArgument(const void *source) {
  static_assert(std::is_trivially_copyable<T>::value,
                "kernel parameters are trivially copyable");
  alignas(T) unsigned char storage[sizeof(T)];
  std::memcpy(storage, source, sizeof(T));
  return *reinterpret_cast<T *>(storage);
}

template <typename... P, std::size_t... I>
inline void invoke(void (*kernel)(P...), void **args,
                   std::index_sequence<I...>) {
  (void)args;
  kernel(loadArgument<P>(args[I])...);
}

template <typename... P> inline void invoke(void (*kernel)(P...), void **args) {
  invoke(kernel, args, std::index_sequence_for<P...>{});
}

} // namespace rudnn_emu_detail

/// Exports `rudnn_emu_entry_<entry>(void **args)`, which every CUDA thread
/// of a launch calls with CUDA's kernel argument array.
#define RUDNN_EMU_DEFINE_ENTRY(entry)                                          \
  extern "C" __attribute__((                                                   \
      visibility("default"))) void rudnn_emu_entry_##entry(void **args) {      \
    ::rudnn_emu_detail::invoke(&entry, args);                                  \
  }

//===----------------------------------------------------------------------===//
// Traps and assertions
//===----------------------------------------------------------------------===//

[[noreturn]] static inline void __trap() { rudnn_emu_trap("__trap"); }

[[noreturn]] static inline void rudnn_emu_assert_fail(const char *expression,
                                                      const char *file,
                                                      int line,
                                                      const char *function) {
  // Per OS thread, so a concurrent block's failure cannot overwrite it.
  static thread_local char message[1024];
  snprintf(message, sizeof message, "%s:%d: %s: Assertion `%s' failed.", file,
           line, function, expression);
  rudnn_emu_trap(message);
}

// NVRTC has assert built in; here it comes from the prelude's assert.h,
// which also stands in for the C library's should a kernel include it.
#include "assert.h"

//===----------------------------------------------------------------------===//
// Block barriers and memory fences
//===----------------------------------------------------------------------===//

static inline int rudnn_emu_syncthreads(int predicate, int mode) {
  RUDNN_EMU_COMPILER_BARRIER();
  int result = rudnn_emu_table()->syncthreads(predicate, mode);
  RUDNN_EMU_COMPILER_BARRIER();
  return result;
}

static inline void __syncthreads() {
  rudnn_emu_syncthreads(0, RUDNN_EMU_SYNC_PLAIN);
}
static inline int __syncthreads_count(int predicate) {
  return rudnn_emu_syncthreads(predicate != 0, RUDNN_EMU_SYNC_COUNT);
}
static inline int __syncthreads_and(int predicate) {
  return rudnn_emu_syncthreads(predicate != 0, RUDNN_EMU_SYNC_AND);
}
static inline int __syncthreads_or(int predicate) {
  return rudnn_emu_syncthreads(predicate != 0, RUDNN_EMU_SYNC_OR);
}

// Blocks run on several OS threads: fences are real fences.
static inline void __threadfence_block() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
}
static inline void __threadfence() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
}
static inline void __threadfence_system() {
  std::atomic_thread_fence(std::memory_order_seq_cst);
}

//===----------------------------------------------------------------------===//
// Warp shuffles, votes and __syncwarp
//===----------------------------------------------------------------------===//

static inline void __syncwarp(unsigned mask = 0xffffffffu) {
  unsigned char token = 0, all[32];
  rudnn_emu_warp_exchange(mask, &token, all, 1);
}

static inline unsigned __activemask() {
  return rudnn_emu_table()->activeMask();
}

namespace rudnn_emu_detail {

enum class ShuffleMode { Idx, Up, Down, Bfly };

/// shfl.sync as the PTX ISA defines it; `clamp` is the c operand (segment
/// mask in bits 12:8, clamp value in bits 4:0) that CUDA derives from width.
template <typename T>
inline T shuffle(ShuffleMode mode, unsigned mask, T var, unsigned b,
                 unsigned clamp) {
  static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= 8,
                "warp shuffles move trivially copyable values of up to 8 "
                "bytes");
  alignas(T) unsigned char all[32 * sizeof(T)];
  rudnn_emu_warp_exchange(mask, &var, all, sizeof(T));
  const int lane = static_cast<int>(rudnn_emu_current()->lane);
  const int bval = static_cast<int>(b & 0x1f);
  const int cval = static_cast<int>(clamp & 0x1f);
  const int segmask = static_cast<int>((clamp >> 8) & 0x1f);
  const int maxLane = (lane & segmask) | (cval & ~segmask);
  const int minLane = lane & segmask;
  int j = lane;
  bool inRange = false;
  switch (mode) {
  case ShuffleMode::Up:
    j = lane - bval;
    inRange = j >= maxLane;
    break;
  case ShuffleMode::Down:
    j = lane + bval;
    inRange = j <= maxLane;
    break;
  case ShuffleMode::Bfly:
    j = lane ^ bval;
    inRange = j <= maxLane;
    break;
  case ShuffleMode::Idx:
    j = minLane | (bval & ~segmask);
    inRange = j <= maxLane;
    break;
  }
  // Out of range: the lane keeps its own value. A source outside the mask
  // is undefined in CUDA; the lane's own value is one possible outcome.
  if (!inRange || !(mask & (1u << j)))
    return var;
  return loadArgument<T>(all + j * sizeof(T));
}

inline unsigned shuffleSegment(int width) {
  return static_cast<unsigned>(warpSize - width) << 8;
}

} // namespace rudnn_emu_detail

template <typename T>
inline T __shfl_sync(unsigned mask, T var, int srcLane, int width = warpSize) {
  return rudnn_emu_detail::shuffle(rudnn_emu_detail::ShuffleMode::Idx, mask,
                                   var, static_cast<unsigned>(srcLane),
                                   rudnn_emu_detail::shuffleSegment(width) |
                                       0x1f);
}

template <typename T>
inline T __shfl_up_sync(unsigned mask, T var, unsigned delta,
                        int width = warpSize) {
  return rudnn_emu_detail::shuffle(rudnn_emu_detail::ShuffleMode::Up, mask, var,
                                   delta,
                                   rudnn_emu_detail::shuffleSegment(width));
}

template <typename T>
inline T __shfl_down_sync(unsigned mask, T var, unsigned delta,
                          int width = warpSize) {
  return rudnn_emu_detail::shuffle(
      rudnn_emu_detail::ShuffleMode::Down, mask, var, delta,
      rudnn_emu_detail::shuffleSegment(width) | 0x1f);
}

template <typename T>
inline T __shfl_xor_sync(unsigned mask, T var, int laneMask,
                         int width = warpSize) {
  return rudnn_emu_detail::shuffle(rudnn_emu_detail::ShuffleMode::Bfly, mask,
                                   var, static_cast<unsigned>(laneMask),
                                   rudnn_emu_detail::shuffleSegment(width) |
                                       0x1f);
}

namespace rudnn_emu_detail {

/// The lanes that took part in a vote (those of `mask` that have not
/// exited) and, among them, those whose predicate was nonzero.
struct Votes {
  unsigned votes, present;
};

inline Votes vote(unsigned mask, int predicate) {
  unsigned char mine = predicate != 0, all[32];
  unsigned present = rudnn_emu_warp_exchange(mask, &mine, all, 1);
  unsigned votes = 0;
  for (int lane = 0; lane < 32; ++lane)
    if ((present >> lane) & 1u)
      votes |= static_cast<unsigned>(all[lane]) << lane;
  return {votes, present};
}

/// The values of every lane that took part, lane by lane.
template <typename T> struct WarpValues {
  T value[32];
  unsigned present;
};

template <typename T> inline WarpValues<T> gather(unsigned mask, T value) {
  static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= 8,
                "warp-wide values of up to 8 bytes");
  WarpValues<T> all;
  std::memset(&all, 0, sizeof all);
  all.present = rudnn_emu_warp_exchange(mask, &value, all.value, sizeof(T));
  return all;
}

} // namespace rudnn_emu_detail

// Votes count the lanes of `mask` that have not exited, as PTX's vote does.
static inline unsigned __ballot_sync(unsigned mask, int predicate) {
  return rudnn_emu_detail::vote(mask, predicate).votes;
}
static inline int __any_sync(unsigned mask, int predicate) {
  return rudnn_emu_detail::vote(mask, predicate).votes != 0;
}
static inline int __all_sync(unsigned mask, int predicate) {
  rudnn_emu_detail::Votes v = rudnn_emu_detail::vote(mask, predicate);
  return v.votes == v.present;
}
static inline int __uni_sync(unsigned mask, int predicate) {
  rudnn_emu_detail::Votes v = rudnn_emu_detail::vote(mask, predicate);
  return v.votes == 0 || v.votes == v.present;
}

template <typename T> inline unsigned __match_any_sync(unsigned mask, T value) {
  auto all = rudnn_emu_detail::gather(mask, value);
  unsigned result = 0;
  for (int lane = 0; lane < 32; ++lane)
    if (((all.present >> lane) & 1u) &&
        std::memcmp(&all.value[lane], &value, sizeof(T)) == 0)
      result |= 1u << lane;
  return result;
}

template <typename T>
inline unsigned __match_all_sync(unsigned mask, T value, int *pred) {
  auto all = rudnn_emu_detail::gather(mask, value);
  for (int lane = 0; lane < 32; ++lane)
    if (((all.present >> lane) & 1u) &&
        std::memcmp(&all.value[lane], &value, sizeof(T)) != 0) {
      *pred = 0;
      return 0;
    }
  *pred = 1;
  return all.present;
}

namespace rudnn_emu_detail {

template <typename T, typename Op>
inline T reduce(unsigned mask, T value, Op op) {
  auto all = gather(mask, value);
  bool first = true;
  T result = value;
  for (int lane = 0; lane < 32; ++lane)
    if ((all.present >> lane) & 1u) {
      result = first ? all.value[lane] : op(result, all.value[lane]);
      first = false;
    }
  return result;
}

} // namespace rudnn_emu_detail

static inline unsigned __reduce_add_sync(unsigned mask, unsigned value) {
  return rudnn_emu_detail::reduce(mask, value,
                                  [](unsigned a, unsigned b) { return a + b; });
}
static inline int __reduce_add_sync(unsigned mask, int value) {
  return static_cast<int>(
      __reduce_add_sync(mask, static_cast<unsigned>(value)));
}
static inline unsigned __reduce_min_sync(unsigned mask, unsigned value) {
  return rudnn_emu_detail::reduce(
      mask, value, [](unsigned a, unsigned b) { return a < b ? a : b; });
}
static inline int __reduce_min_sync(unsigned mask, int value) {
  return rudnn_emu_detail::reduce(mask, value,
                                  [](int a, int b) { return a < b ? a : b; });
}
static inline unsigned __reduce_max_sync(unsigned mask, unsigned value) {
  return rudnn_emu_detail::reduce(
      mask, value, [](unsigned a, unsigned b) { return a > b ? a : b; });
}
static inline int __reduce_max_sync(unsigned mask, int value) {
  return rudnn_emu_detail::reduce(mask, value,
                                  [](int a, int b) { return a > b ? a : b; });
}
static inline unsigned __reduce_and_sync(unsigned mask, unsigned value) {
  return rudnn_emu_detail::reduce(mask, value,
                                  [](unsigned a, unsigned b) { return a & b; });
}
static inline unsigned __reduce_or_sync(unsigned mask, unsigned value) {
  return rudnn_emu_detail::reduce(mask, value,
                                  [](unsigned a, unsigned b) { return a | b; });
}
static inline unsigned __reduce_xor_sync(unsigned mask, unsigned value) {
  return rudnn_emu_detail::reduce(mask, value,
                                  [](unsigned a, unsigned b) { return a ^ b; });
}

//===----------------------------------------------------------------------===//
// Atomics: real ones, blocks run concurrently on several OS threads
//===----------------------------------------------------------------------===//

namespace rudnn_emu_detail {

/// Replaces *address with update(old) atomically; returns old.
template <typename T, typename Update>
inline T atomicUpdate(T *address, Update update) {
  T old;
  __atomic_load(address, &old, __ATOMIC_RELAXED);
  T desired;
  do
    desired = update(old);
  while (!__atomic_compare_exchange(address, &old, &desired, false,
                                    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
  return old;
}

} // namespace rudnn_emu_detail

#define RUDNN_EMU_ATOMIC_BITWISE(T)                                            \
  static inline T atomicAdd(T *address, T val) {                               \
    return __atomic_fetch_add(address, val, __ATOMIC_SEQ_CST);                 \
  }                                                                            \
  static inline T atomicSub(T *address, T val) {                               \
    return __atomic_fetch_sub(address, val, __ATOMIC_SEQ_CST);                 \
  }                                                                            \
  static inline T atomicExch(T *address, T val) {                              \
    return __atomic_exchange_n(address, val, __ATOMIC_SEQ_CST);                \
  }                                                                            \
  static inline T atomicCAS(T *address, T compare, T val) {                    \
    __atomic_compare_exchange_n(address, &compare, val, false,                 \
                                __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);           \
    return compare;                                                            \
  }                                                                            \
  static inline T atomicAnd(T *address, T val) {                               \
    return __atomic_fetch_and(address, val, __ATOMIC_SEQ_CST);                 \
  }                                                                            \
  static inline T atomicOr(T *address, T val) {                                \
    return __atomic_fetch_or(address, val, __ATOMIC_SEQ_CST);                  \
  }                                                                            \
  static inline T atomicXor(T *address, T val) {                               \
    return __atomic_fetch_xor(address, val, __ATOMIC_SEQ_CST);                 \
  }

#define RUDNN_EMU_ATOMIC_ORDER(T)                                              \
  static inline T atomicMax(T *address, T val) {                               \
    return rudnn_emu_detail::atomicUpdate(                                     \
        address, [val](T old) { return old > val ? old : val; });              \
  }                                                                            \
  static inline T atomicMin(T *address, T val) {                               \
    return rudnn_emu_detail::atomicUpdate(                                     \
        address, [val](T old) { return old < val ? old : val; });              \
  }

RUDNN_EMU_ATOMIC_BITWISE(int)
RUDNN_EMU_ATOMIC_BITWISE(unsigned int)
RUDNN_EMU_ATOMIC_BITWISE(unsigned long long)
RUDNN_EMU_ATOMIC_ORDER(int)
RUDNN_EMU_ATOMIC_ORDER(unsigned int)
RUDNN_EMU_ATOMIC_ORDER(long long)
RUDNN_EMU_ATOMIC_ORDER(unsigned long long)

#undef RUDNN_EMU_ATOMIC_BITWISE
#undef RUDNN_EMU_ATOMIC_ORDER

static inline unsigned short
atomicCAS(unsigned short *address, unsigned short compare, unsigned short val) {
  __atomic_compare_exchange_n(address, &compare, val, false, __ATOMIC_SEQ_CST,
                              __ATOMIC_SEQ_CST);
  return compare;
}

// Floating-point updates compare bit patterns, as the hardware's do.
static inline float atomicAdd(float *address, float val) {
  return rudnn_emu_detail::atomicUpdate(address,
                                        [val](float old) { return old + val; });
}
static inline double atomicAdd(double *address, double val) {
  return rudnn_emu_detail::atomicUpdate(
      address, [val](double old) { return old + val; });
}
static inline float atomicExch(float *address, float val) {
  float old;
  __atomic_exchange(address, &val, &old, __ATOMIC_SEQ_CST);
  return old;
}

static inline unsigned atomicInc(unsigned *address, unsigned val) {
  return rudnn_emu_detail::atomicUpdate(
      address, [val](unsigned old) { return old >= val ? 0u : old + 1; });
}
static inline unsigned atomicDec(unsigned *address, unsigned val) {
  return rudnn_emu_detail::atomicUpdate(address, [val](unsigned old) {
    return old == 0 || old > val ? val : old - 1;
  });
}

// Scoped forms: every scope is the whole machine here.
#define RUDNN_EMU_ATOMIC_SCOPES(name)                                          \
  template <typename... A>                                                     \
  inline auto name##_block(A... a)->decltype(name(a...)) {                     \
    return name(a...);                                                         \
  }                                                                            \
  template <typename... A>                                                     \
  inline auto name##_system(A... a)->decltype(name(a...)) {                    \
    return name(a...);                                                         \
  }

RUDNN_EMU_ATOMIC_SCOPES(atomicAdd)
RUDNN_EMU_ATOMIC_SCOPES(atomicSub)
RUDNN_EMU_ATOMIC_SCOPES(atomicExch)
RUDNN_EMU_ATOMIC_SCOPES(atomicCAS)
RUDNN_EMU_ATOMIC_SCOPES(atomicMax)
RUDNN_EMU_ATOMIC_SCOPES(atomicMin)
RUDNN_EMU_ATOMIC_SCOPES(atomicAnd)
RUDNN_EMU_ATOMIC_SCOPES(atomicOr)
RUDNN_EMU_ATOMIC_SCOPES(atomicXor)
RUDNN_EMU_ATOMIC_SCOPES(atomicInc)
RUDNN_EMU_ATOMIC_SCOPES(atomicDec)

#undef RUDNN_EMU_ATOMIC_SCOPES

//===----------------------------------------------------------------------===//
// Memory access hints and address spaces
//===----------------------------------------------------------------------===//

template <typename T> inline T __ldg(const T *address) { return *address; }
template <typename T> inline T __ldcg(const T *address) { return *address; }
template <typename T> inline T __ldca(const T *address) { return *address; }
template <typename T> inline T __ldcs(const T *address) { return *address; }
template <typename T> inline T __ldlu(const T *address) { return *address; }
template <typename T> inline T __ldcv(const T *address) { return *address; }
template <typename T> inline void __stwb(T *address, T value) {
  *address = value;
}
template <typename T> inline void __stcg(T *address, T value) {
  *address = value;
}
template <typename T> inline void __stcs(T *address, T value) {
  *address = value;
}
template <typename T> inline void __stwt(T *address, T value) {
  *address = value;
}

/// Shared memory is host memory: its "shared window address" is the pointer.
static inline size_t __cvta_generic_to_shared(const void *pointer) {
  return reinterpret_cast<size_t>(pointer);
}

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

/// cvt.{rni,rzi,rmi,rpi}.sXX/uXX: rounds, saturates, and maps NaN to 0.
template <typename I> inline I toInteger(double x, Rounding rounding) {
  if (std::isnan(x))
    return 0;
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

} // namespace rudnn_emu_detail

// The fast forms are accurate here; CUDA only bounds their error. glibc
// declares functions of these names already, hence macros.
static inline float rudnn_emu_expf(float x) { return expf(x); }
static inline float rudnn_emu_exp10f(float x) { return powf(10.0f, x); }
static inline float rudnn_emu_logf(float x) { return logf(x); }
static inline float rudnn_emu_log2f(float x) { return log2f(x); }
static inline float rudnn_emu_log10f(float x) { return log10f(x); }
static inline float rudnn_emu_powf(float x, float y) { return powf(x, y); }
static inline float rudnn_emu_sinf(float x) { return sinf(x); }
static inline float rudnn_emu_cosf(float x) { return cosf(x); }
static inline float rudnn_emu_tanf(float x) { return tanf(x); }
static inline void rudnn_emu_sincosf(float x, float *s, float *c) {
  *s = sinf(x);
  *c = cosf(x);
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
/// (and an infinite x NaN) as CUDA documents.
static inline float __fdividef(float x, float y) {
  return x * rudnn_emu_detail::flushSubnormal(1.0f / y);
}
static inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
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
    return rudnn_emu_detail::toInteger<I>(                                     \
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

//===----------------------------------------------------------------------===//
// Clocks
//===----------------------------------------------------------------------===//

static inline long long clock64() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Left in force for the kernel that follows: its functions and the statics
// behind __shared__ stay inside the kernel object. Default visibility would
// make a __shared__ array of an inline function a process-wide unique
// symbol, one kernel object's array standing in for another's.

#endif // RUDNN_EMULATION_H
