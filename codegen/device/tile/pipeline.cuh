//===- tile/pipeline.cuh - Two-stage cp.async pipelines -------------------===//
//
// The loop every tiled product runs: while stage s is consumed, the copies
// of stage s + 1 are in flight. issue(step, stage) starts the step's copies
// into buffer `stage` (0 or 1) without committing; consume(step, stage)
// reads that buffer once its copies have landed. Block-collective.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/arch/cp_async.cuh"

namespace rudnn {
namespace tile {

template <typename Issue, typename Consume>
__device__ __forceinline__ void two_stage_pipeline(int steps, Issue issue,
                                                   Consume consume) {
  if (steps <= 0)
    return;
  issue(0, 0);
  arch::cp_async_commit();
  for (int step = 0; step < steps; ++step) {
    // The next step's copies, or an empty group that keeps the count.
    if (step + 1 < steps)
      issue(step + 1, (step + 1) % 2);
    arch::cp_async_commit();
    arch::cp_async_wait<1>();
    __syncthreads();
    consume(step, step % 2);
    __syncthreads(); // the buffer is free for the copies two steps on
  }
}

} // namespace tile
} // namespace rudnn
