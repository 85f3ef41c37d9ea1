//===- rudnn_emu_check_hooks.cpp - Check mode: every access observed ------===//
//
// Check mode only: linked into every kernel object, compiled once per
// compiler, flags and prelude, itself without instrumentation (which would
// call these hooks from within them). The kernel is compiled with
// -fsanitize=thread's instrumentation but without its runtime: the compiler
// calls the __tsan_* entry points below before every load, store and
// atomic, and these report the access to the executor, which keeps the
// shadow state of the block's shared memory and finds races between
// barriers, and traps on a global access outside the allocation it falls
// near. A memcpy of a length unknown at compile time is a library call the
// compiler does not instrument: such copies are seen only if they reach an
// allocation's guard page. Volatile reads are polls: the thread lets the
// others run, so a spin-wait on a flag another thread of the block sets
// makes progress, as on a GPU, and one that never can is reported by the
// watchdog.
//
//===----------------------------------------------------------------------===//

#include "rudnn_emu_abi.h"

#include <string.h>

// Defined by the prelude in the kernel's own object (hidden, as everything
// here is under -fvisibility=hidden), and by the process's thread-slot
// library (rudnn_emu_thread_slot.cpp): one load from the thread pointer.
extern const rudnn_emu_host *rudnn_emu_host_table;
extern __thread rudnn_emu_thread *rudnn_emu_current_thread
    __attribute__((visibility("default"), tls_model("initial-exec")));

#define RUDNN_EMU_UNOBSERVED extern "C" __attribute__((used, noinline))

namespace rudnn_emu_detail {

static inline void observe(const void *address, size_t bytes, int kind) {
  // The executor's own per-thread pointer is no shared memory; the stack
  // matters only while the executor watches register writes.
  const rudnn_emu_thread *thread = rudnn_emu_current_thread;
  if (!thread || address == &rudnn_emu_current_thread)
    return;
  const uintptr_t at = reinterpret_cast<uintptr_t>(address);
  if (at - thread->stackBegin < thread->stackEnd - thread->stackBegin &&
      !(kind == RUDNN_EMU_WRITE && thread->watchStackWrites))
    return;
  if (at >= thread->unwatchedBegin && at + bytes <= thread->unwatchedEnd)
    return;
  rudnn_emu_host_table->memoryAccess(address, bytes, kind);
}

} // namespace rudnn_emu_detail

RUDNN_EMU_UNOBSERVED void __tsan_init() {}
RUDNN_EMU_UNOBSERVED void __tsan_func_entry(void *) {}
RUDNN_EMU_UNOBSERVED void __tsan_func_exit() {}
RUDNN_EMU_UNOBSERVED void __tsan_vptr_update(void **, void *) {}
RUDNN_EMU_UNOBSERVED void __tsan_vptr_read(void **) {}

#define RUDNN_EMU_OBSERVE_SIZE(n)                                              \
  RUDNN_EMU_UNOBSERVED void __tsan_read##n(void *p) {                          \
    rudnn_emu_detail::observe(p, n, RUDNN_EMU_READ);                           \
  }                                                                            \
  RUDNN_EMU_UNOBSERVED void __tsan_write##n(void *p) {                         \
    rudnn_emu_detail::observe(p, n, RUDNN_EMU_WRITE);                          \
  }                                                                            \
  RUDNN_EMU_UNOBSERVED void __tsan_unaligned_read##n(void *p) {                \
    rudnn_emu_detail::observe(p, n, RUDNN_EMU_READ);                           \
  }                                                                            \
  RUDNN_EMU_UNOBSERVED void __tsan_unaligned_write##n(void *p) {               \
    rudnn_emu_detail::observe(p, n, RUDNN_EMU_WRITE);                          \
  }                                                                            \
  RUDNN_EMU_UNOBSERVED void __tsan_volatile_read##n(void *p) {                 \
    rudnn_emu_detail::observe(p, n, RUDNN_EMU_READ);                           \
    rudnn_emu_host_table->poll(0);                                             \
  }                                                                            \
  RUDNN_EMU_UNOBSERVED void __tsan_volatile_write##n(void *p) {                \
    rudnn_emu_detail::observe(p, n, RUDNN_EMU_WRITE);                          \
  }                                                                            \
  RUDNN_EMU_UNOBSERVED void __tsan_unaligned_volatile_read##n(void *p) {       \
    rudnn_emu_detail::observe(p, n, RUDNN_EMU_READ);                           \
    rudnn_emu_host_table->poll(0);                                             \
  }                                                                            \
  RUDNN_EMU_UNOBSERVED void __tsan_unaligned_volatile_write##n(void *p) {      \
    rudnn_emu_detail::observe(p, n, RUDNN_EMU_WRITE);                          \
  }
