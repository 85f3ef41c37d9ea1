//===- FiberStacks.h - The stacks emulated CUDA threads run on --*- C++ -*-===//
//
// Every emulated CUDA thread is a fiber with a stack of its own. Stacks are
// mapped once and reused across blocks and launches, each with a guard page
// below it, so an overflow faults instead of corrupting a neighbour.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_RUNTIME_EMULATION_FIBERSTACKS_H
#define RUDNN_RUNTIME_EMULATION_FIBERSTACKS_H

#include <boost/context/stack_context.hpp>

#include <memory>
#include <mutex>
#include <vector>

namespace rudnn::runtime {

/// Per CUDA thread: room for fragment arrays and deep device call chains.
constexpr size_t kFiberStackBytes = 256 * 1024;

/// Single stacks, each a mapping with its own guard page.
class StackPool {
public:
  boost::context::stack_context acquire();
  void release(const boost::context::stack_context &stack);

private:
  std::mutex mutex;
  std::vector<boost::context::stack_context> free;
};

/// The process's pool (it outlives every worker thread).
StackPool &stackPool();

/// Hands boost a stack the pool owns.
struct BorrowedStack {
  boost::context::stack_context stack;
  boost::context::stack_context allocate() { return stack; }
  void deallocate(boost::context::stack_context &) noexcept {}
};

/// The fiber stacks of one block of a cooperative grid, carved from one
/// mapping with a guard page below the lowest: every block of such a grid
/// is resident at once, and a guard page per stack (two mappings each)
/// would pass the kernel's limit on mappings (vm.max_map_count, 65530 by
/// default) at 128 blocks of 256 threads. Regions are kept and reused, as
/// pooled stacks are: a fiber's outermost frames never return, so a stack
/// keeps their AddressSanitizer redzones, which only the same frames at the
/// same places may meet again.
class StackRegion {
public:
  explicit StackRegion(size_t stacks);
  ~StackRegion();
  StackRegion(const StackRegion &) = delete;
  StackRegion &operator=(const StackRegion &) = delete;

  size_t stacks() const { return (bytes - page) / kFiberStackBytes; }
  boost::context::stack_context stack(size_t index) const;

private:
  void *base = nullptr;
  size_t page = 0, bytes = 0;
};

/// Regions of stacks, reused by later cooperative grids of the same block
/// size.
class RegionPool {
public:
  std::unique_ptr<StackRegion> acquire(size_t stacks);
  void release(std::unique_ptr<StackRegion> region);

private:
  std::mutex mutex;
  std::vector<std::unique_ptr<StackRegion>> free;
};

/// The process's pool (it outlives every worker thread).
RegionPool &regionPool();

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_EMULATION_FIBERSTACKS_H
