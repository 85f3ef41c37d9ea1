//===- SimtExecutor.h - CUDA grids on CPU threads and fibers ----*- C++ -*-===//
//
// Runs an emulated kernel's grid: blocks are taken by OS threads (one block
// at a time each), and every CUDA thread of a block is a fiber
// (Boost.Context) on that OS thread. A fiber runs until it finishes or waits
// at a block barrier or a warp-collective operation; when no fiber of the
// block can run, the scheduler completes the barrier or warp operation all
// of whose participants have arrived. When none can complete, the block is
// deadlocked and the launch fails naming the block; it never hangs.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_RUNTIME_EMULATION_SIMTEXECUTOR_H
#define RUDNN_RUNTIME_EMULATION_SIMTEXECUTOR_H

#include "runtime/Backend.h"
#include "runtime/emulation/prelude/rudnn_emu_abi.h"

#include <cstdint>
#include <string>

namespace rudnn::runtime {

/// The entry points of one loaded kernel object.
struct EmulatedKernel {
  std::string name;
  void (*entry)(void **args) = nullptr;
  void (*setCurrent)(rudnn_emu_thread *thread) = nullptr;
};

/// The host table every kernel object is bound to.
const rudnn_emu_host &simtHost();

/// In which order a block's runnable threads run between barriers and warp
/// operations: a correct kernel computes the same under every order, so
/// tests run under several to expose races a single order hides.
struct Schedule {
  enum class Order { Forward, Reverse, Random };
  Order order = Order::Forward;
  uint64_t seed = 0; // Random: the same seed, the same interleaving

  /// "forward", "reverse" or "random:SEED"; throws InvalidArgument else.
  static Schedule parse(const std::string &text);
  std::string name() const;
};

/// Runs the whole grid with `threads` OS threads (0: hardware concurrency)
/// in `schedule`'s order. Throws DeviceError naming the kernel and block on
/// a deadlock or trap, InvalidArgument for an impossible geometry.
void runGrid(const EmulatedKernel &kernel, const LaunchGeometry &geometry,
             void **args, unsigned threads, const Schedule &schedule = {});

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_EMULATION_SIMTEXECUTOR_H
