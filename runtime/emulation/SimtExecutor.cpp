//===- SimtExecutor.cpp - CUDA grids on CPU threads and fibers ------------===//

#include "runtime/emulation/SimtExecutor.h"

#include "rudnn/errors.h"

#include <boost/context/fiber.hpp>

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <numeric>
#include <random>
#include <sstream>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace rudnn;
using namespace rudnn::runtime;
namespace ctx = boost::context;

namespace {

constexpr unsigned kWarpSize = 32;
/// Per CUDA thread: room for fragment arrays and deep device call chains.
constexpr size_t kStackBytes = 256 * 1024;

/// Fiber stacks with a guard page below each, reused across blocks and
/// launches: an overflow faults instead of corrupting a neighbour.
class StackPool {
public:
  ctx::stack_context acquire() {
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (!free.empty()) {
        ctx::stack_context stack = free.back();
        free.pop_back();
        return stack;
      }
    }
    size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
    void *base = ::mmap(nullptr, kStackBytes + page, PROT_READ | PROT_WRITE,
                        MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED)
      throw std::bad_alloc();
    ::mprotect(base, page, PROT_NONE);
    ctx::stack_context stack;
    stack.size = kStackBytes;
    stack.sp = static_cast<char *>(base) + page + kStackBytes;
    return stack;
  }
  void release(const ctx::stack_context &stack) {
    std::lock_guard<std::mutex> lock(mutex);
    free.push_back(stack);
  }

private:
  std::mutex mutex;
  std::vector<ctx::stack_context> free;
};

StackPool &stackPool() {
  static StackPool *pool = new StackPool; // outlives every worker
  return *pool;
}

/// Hands boost a stack the pool owns.
struct BorrowedStack {
  ctx::stack_context stack;
  ctx::stack_context allocate() { return stack; }
  void deallocate(ctx::stack_context &) noexcept {}
};

enum class ThreadState { Runnable, AtBarrier, AtWarp, Trapped, Done };

struct SimtThread {
  rudnn_emu_thread info{};
  ThreadState state = ThreadState::Runnable;
  ctx::fiber fiber;     // the CUDA thread, while suspended
  ctx::fiber scheduler; // the way back, while running
  // __syncthreads
  int predicate = 0, mode = 0, barrierResult = 0;
  // AddressSanitizer's fake stack of this fiber while it is switched out.
  void *fakeStack = nullptr;
  // warp exchange
  unsigned mask = 0;
  unsigned present = 0;
  const void *value = nullptr;
  void *all = nullptr;
  size_t bytes = 0;
};

