//===- Dump.h - RUDNN_DUMP_DIR: generated sources, PTX and plans -*- C++
//-*-===//

#ifndef RUDNN_RUNTIME_DUMP_H
#define RUDNN_RUNTIME_DUMP_H

#include <optional>
#include <string>

namespace rudnn::runtime {

/// RUDNN_DUMP_DIR, if set and non-empty.
std::optional<std::string> dumpDirectory();

/// Writes `contents` to `directory/fileName`, creating the directory; returns
/// the path, or an empty string (after a warning) when it cannot be written.
std::string writeFile(const std::string &directory, const std::string &fileName,
                      const std::string &contents);

/// Writes to RUDNN_DUMP_DIR when set; returns the path or an empty string.
std::string dumpIfRequested(const std::string &fileName,
                            const std::string &contents);

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_DUMP_H