RUDNN_EMU_OBSERVE_SIZE(1)
RUDNN_EMU_OBSERVE_SIZE(2)
RUDNN_EMU_OBSERVE_SIZE(4)
RUDNN_EMU_OBSERVE_SIZE(8)
RUDNN_EMU_OBSERVE_SIZE(16)
#undef RUDNN_EMU_OBSERVE_SIZE

RUDNN_EMU_UNOBSERVED void __tsan_read_range(void *p, unsigned long n) {
  rudnn_emu_detail::observe(p, n, RUDNN_EMU_READ);
}
RUDNN_EMU_UNOBSERVED void __tsan_write_range(void *p, unsigned long n) {
  rudnn_emu_detail::observe(p, n, RUDNN_EMU_WRITE);
}

// Some compilers hand memory intrinsics to the runtime instead.
RUDNN_EMU_UNOBSERVED void *__tsan_memcpy(void *to, const void *from,
                                         unsigned long n) {
  rudnn_emu_detail::observe(from, n, RUDNN_EMU_READ);
  rudnn_emu_detail::observe(to, n, RUDNN_EMU_WRITE);
  return memcpy(to, from, n);
}
RUDNN_EMU_UNOBSERVED void *__tsan_memmove(void *to, const void *from,
                                          unsigned long n) {
  rudnn_emu_detail::observe(from, n, RUDNN_EMU_READ);
  rudnn_emu_detail::observe(to, n, RUDNN_EMU_WRITE);
  return memmove(to, from, n);
}
RUDNN_EMU_UNOBSERVED void *__tsan_memset(void *to, int value, unsigned long n) {
  rudnn_emu_detail::observe(to, n, RUDNN_EMU_WRITE);
  return memset(to, value, n);
}

