//===- rudnn_emu_atomic.h - Atomics and memory hints
//------------------------===//
//
// Part of the emulation prelude (rudnn_emulation.h includes it); relies on
// what that header declares before including it.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_EMU_ATOMIC_H
#define RUDNN_EMU_ATOMIC_H

#include "rudnn_emu_math.h" // flushSubnormal

//===----------------------------------------------------------------------===//
// Atomics: real ones, blocks run concurrently on several OS threads
//===----------------------------------------------------------------------===//

namespace rudnn_emu_detail {

/// After an atomic: the thread lets the others of its block run, so a
/// spin-wait on an atomic makes progress as under the GPU's independent
/// thread scheduling; `changed` tells the watchdog whether it wrote.
template <typename T> inline void polled(const T &before, const T &after) {
  rudnn_emu_table()->poll(std::memcmp(&before, &after, sizeof(T)) != 0);
}

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
  polled(old, desired);
  return old;
}

} // namespace rudnn_emu_detail

#define RUDNN_EMU_ATOMIC_UPDATE(T, name, expression)                           \
  static inline T name(T *address, T val) {                                    \
    return rudnn_emu_detail::atomicUpdate(                                     \
        address, [val](T old) { return expression; });                         \
  }

#define RUDNN_EMU_ATOMIC_INTEGER(T)                                            \
  RUDNN_EMU_ATOMIC_UPDATE(T, atomicAdd, old + val)                             \
  RUDNN_EMU_ATOMIC_UPDATE(T, atomicSub, old - val)                             \
  RUDNN_EMU_ATOMIC_UPDATE(T, atomicExch, val)                                  \
  RUDNN_EMU_ATOMIC_UPDATE(T, atomicAnd, old &val)                              \
  RUDNN_EMU_ATOMIC_UPDATE(T, atomicOr, old | val)                              \
  RUDNN_EMU_ATOMIC_UPDATE(T, atomicXor, old ^ val)                             \
  static inline T atomicCAS(T *address, T compare, T val) {                    \
    return rudnn_emu_detail::atomicUpdate(                                     \
        address, [=](T old) { return old == compare ? val : old; });           \
  }

#define RUDNN_EMU_ATOMIC_ORDER(T)                                              \
  RUDNN_EMU_ATOMIC_UPDATE(T, atomicMax, old > val ? old : val)                 \
  RUDNN_EMU_ATOMIC_UPDATE(T, atomicMin, old < val ? old : val)

RUDNN_EMU_ATOMIC_INTEGER(int)
RUDNN_EMU_ATOMIC_INTEGER(unsigned int)
RUDNN_EMU_ATOMIC_INTEGER(unsigned long long)
RUDNN_EMU_ATOMIC_ORDER(int)
RUDNN_EMU_ATOMIC_ORDER(unsigned int)
RUDNN_EMU_ATOMIC_ORDER(long long)
RUDNN_EMU_ATOMIC_ORDER(unsigned long long)

static inline unsigned short
atomicCAS(unsigned short *address, unsigned short compare, unsigned short val) {
  return rudnn_emu_detail::atomicUpdate(
      address, [=](unsigned short old) { return old == compare ? val : old; });
}

// Floating-point updates compare bit patterns, as the hardware's do. A float
// add flushes subnormal operands and results to zero, as atom.add.f32 does.
RUDNN_EMU_ATOMIC_UPDATE(
    float, atomicAdd,
    rudnn_emu_detail::flushSubnormal(rudnn_emu_detail::flushSubnormal(old) +
                                     rudnn_emu_detail::flushSubnormal(val)))
RUDNN_EMU_ATOMIC_UPDATE(double, atomicAdd, old + val)
RUDNN_EMU_ATOMIC_UPDATE(float, atomicExch, val)
RUDNN_EMU_ATOMIC_UPDATE(unsigned, atomicInc, old >= val ? 0u : old + 1)
RUDNN_EMU_ATOMIC_UPDATE(unsigned, atomicDec,
                        old == 0 || old > val ? val : old - 1)

#undef RUDNN_EMU_ATOMIC_INTEGER
#undef RUDNN_EMU_ATOMIC_ORDER
#undef RUDNN_EMU_ATOMIC_UPDATE

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
