//===- SimtExecutor.cpp - CUDA grids on CPU threads and fibers ------------===//

#include "runtime/emulation/SimtExecutor.h"
#include "runtime/emulation/AsyncShadow.h"
#include "runtime/emulation/FiberStacks.h"
#include "runtime/emulation/GuardedMemory.h"

#include "rudnn/errors.h"

#include <boost/context/fiber.hpp>

#include <dlfcn.h>
#include <link.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <sstream>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace rudnn;
using namespace rudnn::runtime;
namespace ctx = boost::context;

namespace {

constexpr unsigned kWarpSize = 32;
/// wgmma and setmaxnreg take the four warps 4i to 4i + 3 together.
constexpr unsigned kWarpgroupSize = 128;
/// Polling: the thread spins on memory (an mbarrier, an atomic, a volatile
/// flag) and runs again only once no barrier or warp operation can
/// complete, so the threads it waits for are never starved by its spinning.
enum class ThreadState {
  Runnable,
  Polling,
  AtBarrier,
  AtNamedBarrier,
  AtWarp,
  AtWarpgroup,
  Trapped,
  Done
};

struct SimtThread {
  rudnn_emu_thread info{};
  ThreadState state = ThreadState::Runnable;
  ctx::fiber fiber;     // the CUDA thread, while suspended
  ctx::fiber scheduler; // the way back, while running
  // Where the thread waits at a barrier or warp operation.
  rudnn_emu_site site{};
  // __syncthreads
  int predicate = 0, mode = 0, barrierResult = 0;
  // Check mode: the __syncwarp calls and named barriers this thread has
  // completed.
  uint32_t syncs = 0;
  // Check mode, from a wgmma_fence to the next wgmma_wait (while
  // info.watchStackWrites): what the thread wrote outside shared and global
  // memory (its registers), as ranges.
  std::vector<std::pair<uintptr_t, uintptr_t>> writtenSinceFence;
  // AddressSanitizer's fake stack of this fiber while it is switched out.
  void *fakeStack = nullptr;
  // warp exchange (and warpgroup exchange: value, all, bytes)
  unsigned mask = 0;
  unsigned present = 0;
  const void *value = nullptr;
  void *all = nullptr;
  size_t bytes = 0;
};

/// One access to a byte of shared memory, for race detection: by which
/// thread, between which barriers (phase), after how many of its
/// __syncwarp calls and named barriers.
struct SharedAccess {
  uint32_t phase = 0;
  uint32_t syncs = 0;
  uint32_t thread = 0;
};

/// A byte's last write and its last two readers since; the TMA box that
/// last wrote it (AsyncShadow's id, 0: a thread did) and its writing
/// thread's async-proxy fences when it wrote.
struct ShadowByte {
  SharedAccess write, reads[2];
  uint32_t box = 0;
  uint32_t writerFences = 0;
};

/// The static or dynamic shared memory of the running block, with its
/// shadow in check mode.
struct SharedRegion {
  const char *name = "";
  unsigned char *begin = nullptr;
  size_t bytes = 0;
  std::vector<ShadowByte> shadow;

  /// The offsets [first, last) of [address, address + count) inside.
  std::pair<size_t, size_t> span(const void *address, size_t count) const {
    auto *p = static_cast<const unsigned char *>(address);
    return {p < begin ? 0 : size_t(p - begin),
            std::min(bytes, size_t(p + count - begin))};
  }
  bool contains(const void *address, size_t count) const {
    auto *p = static_cast<const unsigned char *>(address);
    return begin && p >= begin && count <= bytes &&
           size_t(p - begin) <= bytes - count;
  }
};

/// Polls without any thread of the block writing memory, arriving at a
/// barrier or warp operation, or ending, before the watchdog reports the
/// block (a spin-wait that cannot finish).
constexpr uint64_t kWatchdogPolls = uint64_t(1) << 22;

/// The most blocks of a cooperative grid, each on its own OS thread.
constexpr uint64_t kMaxCooperativeBlocks = 1024;

/// The grid barrier of a cooperative launch: every block has its own OS
/// thread, and one thread of each waits here for the others.
struct GridBarrier {
  enum class Outcome {
    Released, // every block arrived
    Aborted,  // a block failed: the others leave to fail too
    Deserted  // the blocks not waiting have ended: none will come
  };
  std::mutex mutex;
  std::condition_variable released;
  uint64_t blocks = 0, arrived = 0, generation = 0, finished = 0;
  bool aborted = false, deserted = false;

  Outcome arriveAndWait() {
    std::unique_lock<std::mutex> lock(mutex);
    const uint64_t mine = generation;
    if (++arrived == blocks) {
      arrived = 0;
      ++generation;
      released.notify_all();
      return Outcome::Released;
    }
    desertedIfAllOthersEnded();
    released.wait(lock,
                  [&] { return generation != mine || aborted || deserted; });
    return generation != mine ? Outcome::Released
           : deserted         ? Outcome::Deserted
                              : Outcome::Aborted;
  }
  /// A block ended without failing.
  void finish() {
    std::lock_guard<std::mutex> lock(mutex);
    ++finished;
    desertedIfAllOthersEnded();
  }
  void abort() {
    std::lock_guard<std::mutex> lock(mutex);
    aborted = true;
    released.notify_all();
  }

private:
  /// On a GPU, blocks waiting for blocks that have exited wait forever.
  void desertedIfAllOthersEnded() {
    if (arrived > 0 && arrived + finished == blocks) {
      deserted = true;
      released.notify_all();
    }
  }
};

/// One of a block's named barriers (bar.sync / bar.arrive with an id and a
/// thread count): the threads arrived in its current generation.
struct NamedBarrier {
  unsigned expected = 0;
  struct Arrival {
    uint32_t thread;
    bool waits;
    rudnn_emu_site site;
  };
  std::vector<Arrival> arrivals;
};

/// Named barrier ids: 0 is __syncthreads'.
constexpr unsigned kNamedBarriers = 16;

/// One block in flight on one OS thread.
struct BlockRun {
  const EmulatedKernel *kernel = nullptr;
  void **args = nullptr;
  bool check = false;
  std::vector<SimtThread> threads;
  std::vector<ctx::stack_context> stacks;
  std::string error;
  /// Set when the block failed: suspended threads are resumed only to
  /// unwind their stacks.
  bool aborting = false;
  SharedRegion staticShared, dynamicShared;
  /// Check mode: the barrier interval (counts up over all blocks of the OS
  /// thread, so older shadow entries are stale without clearing), and for
  /// every warp and pair of lanes (a, b) a's syncs after the latest
  /// __syncwarp both took part in.
  uint32_t phase = 0;
  std::vector<uint32_t> jointWarpSyncs;
  /// Check mode, once a named barrier completes in the block: for every
  /// pair (b, a), a's syncs after the latest named barrier that ordered a's
  /// earlier accesses before b's later ones (both arrived, b waited).
  std::vector<uint32_t> jointBarrierSyncs;
  NamedBarrier namedBarriers[kNamedBarriers];
  /// Check mode: the asynchronous engines' side of the shadow, and the
  /// barrier interval the block started in.
  AsyncShadow asyncShadow;
  uint32_t firstPhase = 0;
  /// Device code's asynchronous work of the block (rudnn_emu_block_async).
  rudnn_emu_block_async async{};
  uint64_t idlePolls = 0;
  /// Check mode under a random schedule: the running thread is switched out
  /// at some shared-memory accesses too, drawn from this state.
  bool switchAtAccesses = false;
  uint64_t switchState = 0;
  /// For the watchdog: when the running thread was resumed (steady-clock
  /// nanoseconds; 0 while the scheduler runs) and which it is.
  std::atomic<int64_t> resumedAt{0};
  std::atomic<const SimtThread *> running{nullptr};
  rudnn_emu_dim3 blockIdx{};
  /// The grid's barrier in a cooperative launch, else null.
  GridBarrier *grid = nullptr;
  /// Check mode: the guarded allocations when the launch started (null if
  /// none), which the kernel's global accesses must stay inside.
  const GuardedAllocations *globals = nullptr;
  /// Check mode: the bounds window of the latest access outside shared
  /// memory and the thread's stack, where most such accesses fall again.
  BoundsWindow recentWindow;
};

/// Thrown out of a suspended thread of an aborting block.
struct BlockAborted {};

thread_local BlockRun *currentBlock = nullptr;
thread_local SimtThread *currentThread = nullptr;

/// AddressSanitizer's entry points, when the process has it (an ASan build,
/// or check mode with the runtime preloaded). It must be told about every
/// stack switch, or it takes the fibers' stacks for overflows; and its
/// reports get a line naming the emulated kernel, block and thread.
struct AsanHooks {
  void (*startSwitch)(void **fakeStackSave, const void *bottom,
                      size_t size) = nullptr;
  void (*finishSwitch)(void *fakeStackSave, const void **bottomOld,
                       size_t *sizeOld) = nullptr;

