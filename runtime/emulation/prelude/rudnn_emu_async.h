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

#include <algorithm>
#include <deque>
#include <memory>
#include <vector>

namespace rudnn_emu_detail {

struct AsyncCopy {
  void *destination;
  unsigned char data[16];
  size_t bytes;
};

/// A TMA box (cp.async.bulk.tensor) in flight: its destination holds
/// poison until it lands, at a moment the schedule chooses between its
/// issue and its barrier's phase completing, and then its bytes complete on
/// `barrier`. Its readers must wait on the barrier, as on a GPU.
struct BulkCopy {
  unsigned char *destination;
  std::vector<unsigned char> data;
  void (*complete)(unsigned long long *barrier, unsigned bytes) noexcept;
  unsigned long long *barrier;
  unsigned issuer;
  int box; // check mode: the executor's id for it
};

/// A TMA store (cp.async.bulk.tensor shared -> global) in flight: it reads
/// its shared source at a moment the schedule chooses between its issue and
/// the wait_group.read that retires its group, and writes global memory
/// then; in check mode `source` must still hold what it held at issue.
struct BulkStore {
  rudnn_emu_tensor_map map;
  int coords[5];
  const unsigned char *source;
  std::vector<unsigned char> atIssue;
  bool done = false;
};

/// A block's TMA boxes in flight, oldest first, the random schedule's
/// draws (xorshift64), and each warpgroup's register budget (setmaxnreg;
/// empty until one is set).
struct BlockAsyncWork {
  std::vector<BulkCopy> boxes;
  uint64_t random;
  std::vector<unsigned> registerBudgets;

  bool coin() {
    random ^= random << 13, random ^= random >> 7, random ^= random << 17;
    return random >> 63;
  }
};

/// Asynchronous work of another kind a device library keeps per CUDA
/// thread (the wgmma groups in flight), ended with the thread.
struct ThreadAsyncWork {
  virtual ~ThreadAsyncWork() = default;
};

/// A CUDA thread's copies: those issued since its last commit, then its
/// committed groups, oldest first; its TMA stores, the same way (bulk
/// groups); its wgmma groups.
struct AsyncCopies {
  std::vector<AsyncCopy> open;
  std::deque<std::vector<AsyncCopy>> groups;
  std::vector<BulkStore> openStores;
  std::deque<std::vector<BulkStore>> storeGroups;
  std::unique_ptr<ThreadAsyncWork> wgmma;
};

/// Writes as the copy engines do: not as a store of any thread, so check
/// mode sees a tile's readers only once their barrier let them read.
__attribute__((no_sanitize("thread"))) inline void
engineWrite(unsigned char *to, const unsigned char *from,
            size_t bytes) noexcept {
  for (size_t i = 0; i < bytes; ++i)
    to[i] = from ? from[i] : 0xff;
}

/// Check mode: an asynchronous engine's event for the executor's shadow
/// (RUDNN_EMU_BOX_ISSUED ...); 0 outside check mode.
inline int reportAsync(int event, const void *address = nullptr,
                       size_t bytes = 0, const void *barrier = nullptr,
                       int box = 0) {
#ifdef RUDNN_EMU_CHECK
  return rudnn_emu_table()->asyncAccess(event, address, bytes, barrier, box);
#else
  (void)event, (void)address, (void)bytes, (void)barrier, (void)box;
  return 0;
#endif
}

inline BlockAsyncWork &blockAsync() {
  rudnn_emu_thread *thread = rudnn_emu_current();
  rudnn_emu_block_async *slot = thread->blockAsync;
  if (!slot->work) {
    slot->work = new BlockAsyncWork{{}, thread->scheduleSeed | 1};
    slot->end = [](void *work) { delete static_cast<BlockAsyncWork *>(work); };
  }
  return *static_cast<BlockAsyncWork *>(slot->work);
}

/// Lands `copy`, taken out of the block's boxes. Never throws (nothing it
/// calls traps: the barrier was checked at issue), so a thread may land
/// boxes as it returns.
inline void land(const BulkCopy &copy) noexcept {
  engineWrite(copy.destination, copy.data.data(), copy.data.size());
  reportAsync(RUDNN_EMU_BOX_LANDED, nullptr, 0, nullptr, copy.box);
  copy.complete(copy.barrier, static_cast<unsigned>(copy.data.size()));
}

/// The running thread signals or waits on an mbarrier, or returns: boxes
/// may land now. Forward, the thread's own, oldest first (as early as the
/// model lets them); random, each with even odds; reverse, none (they land
/// when a thread waits for them).
inline void landAtSignal() noexcept {
  rudnn_emu_thread *thread = rudnn_emu_current();
  if (!thread->blockAsync->work ||
      thread->schedule == RUDNN_EMU_SCHEDULE_REVERSE)
    return;
  BlockAsyncWork &work = blockAsync();
  std::vector<BulkCopy> landing, staying;
  for (BulkCopy &copy : work.boxes) {
    const bool lands = thread->schedule == RUDNN_EMU_SCHEDULE_FORWARD
                           ? copy.issuer == thread->linear
                           : work.coin();
    (lands ? landing : staying).push_back(std::move(copy));
  }
  work.boxes = std::move(staying);
  for (const BulkCopy &copy : landing)
    land(copy);
}

/// A wait found `barrier`'s phase incomplete: the boxes completing on it
/// land (oldest first forward, newest first reverse, in a drawn order
/// random). Whether any did.
inline bool landForWait(const unsigned long long *barrier) noexcept {
  rudnn_emu_thread *thread = rudnn_emu_current();
  if (!thread->blockAsync->work)
    return false;
  BlockAsyncWork &work = blockAsync();
  std::vector<BulkCopy> mine, others;
  for (BulkCopy &copy : work.boxes)
    (copy.barrier == barrier ? mine : others).push_back(std::move(copy));
  work.boxes = std::move(others);
  if (mine.empty())
    return false;
  if (thread->schedule == RUDNN_EMU_SCHEDULE_REVERSE)
    std::reverse(mine.begin(), mine.end());
  else if (thread->schedule == RUDNN_EMU_SCHEDULE_RANDOM)
    for (size_t i = mine.size(); i > 1; --i) {
      work.coin();
      std::swap(mine[i - 1], mine[work.random % i]);
    }
  for (const BulkCopy &copy : mine)
    land(copy);
  return true;
}

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

/// A thread that returns: its TMA stores must have finished reading shared
/// memory, which ends with the block; its boxes may land.
inline void endAsyncWorkAtReturn() {
  if (auto *copies =
          static_cast<AsyncCopies *>(rudnn_emu_current()->asyncCopies))
    if (!copies->openStores.empty() || !copies->storeGroups.empty())
      rudnn_emu_trap("a thread exits with TMA stores still reading shared "
                     "memory: tma_store_commit() and tma_store_wait<0>() "
                     "first");
  landAtSignal();
}

/// Check mode: the copy writes its destination on behalf of the issuing
/// thread, at issue and when retired; another thread reading it before a
/// barrier races.
inline void reportWrite(void *destination, size_t bytes) {
#ifdef RUDNN_EMU_CHECK
  rudnn_emu_table()->memoryAccess(destination, bytes, RUDNN_EMU_WRITE);
#else
  (void)destination, (void)bytes;
#endif
}

/// Check mode: the copy reads its global source at issue, through a memcpy
/// of a length the instrumentation does not see.
inline void reportRead(const void *source, size_t bytes) {
#ifdef RUDNN_EMU_CHECK
  if (bytes)
    rudnn_emu_table()->memoryAccess(source, bytes, RUDNN_EMU_READ);
#else
  (void)source, (void)bytes;
#endif
}

} // namespace rudnn_emu_detail

