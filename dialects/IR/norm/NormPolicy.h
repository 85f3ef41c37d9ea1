//===- NormPolicy.h - The norms' row layout from a target -------*- C++ -*-===//
//
// What `rudnn-specialize` chooses for this family on a target (how a
// normalisation lays rows over threads): plain C++, so the JIT API, the emitter
// and the tests ask the same questions of the same code.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_DIALECTS_IR_NORM_NORMPOLICY_H
#define RUDNN_DIALECTS_IR_NORM_NORMPOLICY_H

#include "dialects/IR/TargetPolicy.h"

#include <cstdint>
#include <string>

namespace mlir::rudnn {

/// Elements of a row each thread of a normalisation holds in registers, at
/// most.
inline constexpr int64_t kNormMaxHeld = 32;
/// Threads of a normalisation's split-row block, and the longest row a warp
/// holds (32 lanes × kNormMaxHeld).
inline constexpr int64_t kNormSplitThreads = 256;
inline constexpr int64_t kNormWarpRowMax = 32 * kNormMaxHeld;

/// How a normalisation lays rows of C elements over threads.
struct NormForm {
  int64_t threads = 32;     // threads sharing a row (or a chunk)
  int64_t rowsPerBlock = 0; // a warp a row: rows a block; else 0
  int64_t chunk = 0;        // split rows: elements a block takes; else 0
  std::string reason;
};

/// A warp a row (4 a block) while 32 lanes hold it, `held` elements each;
/// a block a row, about held / 2 elements a thread, while 1024 threads hold
/// it; beyond, rows split into chunks of kNormSplitThreads × `held`
/// elements, a block each. (A backward holds three values an element and
/// asks for half.)
NormForm chooseNormForm(int64_t features, int64_t held = kNormMaxHeld);

/// The blocks that walk a normalisation backward's rows, each leaving one
/// partial row of column sums: four an SM for rows held whole (enough warps
/// to keep the memory busy, few partial rows); for split rows, a multiple
/// of the chunks, about two blocks an SM.
int64_t normBackwardBlocks(const NormForm &form, int64_t features,
                           int64_t smCount);

} // namespace mlir::rudnn

#endif // RUDNN_DIALECTS_IR_NORM_NORMPOLICY_H