  static const AsanHooks &get() {
    static const AsanHooks hooks = [] {
      AsanHooks found;
      found.startSwitch = reinterpret_cast<decltype(found.startSwitch)>(
          ::dlsym(RTLD_DEFAULT, "__sanitizer_start_switch_fiber"));
      found.finishSwitch = reinterpret_cast<decltype(found.finishSwitch)>(
          ::dlsym(RTLD_DEFAULT, "__sanitizer_finish_switch_fiber"));
      if (!found.startSwitch || !found.finishSwitch)
        found.startSwitch = nullptr, found.finishSwitch = nullptr;

      using Callback = void (*)(const char *);
      if (auto setCallback = reinterpret_cast<void (*)(Callback)>(
              ::dlsym(RTLD_DEFAULT, "__asan_set_error_report_callback")))
        setCallback(reportLocation);
      return found;
    }();
    return hooks;
  }

  static void reportLocation(const char *);
};

thread_local void *schedulerFakeStack = nullptr;
thread_local const void *schedulerStackBottom = nullptr;
thread_local size_t schedulerStackSize = 0;

void AsanHooks::reportLocation(const char *) {
  if (!currentBlock || !currentThread)
    return;
  const rudnn_emu_thread &info = currentThread->info;
  std::fprintf(stderr,
               "rudnn: the report above comes from emulated kernel '%s', "
               "block (%u,%u,%u), thread (%u,%u,%u)\n",
               currentBlock->kernel->name.c_str(), info.blockIdx.x,
               info.blockIdx.y, info.blockIdx.z, info.threadIdx.x,
               info.threadIdx.y, info.threadIdx.z);
}

/// The scheduler is about to run `thread`'s fiber.
void switchingToFiber(const BlockRun &block, const SimtThread &thread) {
  if (const AsanHooks &asan = AsanHooks::get(); asan.startSwitch) {
    const ctx::stack_context &stack = block.stacks[thread.info.linear];
    asan.startSwitch(&schedulerFakeStack,
                     static_cast<char *>(stack.sp) - stack.size, stack.size);
  }
}

/// The scheduler runs again.
void backInScheduler() {
  if (const AsanHooks &asan = AsanHooks::get(); asan.finishSwitch)
    asan.finishSwitch(schedulerFakeStack, nullptr, nullptr);
}

/// `thread`'s fiber runs (first time, or after a suspension).
void enteredFiber(SimtThread &thread) {
  if (const AsanHooks &asan = AsanHooks::get(); asan.finishSwitch)
    asan.finishSwitch(thread.fakeStack, &schedulerStackBottom,
                      &schedulerStackSize);
}

/// `thread`'s fiber is about to give control back; `finished` when it never
/// resumes.
void leavingFiber(SimtThread &thread, bool finished) {
  if (const AsanHooks &asan = AsanHooks::get(); asan.startSwitch)
    asan.startSwitch(finished ? nullptr : &thread.fakeStack,
                     schedulerStackBottom, schedulerStackSize);
}

/// Returns control to the block's scheduler until it resumes this thread;
/// throws BlockAborted when the block failed meanwhile.
void suspend() {
  SimtThread *self = currentThread;
  leavingFiber(*self, false);
  self->scheduler = std::move(self->scheduler).resume();
  enteredFiber(*self);
  if (currentBlock->aborting)
    throw BlockAborted{};
}

std::string describeThread(const SimtThread &thread) {
  const rudnn_emu_dim3 &t = thread.info.threadIdx;
  return "thread (" + std::to_string(t.x) + "," + std::to_string(t.y) + "," +
         std::to_string(t.z) + ")";
}

std::string describeSite(const rudnn_emu_site &site) {
  std::string file = site.file ? site.file : "?";
  if (size_t slash = file.rfind('/'); slash != std::string::npos)
    file = file.substr(slash + 1);
  return std::string(site.operation ? site.operation : "?") + " (" + file +
         ":" + std::to_string(site.line) + ")";
}

bool sameOperation(const rudnn_emu_site &a, const rudnn_emu_site &b) {
  return std::strcmp(a.operation, b.operation) == 0;
}

bool sameSite(const rudnn_emu_site &a, const rudnn_emu_site &b) {
  return sameOperation(a, b) && a.line == b.line &&
         std::strcmp(a.file, b.file) == 0;
}

/// Fails the block with `message` (the running thread named by the caller)
/// and unwinds the running thread.
[[noreturn]] void failRunningThread(const std::string &message) {
  SimtThread *self = currentThread;
  currentBlock->error = message;
  self->state = ThreadState::Trapped;
  suspend(); // resumed only to unwind: throws BlockAborted
  throw BlockAborted{};
}

int hostSyncthreads(int predicate, int mode, const rudnn_emu_site *site) {
  SimtThread *self = currentThread;
  self->state = ThreadState::AtBarrier;
  self->predicate = predicate;
  self->mode = mode;
  self->site = *site;
  currentBlock->idlePolls = 0;
  suspend();
  return self->barrierResult;
}

/// The running thread contributes `bytes` at `value` to an exchange of
/// kind `state` (a warp's or a warpgroup's) and waits until the scheduler
/// has filled `all`.
void waitAtExchange(ThreadState state, const void *value, void *all,
                    size_t bytes, const rudnn_emu_site *site) {
  SimtThread *self = currentThread;
  self->state = state;
  self->value = value;
  self->all = all;
  self->bytes = bytes;
  self->site = *site;
  currentBlock->idlePolls = 0;
  suspend();
}

unsigned hostWarpExchange(unsigned mask, const void *value, void *all,
                          size_t bytes, const rudnn_emu_site *site) {
  currentThread->mask = mask;
  waitAtExchange(ThreadState::AtWarp, value, all, bytes, site);
  return currentThread->present;
}

/// Releases named barrier `id`, all its arrivals in: its waiters run again,
/// and in check mode every arrival's earlier accesses are ordered before
/// the waiters' later ones. bar.sync and bar.arrive are .aligned: a warp
/// takes part whole (its live lanes), or the barrier traps.
void completeNamedBarrier(BlockRun &block, unsigned id) {
  NamedBarrier &barrier = block.namedBarriers[id];
  std::vector<NamedBarrier::Arrival> arrivals;
  arrivals.swap(barrier.arrivals);
  std::vector<char> arrived(block.threads.size(), 0);
  for (const NamedBarrier::Arrival &arrival : arrivals)
    arrived[arrival.thread] = 1;
  for (const NamedBarrier::Arrival &arrival : arrivals) {
    const size_t first = arrival.thread / kWarpSize * kWarpSize;
    for (size_t lane = first;
         lane < std::min(first + kWarpSize, block.threads.size()); ++lane)
      if (!arrived[lane] && block.threads[lane].state != ThreadState::Done)
        failRunningThread(
            describeThread(*currentThread) + ": named barrier " +
            std::to_string(id) + " completes with part of warp " +
            std::to_string(first / kWarpSize) + " (" +
            describeThread(block.threads[lane]) +
            " did not arrive): bar.sync and bar.arrive take whole warps");
  }
  for (const NamedBarrier::Arrival &arrival : arrivals)
    ++block.threads[arrival.thread].syncs;
  const size_t threads = block.threads.size();
  if (block.check && block.jointBarrierSyncs.empty())
    block.jointBarrierSyncs.assign(threads * threads, 0);
  for (const NamedBarrier::Arrival &waiter : arrivals) {
    if (!waiter.waits)
      continue;
    if (block.check)
      for (const NamedBarrier::Arrival &arrival : arrivals)
        block.jointBarrierSyncs[waiter.thread * threads + arrival.thread] =
            block.threads[arrival.thread].syncs;
    SimtThread &thread = block.threads[waiter.thread];
    if (thread.state == ThreadState::AtNamedBarrier)
      thread.state = ThreadState::Runnable;
  }
  block.idlePolls = 0;
}

void hostNamedBarrier(unsigned id, unsigned threads, int wait,
                      const rudnn_emu_site *site) {
  BlockRun *block = currentBlock;
  SimtThread *self = currentThread;
  // Built only for a report: this runs at every arrival.
  auto who = [&] {
    return describeThread(*self) + ": " + describeSite(*site) +
           ": named barrier " + std::to_string(id);
  };
  if (id == 0 || id >= kNamedBarriers)
    failRunningThread(who() + ": ids are 1 to 15 (0 is __syncthreads')");
  const size_t blockThreads = block->threads.size();
  const size_t warps = (blockThreads + kWarpSize - 1) / kWarpSize;
  if (threads == 0 || threads % kWarpSize != 0 || threads > warps * kWarpSize)
    failRunningThread(who() + " of " + std::to_string(threads) +
                      " threads: the count must be a multiple of 32, at most "
                      "the block's warps' threads (" +
                      std::to_string(warps * kWarpSize) + ")");
  NamedBarrier &barrier = block->namedBarriers[id];
  if (barrier.arrivals.empty())
    barrier.expected = threads;
  else if (barrier.expected != threads)
    failRunningThread(who() + " expects " + std::to_string(threads) +
                      " threads, but the threads already arrived expect " +
                      std::to_string(barrier.expected));
  barrier.arrivals.push_back({self->info.linear, wait != 0, *site});
  self->site = *site;
  block->idlePolls = 0;
  if (barrier.arrivals.size() == barrier.expected) {
    completeNamedBarrier(*block, id);
    return;
  }
  if (!wait)
    return;
  self->state = ThreadState::AtNamedBarrier;
  suspend();
}

void hostWarpgroupExchange(const void *value, void *all, size_t bytes,
                           const rudnn_emu_site *site) {
  SimtThread *self = currentThread;
  if (currentBlock->threads.size() % kWarpgroupSize != 0)
    failRunningThread(describeThread(*self) + ": " + describeSite(*site) +
                      " in a block of " +
                      std::to_string(currentBlock->threads.size()) +
                      " threads: a warpgroup is 128 threads, warps 4i to "
                      "4i + 3, so the block must be whole warpgroups");
  waitAtExchange(ThreadState::AtWarpgroup, value, all, bytes, site);
}

void hostTrap(const char *message) {
  failRunningThread(describeThread(*currentThread) + ": " + message);
}

/// Whether `earlier`'s access is ordered before whatever `thread` does now
/// without a barrier between them: the same thread, lanes of one warp
/// that have both taken part in a __syncwarp since, or threads a named
/// barrier has ordered since (the earlier one arrived, this one waited).
bool ordered(const BlockRun &block, const SharedAccess &earlier,
             const SimtThread &thread) {
  if (earlier.thread == thread.info.linear)
    return true;
  if (!block.jointBarrierSyncs.empty() &&
      block.jointBarrierSyncs[size_t(thread.info.linear) *
                                  block.threads.size() +
                              earlier.thread] > earlier.syncs)
    return true;
  if (earlier.thread / kWarpSize != thread.info.warp)
    return false;
  size_t pair =
      (size_t(thread.info.warp) * kWarpSize + earlier.thread % kWarpSize) *
          kWarpSize +
      thread.info.lane;
  return block.jointWarpSyncs[pair] > earlier.syncs;
}

[[noreturn]] void reportRace(const BlockRun &block, const SharedRegion &region,
                             size_t offset, uint32_t other,
                             const char *otherDid, const char *thisDid) {
  std::ostringstream text;
  text << "data race on " << region.name << " shared memory at offset 0x"
       << std::hex << offset << " (address "
       << static_cast<const void *>(region.begin + offset) << std::dec
       << "): " << describeThread(block.threads[other]) << " " << otherDid
       << " it and " << describeThread(*currentThread) << " " << thisDid
       << " it with no barrier between";
  failRunningThread(text.str());
}

/// Check mode: `gap`, around `address`, holds no allocation; the part of it
/// holding neither the block's shared memory nor `thread`'s stack is memory
/// the executor does not watch, whose accesses the hooks keep to themselves.
void unwatch(const BlockRun &block, SimtThread &thread, uintptr_t address,
             BoundsWindow gap) {
  auto exclude = [&](uintptr_t begin, uintptr_t end) {
    if (begin == end)
      return;
    if (end <= address)
      gap.begin = std::max(gap.begin, end);
    else if (begin > address)
      gap.end = std::min(gap.end, begin);
  };
  for (const SharedRegion *region : {&block.dynamicShared, &block.staticShared})
    if (region->begin)
      exclude(reinterpret_cast<uintptr_t>(region->begin),
              reinterpret_cast<uintptr_t>(region->begin) + region->bytes);
  exclude(thread.info.stackBegin, thread.info.stackEnd);
  thread.info.unwatchedBegin = gap.begin;
  thread.info.unwatchedEnd = gap.end;
}

/// Check mode: an access in the guard region of an allocation, or
/// reaching past one of its ends, traps. Accesses elsewhere (stacks, shared
/// memory, the kernel object's data, host memory not from allocateGuarded)
/// are not global memory this check knows of.
void checkGlobalBounds(BlockRun &block, SimtThread &thread, const void *address,
                       size_t bytes, int kind) {
  const GuardedAllocations &globals = *block.globals;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(address);
  if (block.recentWindow.holds(begin, bytes))
    return;
  // An access no window holds starts or ends in a guard region, or straddles
  // an allocation's end.
  if (const BoundsWindow window = boundsWindowOf(globals, begin);
      window.holds(begin, bytes)) {
    block.recentWindow = window;
    if (!window.allocation)
      unwatch(block, thread, begin, window);
    return;
  }
  const ptrdiff_t index = findOutOfBounds(globals, begin, bytes);
  if (index < 0)
    return;
  char where[256];
  describeOutOfBounds(where, sizeof where, globals, index, begin, bytes);
  std::ostringstream text;
  text << describeThread(thread) << ": out-of-bounds global memory "
       << (kind == RUDNN_EMU_WRITE    ? "write"
           : kind == RUDNN_EMU_ATOMIC ? "atomic"
                                      : "read")
       << " of " << bytes << " byte" << (bytes == 1 ? "" : "s") << " at "
       << address << ": " << where;
  failRunningThread(text.str());
}

/// The block's shared region [address, address + bytes) overlaps, or null.
SharedRegion *sharedRegionOf(BlockRun &block, const void *address,
                             size_t bytes) {
  auto *p = static_cast<const unsigned char *>(address);
  for (SharedRegion *region : {&block.dynamicShared, &block.staticShared})
    if (region->begin && p + bytes > region->begin &&
        p < region->begin + region->bytes)
      return region;
  return nullptr;
}

[[noreturn]] void reportAsyncConflict(const SharedRegion &region, size_t offset,
                                      const char *access,
                                      const std::string &why) {
  std::ostringstream text;
  text << describeThread(*currentThread) << " " << access << " " << region.name
       << " shared memory at offset 0x" << std::hex << offset << std::dec
       << ": " << why;
  failRunningThread(text.str());
}

/// Whether `address` is on `thread`'s own stack: where its registers live
/// in emulation.
bool onOwnStack(const SimtThread &thread, const void *address) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(address);
  return at >= thread.info.stackBegin && at < thread.info.stackEnd;
}

