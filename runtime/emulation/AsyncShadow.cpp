//===- AsyncShadow.cpp - Check mode's view of the async engines -----------===//

#include "runtime/emulation/AsyncShadow.h"

#include <algorithm>
#include <sstream>

using namespace rudnn::runtime;

void AsyncShadow::reset(size_t threads) {
  threads_ = threads;
  base_ += static_cast<uint32_t>(boxes_.size());
  boxes_.clear();
  landings_.clear();
  acquired_.assign(threads, {});
  fences_.assign(threads, 0);
  arrivals_.clear();
}

uint32_t &AsyncShadow::landings(const void *barrier) {
  for (auto &[which, count] : landings_)
    if (which == barrier)
      return count;
  return landings_.emplace_back(barrier, 0).second;
}

uint32_t AsyncShadow::issue(const void *barrier, uint32_t issuer) {
  boxes_.push_back({barrier, issuer});
  return base_ + static_cast<uint32_t>(boxes_.size());
}

void AsyncShadow::land(uint32_t box, uint32_t phase) {
  Box &landed = at(box);
  landed.inFlight = false;
  landed.phase = phase;
  landed.serial = ++landings(landed.barrier);
}

void AsyncShadow::acquire(uint32_t thread, const void *barrier,
                          uint32_t phase) {
  const uint32_t landed = landings(barrier);
  for (Box &box : boxes_)
    if (box.barrier == barrier && !box.inFlight && box.serial <= landed)
      box.firstAcquired = std::min(box.firstAcquired, phase);
  for (auto &[which, count] : acquired_[thread])
    if (which == barrier) {
      count = landed;
      return;
    }
  acquired_[thread].emplace_back(barrier, landed);
}

std::vector<uint32_t> &AsyncShadow::arrivalsOf(const void *barrier) {
  for (auto &[which, syncs] : arrivals_)
    if (which == barrier)
      return syncs;
  return arrivals_.emplace_back(barrier, std::vector<uint32_t>(threads_, 0))
      .second;
}

void AsyncShadow::arrive(const void *barrier,
                         const std::vector<uint32_t> &known) {
  std::vector<uint32_t> &merged = arrivalsOf(barrier);
  for (size_t thread = 0; thread < merged.size(); ++thread)
    merged[thread] = std::max(merged[thread], known[thread]);
}

bool AsyncShadow::allowed(uint32_t box, uint32_t thread, uint32_t phase) const {
  const Box &target = at(box);
  if (target.inFlight)
    return false;
  for (const auto &[which, count] : acquired_[thread])
    if (which == target.barrier && count >= target.serial)
      return true;
  return target.firstAcquired < phase; // a wait, then a __syncthreads
}

std::string AsyncShadow::whyNot(uint32_t box) const {
  const Box &target = at(box);
  std::ostringstream why;
  why << "a TMA box " << (target.inFlight ? "still landing" : "landed")
      << " there (issued by thread " << target.issuer
      << ", completing on the mbarrier at " << target.barrier
      << "), and this thread has not waited on that barrier since "
      << (target.inFlight ? "its issue" : "it landed")
      << (target.inFlight || target.firstAcquired != UINT32_MAX
              ? ""
              : ", nor has any thread before a __syncthreads");
  return why.str();
}
