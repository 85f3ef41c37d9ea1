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
#include <memory>
#include <vector>

namespace rudnn_emu_detail {

struct AsyncCopy {
  void *destination;
  unsigned char data[16];
  size_t bytes;
};

/// A TMA box (cp.async.bulk.tensor) in flight: its destination holds
/// poison until the issuing thread's next mbarrier operation (or its end)
/// lands it, and then its bytes complete on `barrier`. Its readers must wait
/// on the barrier, as on a GPU.
struct BulkCopy {
  unsigned char *destination;
  std::vector<unsigned char> data;
  void (*complete)(unsigned long long *barrier, unsigned bytes) noexcept;
  unsigned long long *barrier;
};

/// Asynchronous work of another kind a device library keeps per CUDA
/// thread (the wgmma groups in flight), ended with the thread.
struct ThreadAsyncWork {
  virtual ~ThreadAsyncWork() = default;
};

/// A CUDA thread's copies: those issued since its last commit, then its
/// committed groups, oldest first; its TMA boxes in flight; its wgmma
/// groups.
struct AsyncCopies {
  std::vector<AsyncCopy> open;
  std::deque<std::vector<AsyncCopy>> groups;
  std::vector<BulkCopy> bulk;
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

/// Lands the thread's TMA boxes, oldest first. Never throws (nothing it
/// calls traps: the barriers were checked at issue), so the kernel entry
/// that calls it as its thread returns needs no unwinding through the
/// sanitizer hooks' call sites.
inline void landBulkCopies(AsyncCopies &copies) noexcept {
  std::vector<BulkCopy> pending = std::move(copies.bulk);
  copies.bulk.clear();
  for (BulkCopy &copy : pending) {
    engineWrite(copy.destination, copy.data.data(), copy.data.size());
    copy.complete(copy.barrier, static_cast<unsigned>(copy.data.size()));
  }
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

/// A thread that returns lands its TMA boxes (the other threads of its
/// block wait for them).
inline void landBulkCopiesAtReturn() noexcept {
  if (auto *copies =
          static_cast<AsyncCopies *>(rudnn_emu_current()->asyncCopies))
    landBulkCopies(*copies);
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