/// One block in flight on one OS thread.
struct BlockRun {
  const EmulatedKernel *kernel = nullptr;
  void **args = nullptr;
  std::vector<SimtThread> threads;
  std::vector<ctx::stack_context> stacks;
  std::string error;
  /// Set when the block failed: suspended threads are resumed only to
  /// unwind their stacks.
  bool aborting = false;
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

int hostSyncthreads(int predicate, int mode) {
  SimtThread *self = currentThread;
  self->state = ThreadState::AtBarrier;
  self->predicate = predicate;
  self->mode = mode;
  suspend();
  return self->barrierResult;
}

unsigned hostWarpExchange(unsigned mask, const void *value, void *all,
                          size_t bytes) {
  SimtThread *self = currentThread;
  self->state = ThreadState::AtWarp;
  self->mask = mask;
  self->value = value;
  self->all = all;
  self->bytes = bytes;
  suspend();
  return self->present;
}

unsigned hostActiveMask() {
  SimtThread *self = currentThread;
  std::vector<SimtThread> &threads = currentBlock->threads;
  unsigned first = self->info.warp * kWarpSize, mask = 0;
  for (unsigned lane = 0; lane < kWarpSize && first + lane < threads.size();
       ++lane)
    if (threads[first + lane].state != ThreadState::Done)
      mask |= 1u << lane;
  return mask;
}

void hostTrap(const char *message) {
  SimtThread *self = currentThread;
  std::ostringstream text;
  text << "thread (" << self->info.threadIdx.x << "," << self->info.threadIdx.y
       << "," << self->info.threadIdx.z << "): " << message;
  currentBlock->error = text.str();
  self->state = ThreadState::Trapped;
  suspend(); // resumed only to unwind: throws BlockAborted
  throw BlockAborted{};
}

const rudnn_emu_host kHost = {RUDNN_EMU_ABI_VERSION, hostSyncthreads,
                              hostWarpExchange, hostActiveMask, hostTrap};

void resume(BlockRun &block, SimtThread &thread) {
  currentThread = &thread;
  block.kernel->setCurrent(&thread.info);
  switchingToFiber(block, thread);
  thread.fiber = std::move(thread.fiber).resume();
  backInScheduler();
  currentThread = nullptr;
}

/// Releases a barrier every live thread waits at. False if none can be.
bool completeBarrier(BlockRun &block) {
  int live = 0, waiting = 0, count = 0;
  for (const SimtThread &thread : block.threads) {
    if (thread.state == ThreadState::Done)
      continue;
    ++live;
    if (thread.state == ThreadState::AtBarrier) {
      ++waiting;
      count += thread.predicate != 0;
    }
  }
  // Threads that have exited take no part, as on the GPU.
  if (waiting == 0 || waiting != live)
    return false;
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
  return true;
}

/// Completes every warp operation whose participants have all arrived with
/// the same mask. As in CUDA, lanes of the mask that have exited (or do not
/// exist, in a partial last warp) take no part. False if none could be.
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
      bool ready = true;
      for (unsigned other = 0; other < kWarpSize && ready; ++other) {
        if (!(mask >> other & 1))
          continue;
        size_t index = first + other;
        if (index >= threads.size() ||
            threads[index].state == ThreadState::Done)
          continue;
        ready = threads[index].state == ThreadState::AtWarp &&
                threads[index].mask == mask &&
                threads[index].bytes == leader.bytes;
      }
      if (!ready)
        continue;
      unsigned present = 0;
      for (unsigned other = 0; other < kWarpSize; ++other)
        if (mask >> other & 1 && first + other < threads.size() &&
            threads[first + other].state == ThreadState::AtWarp)
          present |= 1u << other;
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

std::string describeDeadlock(const BlockRun &block) {
  int atBarrier = 0, atWarp = 0, done = 0;
  std::ostringstream masks;
  for (size_t i = 0; i < block.threads.size(); ++i) {
    const SimtThread &thread = block.threads[i];
    if (thread.state == ThreadState::AtBarrier)
      ++atBarrier;
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
       << " at a warp operation," << masks.str() << " " << done
       << " have exited";
  return text.str();
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
  // Dynamic shared memory starts as garbage (all bits set: NaN, -1), as a
  // GPU gives whatever the last block left.
  std::memset(dynamicShared, 0xff, geometry.dynamicSharedBytes);
  for (unsigned z = 0, linear = 0; z < dims.z; ++z)
    for (unsigned y = 0; y < dims.y; ++y)
      for (unsigned x = 0; x < dims.x; ++x, ++linear) {
        SimtThread &thread = block.threads[linear];
        thread.state = ThreadState::Runnable;
        thread.fakeStack = nullptr;
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
    if (!completeBarrier(block) && !completeWarpOps(block))
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

void rudnn::runtime::runGrid(const EmulatedKernel &kernel,
                             const LaunchGeometry &geometry, void **args,
                             unsigned threads, const Schedule &schedule) {
  checkGeometry(geometry);
  const Dim3 &grid = geometry.grid, &blockDims = geometry.block;
  uint64_t blocks = uint64_t(grid.x) * grid.y * grid.z;
  size_t threadsPerBlock = size_t(blockDims.x) * blockDims.y * blockDims.z;
  unsigned workers = threads ? threads : std::thread::hardware_concurrency();
  workers = static_cast<unsigned>(
      std::max<uint64_t>(1, std::min<uint64_t>(workers ? workers : 1, blocks)));

  std::atomic<uint64_t> next{0};
  std::atomic<bool> failed{false};
  std::mutex errorMutex;
  std::string error;

  auto runBlocks = [&] {
    BlockRun block;
    block.kernel = &kernel;
    block.args = args;
    block.threads.resize(threadsPerBlock);
    for (size_t i = 0; i < threadsPerBlock; ++i)
      block.stacks.push_back(stackPool().acquire());
    // Dynamic shared memory of this worker's blocks: exactly the bytes asked
    // for, so a sanitizer catches a kernel reading past them.
    std::unique_ptr<unsigned char[]> shared(
        new unsigned char[std::max<size_t>(1, geometry.dynamicSharedBytes)]);
    for (uint64_t b; !failed && (b = next++) < blocks;) {
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
      }
    }
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
    }
  };

  std::vector<std::thread> pool;
  for (unsigned i = 1; i < workers; ++i)
    pool.emplace_back(work);
  work();
  for (std::thread &thread : pool)
    thread.join();
  if (failed)
    throw DeviceError("emulated kernel '" + kernel.name + "'", "launch failed",
                      error);
}
