//===- rudnn_emu_atomic.h - Atomics and memory hints ------------------------===//
//
// Part of the emulation prelude (rudnn_emulation.h includes it); relies on
// what that header declares before including it.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_EMU_ATOMIC_H
#define RUDNN_EMU_ATOMIC_H

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


#endif // RUDNN_EMU_ATOMIC_H
