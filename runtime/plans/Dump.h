//===- Dump.h - RUDNN_DUMP_DIR: generated sources, PTX and plans -*- C++
//-*-===//

#ifndef RUDNN_RUNTIME_PLANS_DUMP_H
#define RUDNN_RUNTIME_PLANS_DUMP_H

#include "runtime/support/InputFile.h"

#include <optional>
#include <string>
#include <string_view>

namespace rudnn::runtime {

/// RUDNN_DUMP_DIR, if set and non-empty.
std::optional<std::string> dumpDirectory();

/// Writes `contents` to `directory/fileName`, creating the directory; returns
/// the path, or an empty string (after a warning) when it cannot be written
/// or `fileName` is not a plain file name.
std::string writeFile(const std::string &directory, const std::string &fileName,
                      const std::string &contents);

/// Writes to RUDNN_DUMP_DIR when set; returns the path or an empty string.
std::string dumpIfRequested(const std::string &fileName,
                            const std::string &contents);

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_PLANS_DUMP_H
