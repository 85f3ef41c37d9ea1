//===- GuardedMemory.cpp - Check mode's device memory ---------------------===//

#include "runtime/emulation/GuardedMemory.h"

#include "rudnn/errors.h"

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <mutex>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

using namespace rudnn;
using namespace rudnn::runtime;

namespace {

/// The least guard region on either side of an allocation: an index off by
/// up to this many bytes (or the allocation's size, if larger) still lands
/// in it rather than in other memory.
constexpr size_t kGuardBytes = size_t(64) << 20;

std::atomic<GuardFaultReporter> faultReporter{nullptr};
struct sigaction previousSegvAction;

/// A fault that may be an access reaching a guard page: the reporter names
/// it, then the previous handler (or the default action: the process ends)
/// takes the fault. Nothing here may allocate or lock.
void onGuardFault(int signal, siginfo_t *info, void *context) {
  if (GuardFaultReporter report = faultReporter.load())
    report(reinterpret_cast<uintptr_t>(info->si_addr));
  if (previousSegvAction.sa_flags & SA_SIGINFO) {
    previousSegvAction.sa_sigaction(signal, info, context);
  } else if (previousSegvAction.sa_handler != SIG_DFL &&
             previousSegvAction.sa_handler != SIG_IGN) {
    previousSegvAction.sa_handler(signal);
  } else {
    // The access faults again on return, now with the default action.
    struct sigaction fallback {};
    fallback.sa_handler = SIG_DFL;
    ::sigaction(signal, &fallback, nullptr);
  }
}

/// The live allocations, replaced (never changed) as memory comes and goes.
class GuardedMemory {
public:
  void *allocate(size_t bytes);
  bool release(void *pointer);
  std::shared_ptr<const GuardedAllocations> snapshot() {
    std::lock_guard<std::mutex> lock(mutex);
    return live;
  }

private:
  std::mutex mutex;
  std::shared_ptr<const GuardedAllocations> live =
      std::make_shared<const GuardedAllocations>();
  std::once_flag handlerInstalled;
};

GuardedMemory &guardedMemory() {
  static GuardedMemory *memory = new GuardedMemory; // outlives every launch
  return *memory;
}

void *GuardedMemory::allocate(size_t bytes) {
  std::call_once(handlerInstalled, [] {
    struct sigaction action {};
    action.sa_sigaction = onGuardFault;
    action.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&action.sa_mask);
    ::sigaction(SIGSEGV, &action, &previousSegvAction);
  });
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  auto outOfMemory = [&] {
    return DeviceError("allocate", "out of memory",
                       std::to_string(bytes) + " bytes");
  };
  if (bytes == 0 || bytes > (SIZE_MAX - 4 * page) / 4)
    throw outOfMemory();
  const size_t pages = (bytes + page - 1) / page * page;
  // Address space only (PROT_NONE commits nothing); a smaller guard if even
  // that is scarce.
  size_t guard = std::max(kGuardBytes, pages);
  void *mapping = ::mmap(nullptr, pages + 2 * guard, PROT_NONE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (mapping == MAP_FAILED) {
    guard = page;
    mapping = ::mmap(nullptr, pages + 2 * guard, PROT_NONE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  }
  if (mapping == MAP_FAILED)
    throw outOfMemory();
  char *data = static_cast<char *>(mapping) + guard;
  if (::mprotect(data, pages, PROT_READ | PROT_WRITE) != 0) {
    ::munmap(mapping, pages + 2 * guard);
    throw outOfMemory();
  }
  GuardedAllocation allocation;
  allocation.mapping = reinterpret_cast<uintptr_t>(mapping);
  allocation.mappingEnd = allocation.mapping + pages + 2 * guard;
  // Against the guard page after, at cudaMalloc's 256-byte alignment.
  allocation.begin =
      (reinterpret_cast<uintptr_t>(data) + pages - bytes) & ~uintptr_t(255);
  allocation.end = allocation.begin + bytes;
  std::lock_guard<std::mutex> lock(mutex);
  auto next = std::make_shared<GuardedAllocations>(*live);
  next->insert(std::upper_bound(
                   next->begin(), next->end(), allocation,
                   [](const GuardedAllocation &a, const GuardedAllocation &b) {
                     return a.mapping < b.mapping;
                   }),
               allocation);
  live = std::move(next);
  return reinterpret_cast<void *>(allocation.begin);
}

bool GuardedMemory::release(void *pointer) {
  GuardedAllocation allocation;
  {
    std::lock_guard<std::mutex> lock(mutex);
    const uintptr_t address = reinterpret_cast<uintptr_t>(pointer);
    ptrdiff_t index = mappingOf(*live, address);
    if (index < 0 || (*live)[index].begin != address)
      return false;
    allocation = (*live)[index];
    auto next = std::make_shared<GuardedAllocations>(*live);
    next->erase(next->begin() + index);
    live = std::move(next);
  }
  ::munmap(reinterpret_cast<void *>(allocation.mapping),
           allocation.mappingEnd - allocation.mapping);
  return true;
}

/// The first mapping starting past `address`.
GuardedAllocations::const_iterator
firstMappingAfter(const GuardedAllocations &allocations, uintptr_t address) {
  return std::upper_bound(
      allocations.begin(), allocations.end(), address,
      [](uintptr_t a, const GuardedAllocation &g) { return a < g.mapping; });
}

} // namespace

void *rudnn::runtime::allocateGuarded(size_t bytes) {
  return guardedMemory().allocate(bytes);
}

bool rudnn::runtime::releaseGuarded(void *pointer) {
  return guardedMemory().release(pointer);
}

std::shared_ptr<const GuardedAllocations> rudnn::runtime::guardedAllocations() {
  return guardedMemory().snapshot();
}

void rudnn::runtime::setGuardFaultReporter(GuardFaultReporter reporter) {
  faultReporter.store(reporter);
}

ptrdiff_t rudnn::runtime::mappingOf(const GuardedAllocations &allocations,
                                    uintptr_t address) {
  auto after = firstMappingAfter(allocations, address);
  if (after == allocations.begin() || address >= std::prev(after)->mappingEnd)
    return -1;
  return std::prev(after) - allocations.begin();
}

ptrdiff_t rudnn::runtime::findOutOfBounds(const GuardedAllocations &allocations,
                                          uintptr_t address, size_t bytes) {
  const uintptr_t last = address + bytes - 1;
  if (bytes == 0 || allocations.empty() || last < allocations.front().mapping ||
      address >= allocations.back().mappingEnd)
    return -1;
  ptrdiff_t index = mappingOf(allocations, address);
  if (index < 0)
    index = mappingOf(allocations, last);
  if (index < 0 ||
      (address >= allocations[index].begin && last < allocations[index].end))
    return -1;
  return index;
}

BoundsWindow
rudnn::runtime::boundsWindowOf(const GuardedAllocations &allocations,
                               uintptr_t address) {
  auto after = firstMappingAfter(allocations, address);
  const uintptr_t gapEnd =
      after == allocations.end() ? UINTPTR_MAX : after->mapping;
  if (after == allocations.begin())
    return {0, gapEnd};
  const GuardedAllocation &before = *std::prev(after);
  if (address >= before.mappingEnd)
    return {before.mappingEnd, gapEnd};
  if (address >= before.begin && address < before.end)
    return {before.begin, before.end, true};
  return {};
}

int rudnn::runtime::describeOutOfBounds(char *text, size_t size,
                                        const GuardedAllocations &allocations,
                                        ptrdiff_t index, uintptr_t address,
                                        size_t bytes) {
  auto distance = [&](const GuardedAllocation &g) {
    return address < g.begin  ? g.begin - address
           : address >= g.end ? address - g.end + 1
                              : 0;
  };
  const GuardedAllocation *nearest = &allocations[index];
  for (ptrdiff_t other : {index - 1, index + 1})
    if (other >= 0 && size_t(other) < allocations.size() &&
        distance(allocations[other]) < distance(*nearest))
      nearest = &allocations[other];
  const long long offset =
      static_cast<long long>(address - nearest->begin); // may be negative
  const unsigned long long length = nearest->end - nearest->begin;
  const bool before = address < nearest->begin;
  const unsigned long long by =
      before ? nearest->begin - address : address + bytes - nearest->end;
  int written = std::snprintf(
      text, size,
      "offset %lld of the nearest allocation (%llu bytes at %p): %llu "
      "byte%s %s",
      offset, length, reinterpret_cast<void *>(nearest->begin), by,
      by == 1 ? "" : "s", before ? "before its start" : "past its end");
  return std::max(0, std::min(written, static_cast<int>(size) - 1));
}
