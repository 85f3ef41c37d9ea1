//===- FiberStacks.cpp - The stacks emulated CUDA threads run on ----------===//

#include "runtime/emulation/FiberStacks.h"

#include <new>
#include <sys/mman.h>
#include <unistd.h>

using namespace rudnn::runtime;
namespace ctx = boost::context;

namespace {

size_t pageBytes() { return static_cast<size_t>(::sysconf(_SC_PAGESIZE)); }

/// `bytes` of memory whose lowest page is inaccessible.
void *mapWithGuardPage(size_t bytes) {
  void *base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (base == MAP_FAILED)
    throw std::bad_alloc();
  ::mprotect(base, pageBytes(), PROT_NONE);
  return base;
}

} // namespace

ctx::stack_context StackPool::acquire() {
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!free.empty()) {
      ctx::stack_context stack = free.back();
      free.pop_back();
      return stack;
    }
  }
  const size_t page = pageBytes();
  void *base = mapWithGuardPage(kFiberStackBytes + page);
  ctx::stack_context stack;
  stack.size = kFiberStackBytes;
  stack.sp = static_cast<char *>(base) + page + kFiberStackBytes;
  return stack;
}

void StackPool::release(const ctx::stack_context &stack) {
  std::lock_guard<std::mutex> lock(mutex);
  free.push_back(stack);
}

StackPool &rudnn::runtime::stackPool() {
  static StackPool *pool = new StackPool;
  return *pool;
}

StackRegion::StackRegion(size_t stacks)
    : page(pageBytes()), bytes(page + stacks * kFiberStackBytes) {
  base = mapWithGuardPage(bytes);
}

StackRegion::~StackRegion() { ::munmap(base, bytes); }

ctx::stack_context StackRegion::stack(size_t index) const {
  ctx::stack_context stack;
  stack.size = kFiberStackBytes;
  stack.sp = static_cast<char *>(base) + page + (index + 1) * kFiberStackBytes;
  return stack;
}

std::unique_ptr<StackRegion> RegionPool::acquire(size_t stacks) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto it = free.begin(); it != free.end(); ++it)
      if ((*it)->stacks() == stacks) {
        std::unique_ptr<StackRegion> region = std::move(*it);
        free.erase(it);
        return region;
      }
  }
  return std::make_unique<StackRegion>(stacks);
}

void RegionPool::release(std::unique_ptr<StackRegion> region) {
  std::lock_guard<std::mutex> lock(mutex);
  free.push_back(std::move(region));
}

RegionPool &rudnn::runtime::regionPool() {
  static RegionPool *pool = new RegionPool;
  return *pool;
}
