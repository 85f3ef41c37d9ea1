//===- tile/pipeline.cuh - cp.async pipelines -----------------------------===//
//
// The loops every tiled product runs. Two stages: while stage s is
// consumed, the copies of stage s + 1 are in flight. issue(step, stage)
// starts the step's copies into buffer `stage` (0 or 1) without
// committing; consume(step, stage) reads that buffer once its copies have
// landed. One stage of two operands (A, then B, each in its own buffer):
// half the shared memory, B's copy hidden under the product with A and the
// next A's under the product with B. Block-collective.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/arch/cp_async.cuh"

namespace rudnn {
namespace tile {

/// two_stage_pipeline once the caller has issued and committed step 0's
/// copies into buffer 0 (under work of its own), with none after them.
template <typename Issue, typename Consume>
__device__ __forceinline__ void
two_stage_pipeline_from_issued(int steps, Issue issue, Consume consume) {
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

template <typename Issue, typename Consume>
__device__ __forceinline__ void two_stage_pipeline(int steps, Issue issue,
                                                   Consume consume) {
  if (steps <= 0)
    return;
  issue(0, 0);
  arch::cp_async_commit();
  two_stage_pipeline_from_issued(steps, issue, consume);
}

/// One buffer each of A and B: issueA(step) and issueB(step) start a
/// step's copies without committing; consumeA(step) reads A once it has
/// landed, while B's copy is in flight, then consumeB(step) reads B while
/// the next step's A is copied. Ends on a barrier: the buffers are free.
template <typename IssueA, typename IssueB, typename ConsumeA,
          typename ConsumeB>
__device__ __forceinline__ void
split_stage_pipeline(int steps, IssueA issueA, IssueB issueB, ConsumeA consumeA,
                     ConsumeB consumeB) {
  if (steps <= 0)
    return;
  issueA(0);
  arch::cp_async_commit();
  for (int step = 0; step < steps; ++step) {
    arch::cp_async_wait<0>();
    __syncthreads(); // A landed; every warp done with the last B
    issueB(step);
    arch::cp_async_commit();
    consumeA(step);
    arch::cp_async_wait<0>();
    __syncthreads(); // B landed; every warp done with A
    if (step + 1 < steps) {
      issueA(step + 1);
      arch::cp_async_commit();
    }
    consumeB(step);
  }
  __syncthreads();
}

} // namespace tile
} // namespace rudnn
