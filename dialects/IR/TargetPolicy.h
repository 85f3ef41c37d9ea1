//===- TargetPolicy.h - Compile-time parameters from a target ---*- C++ -*-===//
//
// What every family's policy (<Family>Policy.h, next to its interfaces)
// builds on: the default target and the layout facts of the device
// library's tiles. A family's choices live in its own policy.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_DIALECTS_IR_TARGETPOLICY_H
#define RUDNN_DIALECTS_IR_TARGETPOLICY_H

#include <cstdint>
#include <optional>
#include <string>

namespace mlir::rudnn {

/// The default target: an H200 (sm_90, 132 SMs, 227 KiB opt-in shared memory
/// per block).
struct DefaultTarget {
  static constexpr const char *kArch = "sm_90";
  static constexpr int64_t kLanes = 32;
  static constexpr int64_t kSmemPerBlock = 227 * 1024;
  static constexpr int64_t kSmCount = 132;
  /// An SM's shared memory; each resident block also takes 1 KiB of it.
  static constexpr int64_t kSmemPerSm = 228 * 1024;
};

/// Static shared memory a CUDA block may declare (dynamic shared memory can
/// go beyond it; the KDA kernels do not use any).
inline constexpr int64_t kStaticSharedBytes = 48 * 1024;

/// `x` rounded up to a multiple of `to`.
inline int64_t roundUp(int64_t x, int64_t to) { return (x + to - 1) / to * to; }

/// Bytes of a tile::SharedTile of `rows` x `cols` elements of
/// `elementBytes`: rows of 16-byte chunks, padded to an odd count unless a
/// power of two (swizzled).
int64_t sharedTileBytes(int64_t rows, int64_t cols, int64_t elementBytes);

} // namespace mlir::rudnn

#endif // RUDNN_DIALECTS_IR_TARGETPOLICY_H
