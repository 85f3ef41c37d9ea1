//===- SimtExecutor.h - CUDA grids on CPU threads and fibers ----*- C++ -*-===//
//
// Runs an emulated kernel's grid: blocks are taken by OS threads (one block
// at a time each), and every CUDA thread of a block is a fiber
// (Boost.Context) on that OS thread. A fiber runs until it finishes or waits
// at a block barrier or a warp-collective operation; when no fiber of the
// block can run, the scheduler completes the barrier or warp operation all
// of whose participants have arrived. When none can complete, the block is
// deadlocked and the launch fails naming the block; it never hangs. A
// cooperative grid gives every block its own OS thread, so all run at once
// and meet at grid barriers.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_RUNTIME_EMULATION_SIMTEXECUTOR_H
#define RUDNN_RUNTIME_EMULATION_SIMTEXECUTOR_H

#include "runtime/backends/Backend.h"
#include "runtime/emulation/prelude/rudnn_emu_abi.h"

#include <cstdint>
#include <string>

namespace rudnn::runtime {

/// The entry points of one loaded kernel object.
struct EmulatedKernel {
  std::string name;
  void (*entry)(void **args) = nullptr;
  void (*setCurrent)(rudnn_emu_thread *thread) = nullptr;
  /// The object's TLS module id and the size of its thread-local block:
  /// the kernels' static `__shared__` variables (0: none).
  size_t tlsModule = 0, tlsBytes = 0;
  /// Its `__launch_bounds__(threads, minBlocks)`; 0: none known.
  unsigned boundsThreads = 0, boundsBlocks = 0;
};

/// The host table every kernel object is bound to.
const rudnn_emu_host &simtHost();

/// In which order the blocks of a grid are taken and a block's runnable
/// threads run between barriers, warp operations and polls: a correct
/// kernel computes the same under every order, so tests run under several
/// to expose races (and float atomics' order) a single order hides.
struct Schedule {
  enum class Order { Forward, Reverse, Random };
  Order order = Order::Forward;
  uint64_t seed = 0; // Random: the same seed, the same interleaving

  /// "forward", "reverse" or "random:SEED"; throws InvalidArgument else.
  static Schedule parse(const std::string &text);
  std::string name() const;
};

/// How a grid runs.
struct SimtOptions {
  /// OS threads running blocks; 0: the hardware concurrency.
  unsigned threads = 0;
  /// The order of the blocks and of each block's threads.
  Schedule schedule;
  /// Check mode (the kernel object compiled for it): shared-memory races,
  /// collectives met at different call sites and global accesses outside
  /// the guarded allocations they fall near (GuardedMemory.h) trap.
  bool check = false;
  /// A thread running this long without reaching a barrier, warp operation
  /// or poll ends the process with a report (0: never).
  double watchdogSeconds = 0;
};

/// Runs the whole grid. Throws DeviceError naming the kernel and block on a
/// deadlock, race or trap, InvalidArgument for an impossible geometry.
void runGrid(const EmulatedKernel &kernel, const LaunchGeometry &geometry,
             void **args, const SimtOptions &options = {});

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_EMULATION_SIMTEXECUTOR_H
