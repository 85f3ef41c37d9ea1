//===- HeaderLibrary.h - Headers a kernel includes --------------*- C++ -*-===//
//
// The device library as the compiler sees it, indexed so that the kernel
// cache keys each kernel on exactly the headers it includes: editing one
// family's header leaves every other family's cached kernels valid.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_RUNTIME_COMPILE_HEADERLIBRARY_H
#define RUDNN_RUNTIME_COMPILE_HEADERLIBRARY_H

#include "runtime/cache/Hash.h"
#include "runtime/compile/Kernel.h"

#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace rudnn::runtime {

class HeaderLibrary {
public:
  explicit HeaderLibrary(std::vector<HeaderFile> headers);

  const std::vector<HeaderFile> &headers() const { return files; }

  /// The names of the library's headers `source` includes with
  /// `#include "name"`, directly or through another of them, sorted.
  /// Includes the library does not hold (toolkit headers) are the
  /// compiler's, and belong to its identity instead.
  std::vector<std::string> includedBy(std::string_view source) const;

  /// A hash of the names and contents of `includedBy(source)`, computed
  /// once per distinct set of headers (every kernel of a family includes
  /// the same ones, and this is asked on each compile request).
  Hash128 hashIncludedBy(std::string_view source) const;

  /// `headers` with every `.cuh` or `.h` file under `directory`, named
  /// `prefix` + its path there, over them (replacing a header of that name
  /// or added): to work on the device library without rebuilding. Throws
  /// InvalidArgument when `directory` is not a readable folder.
  static std::vector<HeaderFile> overlaid(std::vector<HeaderFile> headers,
                                          const std::string &directory,
                                          const std::string &prefix);

private:
  std::vector<HeaderFile> files;
  /// Header name -> its index in `files` and the names it includes.
  std::map<std::string, size_t, std::less<>> index;
  std::vector<std::vector<std::string>> includes;
  /// hashIncludedBy's hashes, by the included names joined.
  mutable std::mutex hashesMutex;
  mutable std::map<std::string, Hash128> hashes;
};

/// The quoted names `#include "..."` directives in `text` name, in order.
std::vector<std::string> quotedIncludes(std::string_view text);

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_COMPILE_HEADERLIBRARY_H