/// Check mode: a write between a wgmma_fence and the next wait to the
/// thread's stack (its registers).
void noteRegisterWrite(SimtThread &thread, const void *address, size_t bytes) {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(address);
  auto &written = thread.writtenSinceFence;
  if (!written.empty() && written.back().second == begin) {
    written.back().second += bytes; // the common case: consecutive stores
    return;
  }
  if (written.size() >= 4096) { // the same bytes again and again: merge
    std::sort(written.begin(), written.end());
    size_t kept = 0;
    for (const auto &range : written)
      if (kept && range.first <= written[kept - 1].second)
        written[kept - 1].second =
            std::max(written[kept - 1].second, range.second);
      else
        written[kept++] = range;
    written.resize(kept);
    if (kept > 3072) // still too many apart: one envelope, merged rarely
      written = {{written.front().first, written.back().second}};
  }
  written.emplace_back(begin, begin + bytes);
}

/// Check mode: every load, store and atomic of the kernel. Global accesses
/// are checked against the launch's allocations; loads and stores of shared
/// memory against the shadow: two threads touching a byte between the same
/// barriers, one of them writing, race. Shared memory and the thread's stack
/// are tested first: they are most accesses, and lie in no allocation.
void hostMemoryAccess(const void *address, size_t bytes, int kind) {
  BlockRun *block = currentBlock;
  SimtThread *self = currentThread;
  if (!block || !self || !block->check || block->aborting)
    return;
  SharedRegion *region = sharedRegionOf(*block, address, bytes);
  if (!region) {
    if (onOwnStack(*self, address)) {
      if (self->info.watchStackWrites && kind == RUDNN_EMU_WRITE)
        noteRegisterWrite(*self, address, bytes);
    } else if (block->globals) {
      checkGlobalBounds(*block, *self, address, bytes, kind);
    } else {
      unwatch(*block, *self, reinterpret_cast<uintptr_t>(address),
              {0, UINTPTR_MAX});
    }
    return;
  }
  if (kind == RUDNN_EMU_ATOMIC) // atomics never race with each other
    return;
  if (block->switchAtAccesses) {
    // xorshift64: one access in eight lets the other threads run first.
    uint64_t &x = block->switchState;
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    if (x % 8 == 0)
      suspend();
  }
  const auto [first, last] = region->span(address, bytes);
  const SharedAccess now{block->phase, self->syncs, self->info.linear};
  const AsyncShadow &engines = block->asyncShadow;
  for (size_t offset = first; offset < last; ++offset) {
    ShadowByte &cell = region->shadow[offset];
    if (engines.current(cell.box) &&
        !engines.allowed(cell.box, self->info.linear, block->phase))
      reportAsyncConflict(*region, offset,
                          kind == RUDNN_EMU_WRITE ? "writes" : "reads",
                          engines.whyNot(cell.box));
    bool written = cell.write.phase == block->phase;
    if (written && !ordered(*block, cell.write, *self))
      reportRace(*block, *region, offset, cell.write.thread, "wrote",
                 kind == RUDNN_EMU_WRITE ? "wrote" : "read");
    if (kind == RUDNN_EMU_WRITE) {
      for (const SharedAccess &read : cell.reads)
        if (read.phase == block->phase && !ordered(*block, read, *self))
          reportRace(*block, *region, offset, read.thread, "read", "wrote");
      cell.write = now;
      cell.reads[0].phase = cell.reads[1].phase = 0;
      cell.box = 0;
      cell.writerFences = engines.fences(now.thread);
    } else if (cell.reads[0].phase == block->phase &&
               cell.reads[0].thread == now.thread) {
      cell.reads[0] = now;
    } else {
      cell.reads[1] = cell.reads[0];
      cell.reads[0] = now;
    }
  }
}