/// cp.async of `bytes` (4, 8 or 16) of which the first `sourceBytes` come
/// from `source` and the rest are zeros: the source is read now, the
/// destination poisoned until a wait retires the copy's group.
static inline void rudnn_emu_cp_async(void *destination, const void *source,
                                      size_t bytes, size_t sourceBytes) {
  rudnn_emu_detail::AsyncCopy copy{destination, {}, bytes};
  rudnn_emu_detail::reportRead(source, sourceBytes);
  std::memcpy(copy.data, source, sourceBytes);
  std::memset(copy.data + sourceBytes, 0, bytes - sourceBytes);
  std::memset(destination, 0xff, bytes);
  rudnn_emu_detail::reportWrite(destination, bytes);
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
    for (const rudnn_emu_detail::AsyncCopy &copy : copies.groups.front()) {
      std::memcpy(copy.destination, copy.data, copy.bytes);
      rudnn_emu_detail::reportWrite(copy.destination, copy.bytes);
    }
    copies.groups.pop_front();
  }
  RUDNN_EMU_COMPILER_BARRIER();
}

//===----------------------------------------------------------------------===//
// The CUDA pipeline primitives (cuda_pipeline_primitives.h) on cp.async
//===----------------------------------------------------------------------===//

/// Copies `size_and_align` bytes (4, 8 or 16; both pointers aligned to it),
/// the last `zfill` of them zeros, from global to shared memory.
static inline void __pipeline_memcpy_async(void *dst_shared,
                                           const void *src_global,
                                           size_t size_and_align,
                                           size_t zfill = 0) {
  if (size_and_align != 4 && size_and_align != 8 && size_and_align != 16)
    rudnn_emu_trap("__pipeline_memcpy_async: size_and_align must be 4, 8 "
                   "or 16");
  if (zfill > size_and_align)
    rudnn_emu_trap("__pipeline_memcpy_async: zfill exceeds the size");
  if (reinterpret_cast<uintptr_t>(dst_shared) % size_and_align ||
      reinterpret_cast<uintptr_t>(src_global) % size_and_align)
    rudnn_emu_trap("__pipeline_memcpy_async: misaligned address");
  if (!rudnn_emu_table()->isShared(dst_shared, size_and_align))
    rudnn_emu_trap("__pipeline_memcpy_async: destination is not shared "
                   "memory");
  if (rudnn_emu_table()->isShared(src_global, size_and_align))
    rudnn_emu_trap("__pipeline_memcpy_async: source is shared memory, not "
                   "global");
  rudnn_emu_cp_async(dst_shared, src_global, size_and_align,
                     size_and_align - zfill);
}

static inline void __pipeline_commit() { rudnn_emu_cp_async_commit(); }

/// Waits until at most `prior` committed batches are in flight.
static inline void __pipeline_wait_prior(size_t prior) {
  rudnn_emu_cp_async_wait(static_cast<unsigned>(prior));
}

#endif // RUDNN_EMU_ASYNC_H
