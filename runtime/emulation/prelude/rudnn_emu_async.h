//===- rudnn_emu_async.h - Asynchronous copies, as the hardware has them --===//
//
// cp.async as the PTX ISA defines it: a copy is in flight from its issue
// until a cp.async.wait_group (or wait_all) retires the group it was
// committed in; no other synchronization, __syncthreads included, completes
// it. Here the destination holds poison (all bits set: NaN, -1) while the
// copy is in flight and the data from the retiring wait on, so a kernel that
// reads a stage before waiting for it computes garbage, as on a GPU. Each
// CUDA thread keeps its own groups, as the hardware does.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_EMU_ASYNC_H
#define RUDNN_EMU_ASYNC_H

#include <deque>
#include <vector>

namespace rudnn_emu_detail {

struct AsyncCopy {
  void *destination;
  unsigned char data[16];
  size_t bytes;
};

/// A CUDA thread's copies: those issued since its last commit, then its
/// committed groups, oldest first.
struct AsyncCopies {
  std::vector<AsyncCopy> open;
  std::deque<std::vector<AsyncCopy>> groups;
};

inline AsyncCopies &asyncCopies() {
  rudnn_emu_thread *thread = rudnn_emu_current();
  if (!thread->asyncCopies)
    thread->asyncCopies = new AsyncCopies();
  return *static_cast<AsyncCopies *>(thread->asyncCopies);
}

/// Forgets the thread's copies when it ends (returning or unwound): its
/// block's shared memory, their only destination, ends with it.
struct AsyncCopiesOfThread {
  rudnn_emu_thread *thread = rudnn_emu_current();
  ~AsyncCopiesOfThread() {
    delete static_cast<AsyncCopies *>(thread->asyncCopies);
    thread->asyncCopies = nullptr;
  }
};

} // namespace rudnn_emu_detail

/// cp.async of `bytes` (4, 8 or 16): the source is read now, the
/// destination poisoned until a wait retires the copy's group.
static inline void rudnn_emu_cp_async(void *destination, const void *source,
                                      size_t bytes) {
  rudnn_emu_detail::AsyncCopy copy{destination, {}, bytes};
  std::memcpy(copy.data, source, bytes);
  std::memset(destination, 0xff, bytes);
  rudnn_emu_detail::asyncCopies().open.push_back(copy);
}

/// cp.async.commit_group: the copies issued since the last commit form a
/// group (possibly empty).
static inline void rudnn_emu_cp_async_commit() {
  rudnn_emu_detail::AsyncCopies &copies = rudnn_emu_detail::asyncCopies();
  copies.groups.push_back(std::move(copies.open));
  copies.open.clear();
}

/// cp.async.wait_group `pending`: retires every committed group but the
/// `pending` most recent ones, oldest first.
static inline void rudnn_emu_cp_async_wait(unsigned pending) {
  RUDNN_EMU_COMPILER_BARRIER();
  rudnn_emu_detail::AsyncCopies &copies = rudnn_emu_detail::asyncCopies();
  while (copies.groups.size() > pending) {
    for (const rudnn_emu_detail::AsyncCopy &copy : copies.groups.front())
      std::memcpy(copy.destination, copy.data, copy.bytes);
    copies.groups.pop_front();
  }
  RUDNN_EMU_COMPILER_BARRIER();
}

#endif // RUDNN_EMU_ASYNC_H