/// Check mode: for every thread u, the syncs of u before which u's accesses
/// are ordered before what `thread` does now (its own: all of them).
std::vector<uint32_t> knownBy(const BlockRun &block, const SimtThread &thread) {
  const size_t threads = block.threads.size();
  const size_t self = thread.info.linear;
  std::vector<uint32_t> known(threads, 0);
  if (!block.jointBarrierSyncs.empty())
    std::copy_n(block.jointBarrierSyncs.begin() + self * threads, threads,
                known.begin());
  const size_t first = self / kWarpSize * kWarpSize;
  for (size_t u = first; u < std::min(first + kWarpSize, threads); ++u)
    known[u] = std::max(known[u],
                        block.jointWarpSyncs[u * kWarpSize + thread.info.lane]);
  known[self] = thread.syncs; // its accesses before this arrival
  return known;
}

/// Check mode: an async-proxy operation the running thread issued reads
/// byte `offset` of `region`: a box there must be landed and waited for, a
/// thread's write ordered before the issue and fenced by its writer.
void checkAsyncRead(BlockRun &block, const SharedRegion &region,
                    size_t offset) {
  const SimtThread &self = *currentThread;
  const ShadowByte &cell = region.shadow[offset];
  const AsyncShadow &engines = block.asyncShadow;
  if (engines.current(cell.box)) {
    if (!engines.allowed(cell.box, self.info.linear, block.phase))
      reportAsyncConflict(region, offset,
                          "issues an async-proxy read (wgmma, TMA store) of",
                          engines.whyNot(cell.box));
    return;
  }
  const SharedAccess &write = cell.write;
  if (write.phase < block.firstPhase)
    return; // never written in this block
  if (write.phase == block.phase && !ordered(block, write, self))
    reportRace(block, region, offset, write.thread, "wrote",
               "issued an async-proxy read of");
  if (cell.writerFences == engines.fences(write.thread))
    reportAsyncConflict(
        region, offset, "issues an async-proxy read (wgmma, TMA store) of",
        describeThread(block.threads[write.thread]) +
            " wrote it through the generic proxy and has executed no "
            "fence.proxy.async since (fence_proxy_async_shared)");
}

int hostAsyncAccess(int event, const void *address, size_t bytes,
                    const void *barrier, int box) {
  BlockRun *block = currentBlock;
  SimtThread *self = currentThread;
  if (!block || !self || !block->check || block->aborting)
    return 0;
  AsyncShadow &engines = block->asyncShadow;
  const uint32_t thread = self->info.linear;
  switch (event) {
  case RUDNN_EMU_BOX_ISSUED: {
    const uint32_t id = engines.issue(barrier, thread);
    if (SharedRegion *region = sharedRegionOf(*block, address, bytes)) {
      const auto [first, last] = region->span(address, bytes);
      for (size_t offset = first; offset < last; ++offset) {
        ShadowByte &cell = region->shadow[offset];
        if (engines.inFlight(cell.box))
          reportAsyncConflict(*region, offset, "issues a TMA box onto",
                              engines.whyNot(cell.box));
        // The box writes the bytes: after every access the issue is not
        // ordered after, it races.
        if (cell.write.phase == block->phase &&
            !ordered(*block, cell.write, *self))
          reportRace(*block, *region, offset, cell.write.thread, "wrote",
                     "issued a TMA box onto");
        for (const SharedAccess &read : cell.reads)
          if (read.phase == block->phase && !ordered(*block, read, *self))
            reportRace(*block, *region, offset, read.thread, "read",
                       "issued a TMA box onto");
        cell.box = id;
        cell.write.phase = 0;
        cell.reads[0].phase = cell.reads[1].phase = 0;
      }
    }
    return static_cast<int>(id);
  }
  case RUDNN_EMU_BOX_LANDED:
    engines.land(static_cast<uint32_t>(box), block->phase);
    return 0;
  case RUDNN_EMU_BARRIER_ACQUIRED: {
    engines.acquire(thread, barrier, block->phase);
    const std::vector<uint32_t> &arrived = engines.arrivals(barrier);
    const size_t threads = block->threads.size();
    if (block->jointBarrierSyncs.empty())
      block->jointBarrierSyncs.assign(threads * threads, 0);
    for (size_t other = 0; other < threads; ++other) {
      uint32_t &joint = block->jointBarrierSyncs[thread * threads + other];
      joint = std::max(joint, arrived[other]);
    }
    return 0;
  }
  case RUDNN_EMU_BARRIER_ARRIVED:
    // A release: the thread's accesses so far, and those ordered before
    // them, come before what a waiter does after seeing the phase complete.
    ++self->syncs;
    engines.arrive(barrier, knownBy(*block, *self));
    return 0;
  case RUDNN_EMU_PROXY_FENCE:
    engines.fence(thread);
    return 0;
  case RUDNN_EMU_WGMMA_FENCE:
    self->info.watchStackWrites = 1;
    self->writtenSinceFence.clear();
    return 0;
  case RUDNN_EMU_WGMMA_WAIT:
    self->info.watchStackWrites = 0;
    self->writtenSinceFence.clear();
    return 0;
  case RUDNN_EMU_WGMMA_READS: {
    const uintptr_t begin = reinterpret_cast<uintptr_t>(address),
                    end = begin + bytes;
    for (const auto &[first, last] : self->writtenSinceFence)
      if (first < end && begin < last)
        failRunningThread(
            describeThread(*self) +
            ": wgmma reads registers (accumulators or an A fragment) the "
            "thread wrote after its wgmma_fence: write them first, then "
            "fence (ptxas would serialize the wgmma, warning C7519)");
    return 0;
  }
  case RUDNN_EMU_ASYNC_READ:
    if (SharedRegion *region = sharedRegionOf(*block, address, bytes)) {
      const auto [first, last] = region->span(address, bytes);
      for (size_t offset = first; offset < last; ++offset)
        checkAsyncRead(*block, *region, offset);
    }
    return 0;
  }
  failRunningThread(describeThread(*self) + ": unknown asynchronous event " +
                    std::to_string(event));
}

