//===- GuardedMemory.h - Check mode's device memory -------------*- C++ -*-===//
//
// Emulation's device memory in check mode: each allocation sits between
// inaccessible guard regions, so an index off by a little lands in a guard
// rather than in another buffer. The executor checks every instrumented
// global access against the live allocations (findOutOfBounds); an access
// the instrumentation does not see faults on a guard page, and the fault
// handler reports it through the executor before the process ends.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_RUNTIME_EMULATION_GUARDEDMEMORY_H
#define RUDNN_RUNTIME_EMULATION_GUARDEDMEMORY_H

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace rudnn::runtime {

/// A check-mode allocation: the bytes [begin, end) in a mapping [mapping,
/// mappingEnd) that is inaccessible but for the pages holding them.
struct GuardedAllocation {
  uintptr_t mapping = 0, mappingEnd = 0, begin = 0, end = 0;
};

/// Live check-mode allocations, in address order.
using GuardedAllocations = std::vector<GuardedAllocation>;

/// Check mode's device memory: `bytes` (> 0), 256-byte aligned, ending at
/// most 255 bytes (exactly, for a multiple of 256) before an inaccessible
/// guard region of 64 MiB or the allocation's size, whichever is larger; a
/// guard region as large lies before it. In check mode every load, store
/// and atomic of a kernel that falls in a guard region, or straddles the
/// allocation's bounds, traps (a kernel fault naming the block, thread,
/// address and nearest allocation); an access the instrumentation does not
/// see (a memcpy of variable length) faults on reaching a guard page, and
/// the process ends after the same report. Throws DeviceError when out of
/// memory.
void *allocateGuarded(size_t bytes);

/// Releases what allocateGuarded returned: true. False, doing nothing, for
/// any other pointer.
bool releaseGuarded(void *pointer);

/// The live allocations now. They change only as memory is allocated or
/// released: a launch keeps this snapshot, and its kernels' accesses
/// consult it without a lock.
std::shared_ptr<const GuardedAllocations> guardedAllocations();

/// The index in `allocations` of the mapping holding `address`, or -1.
ptrdiff_t mappingOf(const GuardedAllocations &allocations, uintptr_t address);

/// The index of the mapping whose guard region the `bytes` at `address`
/// touch, or that they straddle the bounds of; -1 when they lie inside an
/// allocation or outside every mapping (stacks, shared memory, host memory
/// this check knows nothing of).
ptrdiff_t findOutOfBounds(const GuardedAllocations &allocations,
                          uintptr_t address, size_t bytes);

/// Addresses the bounds check treats alike: the bytes of one allocation
/// (in bounds), or a gap between mappings (memory of no allocation). An
/// access inside a window needs no check; a launch keeps its latest.
struct BoundsWindow {
  uintptr_t begin = 0, end = 0;
  bool allocation = false; // else a gap (or, empty, a guard region)
  bool holds(uintptr_t address, size_t bytes) const {
    return address >= begin && address + bytes <= end;
  }
};

/// The window holding `address`; empty when it is in a guard region.
BoundsWindow boundsWindowOf(const GuardedAllocations &allocations,
                            uintptr_t address);

/// Writes to `text` (`size` bytes, NUL-terminated) where the `bytes` at
/// `address` in the mapping `index` of `allocations` lie relative to the
/// nearest allocation; returns the length written. Formats with snprintf
/// only, so a fault handler may call it.
int describeOutOfBounds(char *text, size_t size,
                        const GuardedAllocations &allocations, ptrdiff_t index,
                        uintptr_t address, size_t bytes);

/// Called by the fault handler with the faulting address before the fault
/// takes its course: reports it if it was a running kernel's. Must neither
/// allocate nor lock.
using GuardFaultReporter = void (*)(uintptr_t address);

/// Sets the reporter the fault handler calls (one per process).
void setGuardFaultReporter(GuardFaultReporter reporter);

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_EMULATION_GUARDEDMEMORY_H
