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

// A hidden global, not a static: check mode's hooks, a separate object of
// the same kernel library (rudnn_emu_check_hooks.cpp), read it too.
const rudnn_emu_host *rudnn_emu_host_table = nullptr;

#pragma GCC visibility pop
// The CUDA thread this OS thread runs, in the process's thread-slot library
// (rudnn_emu_thread_slot.cpp): one load from the thread pointer.
extern __thread rudnn_emu_thread *rudnn_emu_current_thread
    __attribute__((visibility("default"), tls_model("initial-exec")));
#pragma GCC visibility push(hidden)

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

// The call site of a collective operation, taken from the caller: every
// prelude function that synchronises ends with these default parameters.
#define RUDNN_EMU_CALL_SITE                                                    \
  const char *rudnn_emu_file = __builtin_FILE(),                               \
             unsigned rudnn_emu_line = __builtin_LINE()
#define RUDNN_EMU_SITE(operation)                                              \
  rudnn_emu_site { operation, rudnn_emu_file, rudnn_emu_line }

/// Every lane of `mask` passes `bytes` at `value`; `all` receives the
/// contributions lane by lane. Returns the lanes that took part (exited
/// lanes of `mask` do not); other entries of `all` are left untouched.
/// Lanes meeting at different operations (or, in check mode, call sites)
/// trap.
static inline unsigned rudnn_emu_warp_exchange(unsigned mask, const void *value,
                                               void *all, size_t bytes,
                                               const rudnn_emu_site &site) {
  if (!(mask & (1u << rudnn_emu_current()->lane)))
    rudnn_emu_trap(
        "warp-synchronous call whose mask excludes the calling lane");
  RUDNN_EMU_COMPILER_BARRIER();
  unsigned result =
      rudnn_emu_table()->warpExchange(mask, value, all, bytes, &site);
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

/// Never inlined into the entry: the sanitizer hooks the compiler calls
/// from kernel code are declared nothrow, so a report unwinding out of one
/// (check mode) must not cross a frame with cleanups of its own, such as
/// the entry's.
template <typename... P>
__attribute__((noinline)) void invoke(void (*kernel)(P...), void **args) {
  invoke(kernel, args, std::index_sequence_for<P...>{});
}

} // namespace rudnn_emu_detail

/// Exports `rudnn_emu_entry_<entry>(void **args)`, which every CUDA thread
/// of a launch calls with CUDA's kernel argument array.
#define RUDNN_EMU_DEFINE_ENTRY(entry)                                          \
  extern "C" __attribute__((                                                   \
      visibility("default"))) void rudnn_emu_entry_##entry(void **args) {      \
    ::rudnn_emu_detail::AsyncCopiesOfThread copies;                            \
    ::rudnn_emu_detail::invoke(&entry, args);                                  \
    ::rudnn_emu_detail::endAsyncWorkAtReturn();                                \
  }

/// Exports the kernel's `__launch_bounds__`, which the host compiler drops,
/// for the executor: its block size and register budgets are checked
/// against them.
#define RUDNN_EMU_LAUNCH_BOUNDS(entry, threads, blocks)                        \
  extern "C" __attribute__((visibility("default")))                            \
  const unsigned rudnn_emu_bounds_##entry[2] = {threads, blocks};

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

static inline int rudnn_emu_syncthreads(int predicate, int mode,
                                        const rudnn_emu_site &site) {
  RUDNN_EMU_COMPILER_BARRIER();
  int result = rudnn_emu_table()->syncthreads(predicate, mode, &site);
  RUDNN_EMU_COMPILER_BARRIER();
  return result;
}

static inline void __syncthreads(RUDNN_EMU_CALL_SITE) {
  rudnn_emu_syncthreads(0, RUDNN_EMU_SYNC_PLAIN,
                        RUDNN_EMU_SITE("__syncthreads"));
}
static inline int __syncthreads_count(int predicate, RUDNN_EMU_CALL_SITE) {
  return rudnn_emu_syncthreads(predicate != 0, RUDNN_EMU_SYNC_COUNT,
                               RUDNN_EMU_SITE("__syncthreads_count"));
}
static inline int __syncthreads_and(int predicate, RUDNN_EMU_CALL_SITE) {
  return rudnn_emu_syncthreads(predicate != 0, RUDNN_EMU_SYNC_AND,
                               RUDNN_EMU_SITE("__syncthreads_and"));
}
static inline int __syncthreads_or(int predicate, RUDNN_EMU_CALL_SITE) {
  return rudnn_emu_syncthreads(predicate != 0, RUDNN_EMU_SYNC_OR,
                               RUDNN_EMU_SITE("__syncthreads_or"));
}

// Every thread of the caller's warpgroup passes `bytes` at `value`; `all`
// receives the 128 contributions thread by thread.
static inline void rudnn_emu_warpgroup_exchange(const void *value, void *all,
                                                size_t bytes,
                                                const rudnn_emu_site &site) {
  RUDNN_EMU_COMPILER_BARRIER();
  rudnn_emu_table()->warpgroupExchange(value, all, bytes, &site);
  RUDNN_EMU_COMPILER_BARRIER();
}

// bar.sync (wait) or bar.arrive on named barrier `id` of `threads` threads.
static inline void rudnn_emu_named_barrier(unsigned id, unsigned threads,
                                           int wait,
                                           const rudnn_emu_site &site) {
  RUDNN_EMU_COMPILER_BARRIER();
  rudnn_emu_table()->namedBarrier(id, threads, wait, &site);
  RUDNN_EMU_COMPILER_BARRIER();
}

// One thread of each block; the block's others wait at __syncthreads.
static inline void rudnn_emu_grid_sync() {
  RUDNN_EMU_COMPILER_BARRIER();
  rudnn_emu_table()->gridSync();
  RUDNN_EMU_COMPILER_BARRIER();
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

#include "rudnn_emu_async.h"
#include "rudnn_emu_atomic.h"
#include "rudnn_emu_math.h"
#include "rudnn_emu_warp.h"

//===----------------------------------------------------------------------===//
// Clocks
//===----------------------------------------------------------------------===//

static inline long long clock64() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

#pragma GCC visibility pop

// The kernel that follows is hidden too, by -fvisibility=hidden (a pragma
// left open here would not survive the precompiled prelude): its functions
// and the statics behind __shared__ stay inside the kernel object. Default
// visibility would make a __shared__ array of an inline function a
// process-wide unique symbol, one kernel object's array standing in for
// another's.

#endif // RUDNN_EMULATION_H