int hostIsShared(const void *address, size_t bytes) {
  BlockRun *block = currentBlock;
  return block && (block->dynamicShared.contains(address, bytes) ||
                   block->staticShared.contains(address, bytes));
}

/// A thread polled memory: the others run first. Polls that change nothing,
/// with no thread arriving anywhere, are counted; too many and the block is
/// reported as spinning forever.
void hostPoll(int changed) {
  BlockRun *block = currentBlock;
  SimtThread *self = currentThread;
  if (!block || !self)
    return;
  if (changed)
    block->idlePolls = 0;
  else if (++block->idlePolls > kWatchdogPolls)
    failRunningThread(
        describeThread(*self) +
        ": watchdog: the block's threads have polled "
        "memory " +
        std::to_string(kWatchdogPolls) +
        " times (atomics, volatile reads) with none writing, arriving at a "
        "barrier or exiting: a spin-wait that can never finish");
  self->state = ThreadState::Polling;
  suspend();
}

int64_t steadyNanoseconds() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void hostGridSync() {
  BlockRun *block = currentBlock;
  if (!block->grid)
    failRunningThread(describeThread(*currentThread) +
                      ": a grid barrier in a launch that is not cooperative");
  // Waiting for other blocks is no spin: the watchdog looks away.
  block->resumedAt = 0;
  const GridBarrier::Outcome outcome = block->grid->arriveAndWait();
  block->resumedAt = steadyNanoseconds();
  if (outcome == GridBarrier::Outcome::Aborted)
    failRunningThread(describeThread(*currentThread) +
                      ": left the grid barrier, another block failed");
  if (outcome == GridBarrier::Outcome::Deserted)
    failRunningThread(describeThread(*currentThread) +
                      ": deadlock: waits at a grid barrier that other blocks "
                      "ended without reaching");
}

const rudnn_emu_host kHost = {RUDNN_EMU_ABI_VERSION,
                              hostSyncthreads,
                              hostWarpExchange,
                              hostTrap,
                              hostMemoryAccess,
                              hostIsShared,
                              hostPoll,
                              hostGridSync,
                              hostNamedBarrier,
                              hostWarpgroupExchange,
                              hostAsyncAccess};

void resume(BlockRun &block, SimtThread &thread) {
  currentThread = &thread;
  block.kernel->setCurrent(&thread.info);
  block.running = &thread;
  block.resumedAt = steadyNanoseconds();
  switchingToFiber(block, thread);
  thread.fiber = std::move(thread.fiber).resume();
  backInScheduler();
  block.resumedAt = 0;
  currentThread = nullptr;
}

/// "lanes 0x0000ffff at __shfl_sync (k.cu:12), lanes 0xffff0000 at ...":
/// the threads of `members` grouped by where they wait.
std::string describeSites(const BlockRun &block,
                          const std::vector<size_t> &members, bool lanes) {
  std::vector<std::pair<rudnn_emu_site, std::vector<size_t>>> groups;
  for (size_t index : members) {
    const rudnn_emu_site &site = block.threads[index].site;
    auto group = std::find_if(groups.begin(), groups.end(),
                              [&](auto &g) { return sameSite(g.first, site); });
    if (group == groups.end())
      groups.push_back({site, {index}});
    else
      group->second.push_back(index);
  }
  std::ostringstream text;
  for (size_t g = 0; g < groups.size(); ++g) {
    const std::vector<size_t> &threads = groups[g].second;
    text << (g ? ", " : "");
    if (lanes) {
      unsigned mask = 0;
      for (size_t index : threads)
        mask |= 1u << (index % kWarpSize);
      char hex[16];
      std::snprintf(hex, sizeof hex, "0x%08x", mask);
      text << "lanes " << hex;
    } else {
      text << threads.size() << " thread" << (threads.size() > 1 ? "s" : "")
           << " (first " << describeThread(block.threads[threads[0]]) << ")";
    }
    text << " at " << describeSite(groups[g].first);
  }
  return text.str();
}

/// Releases a barrier every live thread waits at. False if none can be;
/// sets block.error when the threads wait at different barriers (check
/// mode: different call sites; always: different kinds of barrier).
bool completeBarrier(BlockRun &block) {
  int live = 0, waiting = 0, count = 0;
  const SimtThread *first = nullptr;
  bool matching = true;
  for (const SimtThread &thread : block.threads) {
    if (thread.state == ThreadState::Done)
      continue;
    ++live;
    if (thread.state == ThreadState::AtBarrier) {
      ++waiting;
      count += thread.predicate != 0;
      first = first ? first : &thread;
      matching = matching && sameOperation(thread.site, first->site) &&
                 (!block.check || sameSite(thread.site, first->site));
    }
  }
  // Threads that have exited take no part, as on the GPU.
  if (waiting == 0 || waiting != live)
    return false;
  if (!matching) {
    std::vector<size_t> members;
    for (size_t i = 0; i < block.threads.size(); ++i)
      if (block.threads[i].state == ThreadState::AtBarrier)
        members.push_back(i);
    block.error = "threads meet at different barriers (undefined in CUDA): " +
                  describeSites(block, members, /*lanes=*/false);
    return true;
  }
  for (SimtThread &thread : block.threads) {
    if (thread.state == ThreadState::Done)
      continue;
    switch (thread.mode) {
    case RUDNN_EMU_SYNC_COUNT:
      thread.barrierResult = count;
      break;
    case RUDNN_EMU_SYNC_AND:
      thread.barrierResult = count == live;
      break;
    case RUDNN_EMU_SYNC_OR:
      thread.barrierResult = count > 0;
      break;
    default:
      thread.barrierResult = 0;
    }
    thread.state = ThreadState::Runnable;
  }
  ++block.phase; // everything before the barrier is ordered before it
  block.idlePolls = 0;
  return true;
}

/// Check mode: the lanes of `present` in the warp starting at `first` have
/// completed a __syncwarp together; their earlier accesses are ordered
/// before each other's later ones.
void recordWarpSync(BlockRun &block, size_t first, unsigned present) {
  for (unsigned a = 0; a < kWarpSize; ++a)
    if (present >> a & 1)
      ++block.threads[first + a].syncs;
  for (unsigned a = 0; a < kWarpSize; ++a) {
    if (!(present >> a & 1))
      continue;
    for (unsigned b = 0; b < kWarpSize; ++b)
      if (present >> b & 1)
        block.jointWarpSyncs[(first + a) * kWarpSize + b] =
            block.threads[first + a].syncs;
  }
}

/// Completes every warp operation whose participants have all arrived with
/// the same mask. As in CUDA, lanes of the mask that have exited (or do not
/// exist, in a partial last warp) take no part. Lanes meeting at different
/// operations (check mode: call sites) set block.error. False if none could
/// be completed.
bool completeWarpOps(BlockRun &block) {
  bool progress = false;
  std::vector<SimtThread> &threads = block.threads;
  for (size_t first = 0; first < threads.size(); first += kWarpSize) {
    for (unsigned lane = 0; lane < kWarpSize && first + lane < threads.size();
         ++lane) {
      SimtThread &leader = threads[first + lane];
      if (leader.state != ThreadState::AtWarp)
        continue;
      unsigned mask = leader.mask;
      bool ready = true, matching = true;
      unsigned present = 0; // the lanes of the mask that take part
      for (unsigned other = 0; other < kWarpSize && ready; ++other) {
        if (!(mask >> other & 1))
          continue;
        size_t index = first + other;
        if (index >= threads.size() ||
            threads[index].state == ThreadState::Done)
          continue;
        const SimtThread &peer = threads[index];
        ready = peer.state == ThreadState::AtWarp && peer.mask == mask;
        present |= 1u << other;
        if (ready)
          matching = matching && sameOperation(peer.site, leader.site) &&
                     peer.bytes == leader.bytes &&
                     (!block.check || sameSite(peer.site, leader.site));
      }
      if (!ready)
        continue;
      if (!matching) {
        std::vector<size_t> members;
        for (unsigned other = 0; other < kWarpSize; ++other)
          if (present >> other & 1)
            members.push_back(first + other);
        block.error = "lanes of warp " + std::to_string(first / kWarpSize) +
                      " meet at different warp operations (undefined in "
                      "CUDA): " +
                      describeSites(block, members, /*lanes=*/true);
        return true;
      }
      for (unsigned target = 0; target < kWarpSize; ++target) {
        if (!(present >> target & 1))
          continue;
        SimtThread &receiver = threads[first + target];
        for (unsigned source = 0; source < kWarpSize; ++source)
          if (present >> source & 1)
            std::memcpy(static_cast<char *>(receiver.all) +
                            source * leader.bytes,
                        threads[first + source].value, leader.bytes);
      }
      if (block.check && std::strcmp(leader.site.operation, "__syncwarp") == 0)
        recordWarpSync(block, first, present);
      for (unsigned target = 0; target < kWarpSize; ++target)
        if (present >> target & 1) {
          threads[first + target].present = present;
          threads[first + target].state = ThreadState::Runnable;
        }
      progress = true;
    }
  }
  return progress;
}

