//===- Offsets.h - Packed sequences' boundaries, checked --------*- C++ -*-===//
//
// The references index rows by the offsets they are given, so they check
// the offsets' contract first: from 0, never decreasing, to the packed
// length. The kernels refuse (or never see) anything else; a reference
// handed such offsets says so instead of reading past its inputs.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_LIB_REFERENCE_OFFSETS_H
#define RUDNN_LIB_REFERENCE_OFFSETS_H

#include "rudnn/errors.h"

#include <cstdint>
#include <string>
#include <vector>

namespace rudnn::reference {

/// Throws InvalidArgument naming `name` unless `offsets` start at 0, never
/// decrease and end at `total`.
inline void checkOffsets(const char *name, const std::vector<double> &offsets,
                         int64_t total) {
  auto refuse = [&](size_t entry, const std::string &why) {
    throw InvalidArgument(std::string("'") + name +
                          "' must start at 0, never decrease and end at " +
                          std::to_string(total) + ": entry " +
                          std::to_string(entry) + " is " +
                          std::to_string(offsets[entry]) + ", " + why);
  };
  if (offsets.empty())
    throw InvalidArgument(std::string("'") + name + "' has no entries");
  if (offsets[0] != 0)
    refuse(0, "not 0");
  for (size_t n = 1; n < offsets.size(); ++n) {
    if (!(offsets[n] >= offsets[n - 1]))
      refuse(n, "less than the entry before");
    if (offsets[n] > static_cast<double>(total))
      refuse(n, "past the end");
  }
  if (offsets.back() != static_cast<double>(total))
    refuse(offsets.size() - 1, "not the end");
}

} // namespace rudnn::reference

#endif // RUDNN_LIB_REFERENCE_OFFSETS_H