// Atomics are performed here, observed for their bounds only: atomics
// never race with each other, and the prelude's atomic functions poll on
// their own.
#define RUDNN_EMU_ATOMIC_SIZE(n, T)                                            \
  RUDNN_EMU_UNOBSERVED T __tsan_atomic##n##_load(const volatile T *a, int) {   \
    rudnn_emu_detail::observe((const T *)a, sizeof(T), RUDNN_EMU_ATOMIC);      \
    return __atomic_load_n(a, __ATOMIC_SEQ_CST);                               \
  }                                                                            \
  RUDNN_EMU_UNOBSERVED void __tsan_atomic##n##_store(volatile T *a, T v,       \
                                                     int) {                    \
    rudnn_emu_detail::observe((const T *)a, sizeof(T), RUDNN_EMU_ATOMIC);      \
    __atomic_store_n(a, v, __ATOMIC_SEQ_CST);                                  \
  }                                                                            \
  RUDNN_EMU_UNOBSERVED T __tsan_atomic##n##_exchange(volatile T *a, T v,       \
                                                     int) {                    \
    rudnn_emu_detail::observe((const T *)a, sizeof(T), RUDNN_EMU_ATOMIC);      \
    return __atomic_exchange_n(a, v, __ATOMIC_SEQ_CST);                        \
  }                                                                            \
  RUDNN_EMU_UNOBSERVED T __tsan_atomic##n##_fetch_add(volatile T *a, T v,      \
                                                      int) {                   \
    rudnn_emu_detail::observe((const T *)a, sizeof(T), RUDNN_EMU_ATOMIC);      \
    return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST);                         \
  }                                                                            \
  RUDNN_EMU_UNOBSERVED T __tsan_atomic##n##_fetch_sub(volatile T *a, T v,      \
                                                      int) {                   \
    rudnn_emu_detail::observe((const T *)a, sizeof(T), RUDNN_EMU_ATOMIC);      \
    return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST);                         \
  }                                                                            \
  RUDNN_EMU_UNOBSERVED T __tsan_atomic##n##_fetch_and(volatile T *a, T v,      \
                                                      int) {                   \
    rudnn_emu_detail::observe((const T *)a, sizeof(T), RUDNN_EMU_ATOMIC);      \
    return __atomic_fetch_and(a, v, __ATOMIC_SEQ_CST);                         \
  }                                                                            \
  RUDNN_EMU_UNOBSERVED T __tsan_atomic##n##_fetch_or(volatile T *a, T v,       \
                                                     int) {                    \
    rudnn_emu_detail::observe((const T *)a, sizeof(T), RUDNN_EMU_ATOMIC);      \
    return __atomic_fetch_or(a, v, __ATOMIC_SEQ_CST);                          \
  }                                                                            \
  RUDNN_EMU_UNOBSERVED T __tsan_atomic##n##_fetch_xor(volatile T *a, T v,      \
                                                      int) {                   \
    rudnn_emu_detail::observe((const T *)a, sizeof(T), RUDNN_EMU_ATOMIC);      \
    return __atomic_fetch_xor(a, v, __ATOMIC_SEQ_CST);                         \
  }                                                                            \
  RUDNN_EMU_UNOBSERVED T __tsan_atomic##n##_fetch_nand(volatile T *a, T v,     \
                                                       int) {                  \
    rudnn_emu_detail::observe((const T *)a, sizeof(T), RUDNN_EMU_ATOMIC);      \
    return __atomic_fetch_nand(a, v, __ATOMIC_SEQ_CST);                        \
  }                                                                            \
  RUDNN_EMU_UNOBSERVED int __tsan_atomic##n##_compare_exchange_strong(         \
      volatile T *a, T *c, T v, int, int) {                                    \
    rudnn_emu_detail::observe((const T *)a, sizeof(T), RUDNN_EMU_ATOMIC);      \
    return __atomic_compare_exchange_n(a, c, v, false, __ATOMIC_SEQ_CST,       \
                                       __ATOMIC_SEQ_CST);                      \
  }                                                                            \
  RUDNN_EMU_UNOBSERVED int __tsan_atomic##n##_compare_exchange_weak(           \
      volatile T *a, T *c, T v, int, int) {                                    \
    rudnn_emu_detail::observe((const T *)a, sizeof(T), RUDNN_EMU_ATOMIC);      \
    return __atomic_compare_exchange_n(a, c, v, false, __ATOMIC_SEQ_CST,       \
                                       __ATOMIC_SEQ_CST);                      \
  }                                                                            \
  RUDNN_EMU_UNOBSERVED T __tsan_atomic##n##_compare_exchange_val(              \
      volatile T *a, T c, T v, int, int) {                                     \
    rudnn_emu_detail::observe((const T *)a, sizeof(T), RUDNN_EMU_ATOMIC);      \
    __atomic_compare_exchange_n(a, &c, v, false, __ATOMIC_SEQ_CST,             \
                                __ATOMIC_SEQ_CST);                             \
    return c;                                                                  \
  }
RUDNN_EMU_ATOMIC_SIZE(8, uint8_t)
RUDNN_EMU_ATOMIC_SIZE(16, uint16_t)
RUDNN_EMU_ATOMIC_SIZE(32, uint32_t)
RUDNN_EMU_ATOMIC_SIZE(64, uint64_t)
#undef RUDNN_EMU_ATOMIC_SIZE

RUDNN_EMU_UNOBSERVED void __tsan_atomic_thread_fence(int) {
  __atomic_thread_fence(__ATOMIC_SEQ_CST);
}
RUDNN_EMU_UNOBSERVED void __tsan_atomic_signal_fence(int) {
  __atomic_signal_fence(__ATOMIC_SEQ_CST);
}