/// Completes every warpgroup operation all 128 threads of the warpgroup
/// have reached. A warpgroup some of whose threads have exited, or whose
/// threads meet at different operations (different call sites or sizes),
/// sets block.error: wgmma and setmaxnreg are .sync.aligned over the
/// warpgroup. False if none could be completed.
bool completeWarpgroupOps(BlockRun &block) {
  bool progress = false;
  std::vector<SimtThread> &threads = block.threads;
  for (size_t first = 0; first + kWarpgroupSize <= threads.size();
       first += kWarpgroupSize) {
    const SimtThread *leader = nullptr;
    size_t arrived = 0, exited = 0;
    bool matching = true;
    for (size_t i = first; i < first + kWarpgroupSize; ++i) {
      const SimtThread &thread = threads[i];
      exited += thread.state == ThreadState::Done;
      if (thread.state != ThreadState::AtWarpgroup)
        continue;
      ++arrived;
      leader = leader ? leader : &thread;
      matching = matching && sameSite(thread.site, leader->site) &&
                 thread.bytes == leader->bytes;
    }
    if (!leader)
      continue;
    const std::string group = "warpgroup " +
                              std::to_string(first / kWarpgroupSize) + " (" +
                              describeThread(threads[first]) + " on)";
    if (exited > 0) {
      block.error = group + ": " + std::to_string(arrived) + " of its 128 " +
                    "threads reach " + describeSite(leader->site) + ", " +
                    std::to_string(exited) +
                    " have exited: the instruction needs the whole "
                    "warpgroup";
      return true;
    }
    if (arrived < kWarpgroupSize)
      continue;
    if (!matching) {
      std::vector<size_t> members(kWarpgroupSize);
      std::iota(members.begin(), members.end(), first);
      block.error = group + " meets at different warpgroup operations " +
                    "(undefined in CUDA): " +
                    describeSites(block, members, /*lanes=*/false);
      return true;
    }
    for (size_t target = first; target < first + kWarpgroupSize; ++target) {
      SimtThread &receiver = threads[target];
      for (size_t source = 0; source < kWarpgroupSize; ++source)
        std::memcpy(static_cast<char *>(receiver.all) + source * leader->bytes,
                    threads[first + source].value, leader->bytes);
    }
    for (size_t target = first; target < first + kWarpgroupSize; ++target)
      threads[target].state = ThreadState::Runnable;
    progress = true;
  }
  return progress;
}

std::string describeDeadlock(const BlockRun &block) {
  int atBarrier = 0, atWarp = 0, atNamed = 0, atWarpgroup = 0, done = 0;
  std::ostringstream masks;
  for (size_t i = 0; i < block.threads.size(); ++i) {
    const SimtThread &thread = block.threads[i];
    if (thread.state == ThreadState::AtBarrier)
      ++atBarrier;
    else if (thread.state == ThreadState::AtNamedBarrier)
      ++atNamed;
    else if (thread.state == ThreadState::AtWarpgroup)
      ++atWarpgroup;
    else if (thread.state == ThreadState::Done)
      ++done;
    else if (thread.state == ThreadState::AtWarp) {
      if (atWarp++ < 4)
        masks << " thread " << i << " mask 0x" << std::hex << thread.mask
              << std::dec << ";";
    }
  }
  std::ostringstream text;
  text << "deadlock: " << atBarrier << " of " << block.threads.size()
       << " threads wait at __syncthreads, " << atWarp
       << " at a warp operation," << masks.str() << " " << atNamed
       << " at a named barrier, " << atWarpgroup
       << " at a warpgroup operation, " << done << " have exited";
  for (unsigned id = 1; id < kNamedBarriers; ++id) {
    const NamedBarrier &barrier = block.namedBarriers[id];
    if (barrier.arrivals.empty())
      continue;
    size_t waiting = 0;
    for (const NamedBarrier::Arrival &arrival : barrier.arrivals)
      waiting += arrival.waits;
    text << "; named barrier " << id << " expects " << barrier.expected
         << " threads, " << barrier.arrivals.size() << " arrived (" << waiting
         << " wait there, first " << describeSite(barrier.arrivals[0].site)
         << ")";
  }
  return text.str();
}

/// The registers a thread of `kernel` starts with: with launch bounds
/// (T, B), ptxas gives each thread at most the register file (64K) over
/// B blocks of T threads, in whole warps, in units of 8; 0 without bounds.
unsigned registersPerThread(const EmulatedKernel &kernel) {
  if (!kernel.boundsThreads)
    return 0;
  const uint64_t warps = (kernel.boundsThreads + kWarpSize - 1) / kWarpSize;
  const uint64_t threads =
      warps * kWarpSize * std::max(1u, kernel.boundsBlocks);
  return static_cast<unsigned>(
      std::min<uint64_t>(256, 65536 / threads / 8 * 8));
}

