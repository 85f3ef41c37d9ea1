//===- BundleFile.h - A compiled function as a file -------------*- C++ -*-===//
//
// What a bundle holds (rudnn/bundle.h): the function's checks (arguments,
// results, operator contracts) and its plan, kernels inline, for each
// target ("sm_90", "emulation"). The file is JSON, marked with its format
// version and the rudnn that wrote it, and checksummed.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_RUNTIME_BUNDLES_BUNDLEFILE_H
#define RUDNN_RUNTIME_BUNDLES_BUNDLEFILE_H

#include "runtime/checks/FunctionChecks.h"
#include "runtime/plans/Plan.h"

#include <deque>
#include <map>
#include <string>

namespace rudnn::runtime {

struct BundleFile {
  static constexpr int kFormatVersion = 1;

  std::string function;
  FunctionChecks checks;
  std::map<std::string, Plan> plans; // by target

  /// The file's text. Every deferred kernel is built first.
  std::string write() const;
  /// Parses and verifies `text` (read from `path`, for messages): its
  /// checksum, format version and rudnn version, then every index, name,
  /// rank, element type, layout and shape it holds against the others.
  /// Throws InvalidArgument naming `path` and what is wrong.
  static BundleFile read(const std::string &text, const std::string &path);

  BundleFile() = default;
  BundleFile(const BundleFile &) = delete; // `checks` views `strings`
  BundleFile(BundleFile &&) = default;
  BundleFile &operator=(BundleFile &&) = default;

private:
  /// `read` without `path` in its messages.
  static BundleFile parse(const std::string &text);
  /// The characters the read contracts' names and layouts view.
  std::deque<std::string> strings;
};

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_BUNDLES_BUNDLEFILE_H
