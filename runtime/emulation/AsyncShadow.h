//===- AsyncShadow.h - Check mode's view of the async engines ---*- C++ -*-===//
//
// What check mode knows of a block's asynchronous engines on shared memory:
// the TMA boxes in flight and landed (on which mbarrier, in which barrier
// interval), the mbarrier phases each thread has waited for, and each
// thread's async-proxy fences. The executor's shadow bytes name a box here
// and carry their writer's fence count; this decides whether an access by a
// thread, or an async-proxy read it issued, is ordered after what the
// engines and the other threads did. Why an access is not is a sentence for
// the report.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_RUNTIME_EMULATION_ASYNCSHADOW_H
#define RUDNN_RUNTIME_EMULATION_ASYNCSHADOW_H

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rudnn::runtime {

class AsyncShadow {
public:
  /// A new block of `threads` threads: no box, no wait, no fence. Ids of
  /// the earlier blocks' boxes, left in the shadow, name no box now.
  void reset(size_t threads);

  /// A box issued by `issuer` that completes on `barrier`: its id (never
  /// 0, never an earlier block's).
  uint32_t issue(const void *barrier, uint32_t issuer);
  /// Box `box` landed during barrier interval `phase`.
  void land(uint32_t box, uint32_t phase);
  /// `thread` waited for a phase of `barrier` in barrier interval
  /// `phase`: every box landed on it so far is ordered before its later
  /// accesses, and, after the next __syncthreads, before every thread's.
  void acquire(uint32_t thread, const void *barrier, uint32_t phase);
  /// A thread arrived on `barrier` knowing, for every thread u, that u's
  /// accesses before its `known[u]`-th sync are ordered before it (its own
  /// count after the arrival's increment; others' through barriers and
  /// warp syncs it took part in): a waiter learns all of that.
  void arrive(const void *barrier, const std::vector<uint32_t> &known);
  /// Per thread u, the most any arrival on `barrier` knew of u (0: none).
  const std::vector<uint32_t> &arrivals(const void *barrier) {
    return arrivalsOf(barrier);
  }
  void fence(uint32_t thread) { ++fences_[thread]; }
  uint32_t fences(uint32_t thread) const { return fences_[thread]; }

  /// Whether `box` is this block's (the shadow keeps older ids).
  bool current(uint32_t box) const { return box > base_; }
  bool inFlight(uint32_t box) const { return current(box) && at(box).inFlight; }
  /// Whether `thread`, in barrier interval `phase`, may touch a byte of box
  /// `box` (this block's): not while the box is in flight; once it landed,
  /// when `thread` has waited on its barrier since, or some thread had and
  /// a __syncthreads came between (the sync orders threads, not the TMA
  /// unit's writes: without a wait it orders nothing of the box).
  bool allowed(uint32_t box, uint32_t thread, uint32_t phase) const;
  /// Why not, for a report.
  std::string whyNot(uint32_t box) const;

private:
  struct Box {
    const void *barrier;
    uint32_t issuer;
    bool inFlight = true;
    uint32_t phase = 0;  // the barrier interval it landed in
    uint32_t serial = 0; // its landing's number among its barrier's
    // The interval of the first wait that ordered it (none: UINT32_MAX).
    uint32_t firstAcquired = UINT32_MAX;
  };
  const Box &at(uint32_t box) const { return boxes_.at(box - base_ - 1); }
  Box &at(uint32_t box) { return boxes_.at(box - base_ - 1); }
  uint32_t &landings(const void *barrier);
  std::vector<uint32_t> &arrivalsOf(const void *barrier);

  size_t threads_ = 0;
  std::vector<Box> boxes_;
  uint32_t base_ = 0; // the earlier blocks' boxes
  std::vector<std::pair<const void *, uint32_t>> landings_;
  /// For every thread, per barrier, how many landings its waits ordered.
  std::vector<std::vector<std::pair<const void *, uint32_t>>> acquired_;
  std::vector<uint32_t> fences_;
  std::vector<std::pair<const void *, std::vector<uint32_t>>> arrivals_;
};

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_EMULATION_ASYNCSHADOW_H