/// Runs one block to completion in `schedule`'s order; returns an error
/// message or "".
std::string runBlock(BlockRun &block, const rudnn_emu_dim3 &blockIdx,
                     const LaunchGeometry &geometry, void *dynamicShared,
                     const Schedule &schedule) {
  const Dim3 &dims = geometry.block;
  block.error.clear();
  block.aborting = false;
  currentBlock = &block;
  // Shared memory, static and dynamic, starts as garbage (all bits set:
  // NaN, -1), as a GPU gives whatever the last block left. The static part
  // is the kernel object's thread-local block; the prelude's own variable
  // there is set again before every resume.
  std::memset(dynamicShared, 0xff, geometry.dynamicSharedBytes);
  if (block.staticShared.begin)
    std::memset(block.staticShared.begin, 0xff, block.staticShared.bytes);
  ++block.phase;
  block.idlePolls = 0;
  block.blockIdx = blockIdx;
  block.switchAtAccesses =
      block.check && schedule.order == Schedule::Order::Random;
  const uint64_t place =
      uint64_t(blockIdx.x) << 32 | uint64_t(blockIdx.y) << 16 | blockIdx.z;
  block.switchState =
      (((schedule.seed + 1) * 0x9e3779b97f4a7c15ull) ^ place) | 1;
  std::fill(block.jointWarpSyncs.begin(), block.jointWarpSyncs.end(), 0);
  block.jointBarrierSyncs.clear();
  block.firstPhase = block.phase;
  if (block.check)
    block.asyncShadow.reset(block.threads.size());
  block.async = {};
  const unsigned registers = registersPerThread(*block.kernel);
  const unsigned engineOrder =
      schedule.order == Schedule::Order::Reverse  ? RUDNN_EMU_SCHEDULE_REVERSE
      : schedule.order == Schedule::Order::Random ? RUDNN_EMU_SCHEDULE_RANDOM
                                                  : RUDNN_EMU_SCHEDULE_FORWARD;
  for (NamedBarrier &barrier : block.namedBarriers)
    barrier.arrivals.clear();
  for (unsigned z = 0, linear = 0; z < dims.z; ++z)
    for (unsigned y = 0; y < dims.y; ++y)
      for (unsigned x = 0; x < dims.x; ++x, ++linear) {
        SimtThread &thread = block.threads[linear];
        thread.state = ThreadState::Runnable;
        thread.fakeStack = nullptr;
        thread.syncs = 0;
        thread.info.watchStackWrites = 0;
        thread.writtenSinceFence.clear();
        thread.info.threadIdx = {x, y, z};
        thread.info.blockIdx = blockIdx;
        thread.info.blockDim = {dims.x, dims.y, dims.z};
        thread.info.gridDim = {geometry.grid.x, geometry.grid.y,
                               geometry.grid.z};
        thread.info.linear = linear;
        thread.info.lane = linear % kWarpSize;
        thread.info.warp = linear / kWarpSize;
        thread.info.dynamicShared = dynamicShared;
        thread.info.dynamicSharedBytes = geometry.dynamicSharedBytes;
        thread.info.blockAsync = &block.async;
        thread.info.schedule = engineOrder;
        thread.info.scheduleSeed = block.switchState;
        thread.info.registersPerThread = registers;
        const ctx::stack_context &stack = block.stacks[linear];
        thread.info.stackEnd = reinterpret_cast<uintptr_t>(stack.sp);
        thread.info.stackBegin = thread.info.stackEnd - stack.size;
        thread.info.unwatchedBegin = thread.info.unwatchedEnd = 0;
        thread.fakeStack = nullptr;
        thread.fiber =
            ctx::fiber(std::allocator_arg, BorrowedStack{block.stacks[linear]},
                       [&block, &thread](ctx::fiber &&scheduler) {
                         enteredFiber(thread);
                         thread.scheduler = std::move(scheduler);
                         // A thread first resumed by an aborting block never
                         // runs.
                         if (!block.aborting) {
                           try {
                             block.kernel->entry(block.args);
                           } catch (const BlockAborted &) {
                             // Unwound on purpose: the block failed elsewhere.
                           }
                         }
                         thread.state = ThreadState::Done;
                         block.idlePolls = 0;
                         leavingFiber(thread, true);
                         return std::move(thread.scheduler);
                       });
      }

  // The order each pass resumes the runnable threads in.
  std::vector<size_t> order(block.threads.size());
  std::iota(order.begin(), order.end(), 0);
  if (schedule.order == Schedule::Order::Reverse)
    std::reverse(order.begin(), order.end());
  std::mt19937_64 random(schedule.seed ^ (uint64_t(blockIdx.x) << 32 |
                                          blockIdx.y << 16 | blockIdx.z));
  std::string error;
  while (error.empty()) {
    bool ran = false;
    if (schedule.order == Schedule::Order::Random)
      std::shuffle(order.begin(), order.end(), random);
    for (size_t index : order) {
      SimtThread &thread = block.threads[index];
      if (thread.state == ThreadState::Runnable) {
        resume(block, thread);
        ran = true;
        if (!block.error.empty())
          break;
      }
    }
    if (!block.error.empty()) {
      error = block.error;
      break;
    }
    if (ran)
      continue;
    bool allDone = std::all_of(
        block.threads.begin(), block.threads.end(),
        [](const SimtThread &t) { return t.state == ThreadState::Done; });
    if (allDone)
      break;
    if (completeBarrier(block) || completeWarpOps(block) ||
        completeWarpgroupOps(block)) {
      error = block.error;
      continue;
    }
    // Only spinning threads can move: they poll again.
    bool polling = false;
    for (SimtThread &thread : block.threads)
      if (thread.state == ThreadState::Polling) {
        thread.state = ThreadState::Runnable;
        polling = true;
      }
    if (!polling)
      error = describeDeadlock(block);
  }
  if (!error.empty()) {
    // Unwind the threads left suspended (trap, deadlock) through our own
    // switches, so their stacks can be reused; threads not yet started end
    // without running. Each resumed thread throws out of its suspension and
    // finishes, so one pass completes every fiber.
    block.aborting = true;
    for (SimtThread &thread : block.threads)
      if (thread.fiber)
        resume(block, thread);
  }
  if (block.async.end)
    block.async.end(block.async.work);
  block.async = {};
  currentBlock = nullptr;
  return error;
}

void checkGeometry(const LaunchGeometry &geometry) {
  const Dim3 &block = geometry.block, &grid = geometry.grid;
  uint64_t threads = uint64_t(block.x) * block.y * block.z;
  if (threads == 0 || threads > 1024 || block.x > 1024 || block.y > 1024 ||
      block.z > 64)
    throw InvalidArgument("block (" + std::to_string(block.x) + "," +
                          std::to_string(block.y) + "," +
                          std::to_string(block.z) +
                          ") is outside CUDA's limits (at most 1024 threads)");
  if (grid.x == 0 || grid.y == 0 || grid.z == 0 || grid.y > 65535 ||
      grid.z > 65535)
    throw InvalidArgument(
        "grid (" + std::to_string(grid.x) + "," + std::to_string(grid.y) + "," +
        std::to_string(grid.z) + ") is outside CUDA's limits");
}

/// A launch larger than the kernel's __launch_bounds__ fails on a GPU.
void checkLaunchBounds(const EmulatedKernel &kernel,
                       const LaunchGeometry &geometry) {
  const Dim3 &block = geometry.block;
  const uint64_t threads = uint64_t(block.x) * block.y * block.z;
  if (kernel.boundsThreads && threads > kernel.boundsThreads)
    throw InvalidArgument("a block of " + std::to_string(threads) +
                          " threads for kernel '" + kernel.name +
                          "', whose __launch_bounds__ allow " +
                          std::to_string(kernel.boundsThreads));
}

} // namespace

const rudnn_emu_host &rudnn::runtime::simtHost() { return kHost; }

Schedule Schedule::parse(const std::string &text) {
  Schedule schedule;
  if (text == "forward" || text.empty())
    return schedule;
  if (text == "reverse") {
    schedule.order = Order::Reverse;
    return schedule;
  }
  const std::string prefix = "random:";
  if (text.rfind(prefix, 0) == 0 && text.size() > prefix.size() &&
      text.find_first_not_of("0123456789", prefix.size()) ==
          std::string::npos &&
      text.size() - prefix.size() <= 19) {
    schedule.order = Order::Random;
    schedule.seed = std::stoull(text.substr(prefix.size()));
    return schedule;
  }
  throw InvalidArgument("emulation schedule must be forward, reverse or "
                        "random:SEED, got '" +
                        text + "'");
}

std::string Schedule::name() const {
  switch (order) {
  case Order::Forward:
    return "forward";
  case Order::Reverse:
    return "reverse";
  case Order::Random:
    return "random:" + std::to_string(seed);
  }
  return "?";
}

namespace {

/// Ends the process with a report when a block's running thread has not
/// come back to the scheduler for too long: a loop with no barrier, warp
/// operation or poll, such as a spin-wait on a volatile flag outside check
/// mode. Such a thread cannot be unwound; a report beats a silent hang.
class Watchdog {
public:
  Watchdog(const std::string &kernel, double seconds)
      : kernel(kernel), limit(static_cast<int64_t>(seconds * 1e9)) {
    if (limit > 0)
      thread = std::thread([this] { watch(); });
  }
  ~Watchdog() {
    if (!thread.joinable())
      return;
    {
      std::lock_guard<std::mutex> lock(mutex);
      done = true;
    }
    wake.notify_one();
    thread.join();
  }
  void add(const BlockRun *block) {
    std::lock_guard<std::mutex> lock(mutex);
    blocks.push_back(block);
  }
  void remove(const BlockRun *block) {
    std::lock_guard<std::mutex> lock(mutex);
    blocks.erase(std::find(blocks.begin(), blocks.end(), block));
  }

private:
  void watch() {
    std::unique_lock<std::mutex> lock(mutex);
    auto period = std::chrono::nanoseconds(std::min<int64_t>(limit, 1e9) / 2);
    while (!wake.wait_for(lock, period, [&] { return done; }))
      for (const BlockRun *block : blocks) {
        int64_t since = block->resumedAt;
        if (since && steadyNanoseconds() - since > limit)
          report(*block);
      }
  }

  [[noreturn]] void report(const BlockRun &block) {
    const SimtThread *running = block.running;
    std::fprintf(
        stderr,
        "rudnn: emulated kernel '%s', block (%u,%u,%u), %s has run %.0f s "
        "without reaching a barrier, warp operation or poll: a spin-wait "
        "that cannot finish? (Check mode, RUDNN_EMULATION_CHECK=1, lets "
        "volatile spin-waits make progress; RUDNN_EMULATION_WATCHDOG=SECONDS "
        "sets this limit, 0 turns it off.)\n",
        kernel.c_str(), block.blockIdx.x, block.blockIdx.y, block.blockIdx.z,
        running ? describeThread(*running).c_str() : "a thread", limit / 1e9);
    std::fflush(stderr);
    std::abort();
  }

