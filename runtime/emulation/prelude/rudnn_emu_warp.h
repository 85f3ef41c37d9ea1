//===- rudnn_emu_warp.h - Shuffles, votes, __syncwarp
//-----------------------===//
//
// Part of the emulation prelude (rudnn_emulation.h includes it); relies on
// what that header declares before including it.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_EMU_WARP_H
#define RUDNN_EMU_WARP_H

//===----------------------------------------------------------------------===//
// Warp shuffles, votes and __syncwarp
//===----------------------------------------------------------------------===//

static inline void __syncwarp(unsigned mask = 0xffffffffu,
                              RUDNN_EMU_CALL_SITE) {
  unsigned char token = 0, all[32];
  rudnn_emu_warp_exchange(mask, &token, all, 1, RUDNN_EMU_SITE("__syncwarp"));
}

/// The lanes executing together with the caller: under independent thread
/// scheduling only the caller is guaranteed, and the emulator answers that
/// legal minimum, so code may not assume convergence it never asked for.
static inline unsigned __activemask() {
  return 1u << rudnn_emu_current()->lane;
}

namespace rudnn_emu_detail {

enum class ShuffleMode { Idx, Up, Down, Bfly };

/// shfl.sync as the PTX ISA defines it; `clamp` is the c operand (segment
/// mask in bits 12:8, clamp value in bits 4:0) that CUDA derives from width.
template <typename T>
inline T shuffle(ShuffleMode mode, unsigned mask, T var, unsigned b,
                 unsigned clamp, const rudnn_emu_site &site) {
  static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= 8,
                "warp shuffles move trivially copyable values of up to 8 "
                "bytes");
  alignas(T) unsigned char all[32 * sizeof(T)];
  rudnn_emu_warp_exchange(mask, &var, all, sizeof(T), site);
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
inline T __shfl_sync(unsigned mask, T var, int srcLane, int width = warpSize,
                     RUDNN_EMU_CALL_SITE) {
  return rudnn_emu_detail::shuffle(rudnn_emu_detail::ShuffleMode::Idx, mask,
                                   var, static_cast<unsigned>(srcLane),
                                   rudnn_emu_detail::shuffleSegment(width) |
                                       0x1f,
                                   RUDNN_EMU_SITE("__shfl_sync"));
}

template <typename T>
inline T __shfl_up_sync(unsigned mask, T var, unsigned delta,
                        int width = warpSize, RUDNN_EMU_CALL_SITE) {
  return rudnn_emu_detail::shuffle(rudnn_emu_detail::ShuffleMode::Up, mask, var,
                                   delta,
                                   rudnn_emu_detail::shuffleSegment(width),
                                   RUDNN_EMU_SITE("__shfl_up_sync"));
}

template <typename T>
inline T __shfl_down_sync(unsigned mask, T var, unsigned delta,
                          int width = warpSize, RUDNN_EMU_CALL_SITE) {
  return rudnn_emu_detail::shuffle(
      rudnn_emu_detail::ShuffleMode::Down, mask, var, delta,
      rudnn_emu_detail::shuffleSegment(width) | 0x1f,
      RUDNN_EMU_SITE("__shfl_down_sync"));
}

template <typename T>
inline T __shfl_xor_sync(unsigned mask, T var, int laneMask,
                         int width = warpSize, RUDNN_EMU_CALL_SITE) {
  return rudnn_emu_detail::shuffle(rudnn_emu_detail::ShuffleMode::Bfly, mask,
                                   var, static_cast<unsigned>(laneMask),
                                   rudnn_emu_detail::shuffleSegment(width) |
                                       0x1f,
                                   RUDNN_EMU_SITE("__shfl_xor_sync"));
}

namespace rudnn_emu_detail {

/// The lanes that took part in a vote (those of `mask` that have not
/// exited) and, among them, those whose predicate was nonzero.
struct Votes {
  unsigned votes, present;
};

inline Votes vote(unsigned mask, int predicate, const rudnn_emu_site &site) {
  unsigned char mine = predicate != 0, all[32];
  unsigned present = rudnn_emu_warp_exchange(mask, &mine, all, 1, site);
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

template <typename T>
inline WarpValues<T> gather(unsigned mask, T value,
                            const rudnn_emu_site &site) {
  static_assert(std::is_trivially_copyable<T>::value && sizeof(T) <= 8,
                "warp-wide values of up to 8 bytes");
  WarpValues<T> all;
  std::memset(&all, 0, sizeof all);
  all.present =
      rudnn_emu_warp_exchange(mask, &value, all.value, sizeof(T), site);
  return all;
}

} // namespace rudnn_emu_detail

// Votes count the lanes of `mask` that have not exited, as PTX's vote does.
static inline unsigned __ballot_sync(unsigned mask, int predicate,
                                     RUDNN_EMU_CALL_SITE) {
  return rudnn_emu_detail::vote(mask, predicate,
                                RUDNN_EMU_SITE("__ballot_sync"))
      .votes;
}
static inline int __any_sync(unsigned mask, int predicate,
                             RUDNN_EMU_CALL_SITE) {
  return rudnn_emu_detail::vote(mask, predicate, RUDNN_EMU_SITE("__any_sync"))
             .votes != 0;
}
static inline int __all_sync(unsigned mask, int predicate,
                             RUDNN_EMU_CALL_SITE) {
  rudnn_emu_detail::Votes v =
      rudnn_emu_detail::vote(mask, predicate, RUDNN_EMU_SITE("__all_sync"));
  return v.votes == v.present;
}
static inline int __uni_sync(unsigned mask, int predicate,
                             RUDNN_EMU_CALL_SITE) {
  rudnn_emu_detail::Votes v =
      rudnn_emu_detail::vote(mask, predicate, RUDNN_EMU_SITE("__uni_sync"));
  return v.votes == 0 || v.votes == v.present;
}

template <typename T>
inline unsigned __match_any_sync(unsigned mask, T value, RUDNN_EMU_CALL_SITE) {
  auto all =
      rudnn_emu_detail::gather(mask, value, RUDNN_EMU_SITE("__match_any_sync"));
  unsigned result = 0;
  for (int lane = 0; lane < 32; ++lane)
    if (((all.present >> lane) & 1u) &&
        std::memcmp(&all.value[lane], &value, sizeof(T)) == 0)
      result |= 1u << lane;
  return result;
}

template <typename T>
inline unsigned __match_all_sync(unsigned mask, T value, int *pred,
                                 RUDNN_EMU_CALL_SITE) {
  auto all =
      rudnn_emu_detail::gather(mask, value, RUDNN_EMU_SITE("__match_all_sync"));
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
inline T reduce(unsigned mask, T value, Op op, const rudnn_emu_site &site) {
  auto all = gather(mask, value, site);
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

static inline unsigned __reduce_add_sync(unsigned mask, unsigned value,
                                         RUDNN_EMU_CALL_SITE) {
  return rudnn_emu_detail::reduce(
      mask, value, [](unsigned a, unsigned b) { return a + b; },
      RUDNN_EMU_SITE("__reduce_add_sync"));
}
static inline int __reduce_add_sync(unsigned mask, int value,
                                    RUDNN_EMU_CALL_SITE) {
  return static_cast<int>(__reduce_add_sync(mask, static_cast<unsigned>(value),
                                            rudnn_emu_file, rudnn_emu_line));
}
static inline unsigned __reduce_min_sync(unsigned mask, unsigned value,
                                         RUDNN_EMU_CALL_SITE) {
  return rudnn_emu_detail::reduce(
      mask, value, [](unsigned a, unsigned b) { return a < b ? a : b; },
      RUDNN_EMU_SITE("__reduce_min_sync"));
}
static inline int __reduce_min_sync(unsigned mask, int value,
                                    RUDNN_EMU_CALL_SITE) {
  return rudnn_emu_detail::reduce(
      mask, value, [](int a, int b) { return a < b ? a : b; },
      RUDNN_EMU_SITE("__reduce_min_sync"));
}
static inline unsigned __reduce_max_sync(unsigned mask, unsigned value,
                                         RUDNN_EMU_CALL_SITE) {
  return rudnn_emu_detail::reduce(
      mask, value, [](unsigned a, unsigned b) { return a > b ? a : b; },
      RUDNN_EMU_SITE("__reduce_max_sync"));
}
static inline int __reduce_max_sync(unsigned mask, int value,
                                    RUDNN_EMU_CALL_SITE) {
  return rudnn_emu_detail::reduce(
      mask, value, [](int a, int b) { return a > b ? a : b; },
      RUDNN_EMU_SITE("__reduce_max_sync"));
}
static inline unsigned __reduce_and_sync(unsigned mask, unsigned value,
                                         RUDNN_EMU_CALL_SITE) {
  return rudnn_emu_detail::reduce(
      mask, value, [](unsigned a, unsigned b) { return a & b; },
      RUDNN_EMU_SITE("__reduce_and_sync"));
}
static inline unsigned __reduce_or_sync(unsigned mask, unsigned value,
                                        RUDNN_EMU_CALL_SITE) {
  return rudnn_emu_detail::reduce(
      mask, value, [](unsigned a, unsigned b) { return a | b; },
      RUDNN_EMU_SITE("__reduce_or_sync"));
}
static inline unsigned __reduce_xor_sync(unsigned mask, unsigned value,
                                         RUDNN_EMU_CALL_SITE) {
  return rudnn_emu_detail::reduce(
      mask, value, [](unsigned a, unsigned b) { return a ^ b; },
      RUDNN_EMU_SITE("__reduce_xor_sync"));
}

#endif // RUDNN_EMU_WARP_H