  const std::string &kernel;
  const int64_t limit;
  std::mutex mutex;
  std::condition_variable wake;
  bool done = false;
  std::vector<const BlockRun *> blocks;
  std::thread thread;
};

/// An access the check hooks do not see (a memcpy of variable length, which
/// the compiler leaves to the C library) that reached a guard page: names
/// the kernel, block and thread running on this OS thread. Nothing here may
/// allocate or lock (it runs in the fault handler).
void reportGuardFault(uintptr_t address) {
  const BlockRun *block = currentBlock;
  const SimtThread *thread = currentThread;
  ptrdiff_t index = -1;
  if (!block || !thread || !block->globals ||
      (index = mappingOf(*block->globals, address)) < 0)
    return;
  const rudnn_emu_thread &t = thread->info;
  char text[768];
  int length = std::snprintf(
      text, sizeof text,
      "rudnn: emulated kernel '%s', block (%u,%u,%u), thread (%u,%u,%u): "
      "out-of-bounds global memory access at %p, unseen by check mode's "
      "hooks, reached a guard page: ",
      block->kernel->name.c_str(), t.blockIdx.x, t.blockIdx.y, t.blockIdx.z,
      t.threadIdx.x, t.threadIdx.y, t.threadIdx.z,
      reinterpret_cast<void *>(address));
  length = std::max(0, std::min(length, int(sizeof text) - 2));
  length += describeOutOfBounds(text + length, sizeof text - 1 - length,
                                *block->globals, index, address, 1);
  text[length++] = '\n';
  for (int done = 0, n; done < length; done += n)
    if ((n = static_cast<int>(::write(2, text + done, length - done))) <= 0)
      break;
}

/// The ELF TLS ABI's (module, offset) pair and its resolver, which makes
/// the module's block for the calling thread if it has none yet.
struct TlsIndex {
  unsigned long module, offset;
};
extern "C" void *__tls_get_addr(TlsIndex *index);

/// The OS thread's thread-local block of the kernel object: where its
/// static `__shared__` variables live. Empty if it has none.
SharedRegion staticSharedOf(const EmulatedKernel &kernel) {
  SharedRegion region;
  region.name = "static";
  if (!kernel.tlsModule || !kernel.tlsBytes)
    return region;
  // The dynamic TLS block is made on its first use by this OS thread: ask
  // for it as the object's own code would (the ELF TLS ABI's entry point).
  TlsIndex index{kernel.tlsModule, 0};
  if (void *block = __tls_get_addr(&index)) {
    region.begin = static_cast<unsigned char *>(block);
    region.bytes = kernel.tlsBytes;
  }
  return region;
}

/// The order blocks are taken in: launch order, reversed, or shuffled (so
/// float atomics from different blocks land in another order).
std::vector<uint64_t> blockOrder(uint64_t blocks, const Schedule &schedule) {
  std::vector<uint64_t> order;
  if (schedule.order == Schedule::Order::Forward)
    return order;
  order.resize(blocks);
  std::iota(order.begin(), order.end(), 0);
  if (schedule.order == Schedule::Order::Reverse)
    std::reverse(order.begin(), order.end());
  else
    std::shuffle(order.begin(), order.end(), std::mt19937_64(schedule.seed));
  return order;
}

} // namespace

void rudnn::runtime::runGrid(const EmulatedKernel &kernel,
                             const LaunchGeometry &geometry, void **args,
                             const SimtOptions &options) {
  checkGeometry(geometry);
  checkLaunchBounds(kernel, geometry);
  const Schedule &schedule = options.schedule;
  const Dim3 &grid = geometry.grid, &blockDims = geometry.block;
  uint64_t blocks = uint64_t(grid.x) * grid.y * grid.z;
  size_t threadsPerBlock = size_t(blockDims.x) * blockDims.y * blockDims.z;
  unsigned workers =
      options.threads ? options.threads : std::thread::hardware_concurrency();
  workers = static_cast<unsigned>(
      std::max<uint64_t>(1, std::min<uint64_t>(workers ? workers : 1, blocks)));
  // A cooperative grid runs all at once, as the GPU guarantees it: a worker
  // per block.
  GridBarrier gridBarrier;
  gridBarrier.blocks = blocks;
  if (geometry.cooperative) {
    if (blocks > kMaxCooperativeBlocks)
      throw InvalidArgument("a cooperative grid of " + std::to_string(blocks) +
                            " blocks is larger than " +
                            std::to_string(kMaxCooperativeBlocks) +
                            ", the most emulation runs at once");
    workers = static_cast<unsigned>(blocks);
  }
  const std::vector<uint64_t> order = blockOrder(blocks, schedule);
  // Kept for the whole launch: the blocks' accesses are checked against it.
  std::shared_ptr<const GuardedAllocations> globals;
  if (options.check) {
    globals = guardedAllocations();
    setGuardFaultReporter(reportGuardFault);
  }

  std::atomic<uint64_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex errorMutex;
  std::string error;

  Watchdog watchdog(kernel.name, options.watchdogSeconds);
  auto runBlocks = [&] {
    BlockRun block;
    watchdog.add(&block);
    struct Unwatch {
      Watchdog &watchdog;
      const BlockRun *block;
      ~Unwatch() { watchdog.remove(block); }
    } unwatch{watchdog, &block};
    // The running-thread slot is the process's (one per OS thread, every
    // kernel object's): no thread of this launch stays in it once this
    // OS thread is done, for the next object's code to take as its own.
    struct LeaveSlot {
      const EmulatedKernel &kernel;
      ~LeaveSlot() { kernel.setCurrent(nullptr); }
    } leaveSlot{kernel};
    block.kernel = &kernel;
    block.args = args;
    block.check = options.check;
    block.grid = geometry.cooperative ? &gridBarrier : nullptr;
    block.globals = globals && !globals->empty() ? globals.get() : nullptr;
    block.threads.resize(threadsPerBlock);
    std::unique_ptr<StackRegion> region;
    if (geometry.cooperative)
      region = regionPool().acquire(threadsPerBlock);
    for (size_t i = 0; i < threadsPerBlock; ++i)
      block.stacks.push_back(region ? region->stack(i) : stackPool().acquire());
    // Dynamic shared memory of this worker's blocks: exactly the bytes asked
    // for, so a sanitizer catches a kernel reading past them.
    std::unique_ptr<unsigned char[]> shared(
        new unsigned char[std::max<size_t>(1, geometry.dynamicSharedBytes)]);
    block.dynamicShared.name = "dynamic";
    block.dynamicShared.begin = shared.get();
    block.dynamicShared.bytes = geometry.dynamicSharedBytes;
    block.staticShared = staticSharedOf(kernel);
    if (options.check) {
      block.dynamicShared.shadow.resize(block.dynamicShared.bytes);
      block.staticShared.shadow.resize(block.staticShared.bytes);
      size_t lanes = (threadsPerBlock + kWarpSize - 1) / kWarpSize * kWarpSize;
      block.jointWarpSyncs.assign(lanes * kWarpSize, 0);
    }
    for (uint64_t taken; !failed && (taken = next++) < blocks;) {
      uint64_t b = order.empty() ? taken : order[taken];
      rudnn_emu_dim3 blockIdx = {static_cast<unsigned>(b % grid.x),
                                 static_cast<unsigned>(b / grid.x % grid.y),
                                 static_cast<unsigned>(b / grid.x / grid.y)};
      std::string message =
          runBlock(block, blockIdx, geometry, shared.get(), schedule);
      if (!message.empty()) {
        std::lock_guard<std::mutex> lock(errorMutex);
        if (!failed.exchange(true))
          error = "block (" + std::to_string(blockIdx.x) + "," +
                  std::to_string(blockIdx.y) + "," +
                  std::to_string(blockIdx.z) + "): " + message;
        gridBarrier.abort();
      } else if (geometry.cooperative) {
        gridBarrier.finish();
      }
    }
    if (region)
      regionPool().release(std::move(region));
    else
      for (const ctx::stack_context &stack : block.stacks)
        stackPool().release(stack);
  };
  auto work = [&] {
    try {
      runBlocks();
    } catch (const std::exception &exception) {
      std::lock_guard<std::mutex> lock(errorMutex);
      if (!failed.exchange(true))
        error = exception.what();
      gridBarrier.abort();
    }
  };

  std::vector<std::thread> pool;
  try {
    for (unsigned i = 1; i < workers; ++i)
      pool.emplace_back(work);
  } catch (const std::exception &exception) {
    // No more OS threads: the grid cannot run (a cooperative one not at
    // all); the workers started end at once.
    std::lock_guard<std::mutex> lock(errorMutex);
    if (!failed.exchange(true))
      error = std::string("cannot start the workers: ") + exception.what();
    gridBarrier.abort();
  }
  work();
  for (std::thread &thread : pool)
    thread.join();
  if (failed)
    throw DeviceError("emulated kernel '" + kernel.name + "'", "launch failed",
                      error);
}
