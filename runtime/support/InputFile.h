//===- InputFile.h - Reading the files a caller names -----------*- C++ -*-===//
//
// Every path that comes in from outside (IR text, plans, bundles, tensors)
// is read through here: only a regular file is opened, never a FIFO, a
// device such as /dev/zero or a directory, and only up to a stated size, so
// a bad path fails at once with an error instead of blocking or exhausting
// memory.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_RUNTIME_SUPPORT_INPUTFILE_H
#define RUDNN_RUNTIME_SUPPORT_INPUTFILE_H

#include <cstdint>
#include <string>
#include <string_view>

namespace rudnn::runtime {

/// The largest IR text, plan or bundle file read: 1 GiB.
inline constexpr uint64_t kMaxInputFileBytes = uint64_t(1) << 30;
/// The largest tensor file (.npy) read: 64 GiB.
inline constexpr uint64_t kMaxTensorFileBytes = uint64_t(64) << 30;

/// The whole of the regular file `path`. Throws InvalidArgument naming
/// `what` and the path when it cannot be opened, is not a regular file or
/// holds more than `limit` bytes. Opening never blocks (O_NONBLOCK), and
/// the checks are made on the descriptor that is read.
std::string readInputFile(const std::string &path, std::string_view what,
                          uint64_t limit = kMaxInputFileBytes);

/// The size of the regular file `path`, refused as readInputFile refuses
/// it: for readers that must open the file themselves.
uint64_t checkInputFile(const std::string &path, std::string_view what,
                        uint64_t limit = kMaxInputFileBytes);

/// Whether `name` may be used as a file name inside a folder rudnn writes or
/// reads: 1 to 255 letters, digits, '_', '.' or '-', not starting with '.'
/// (so never "..", a hidden file, a path or an absolute name).
bool isPlainFileName(std::string_view name);

/// A tool's input: `path`, or with "-" the standard input, which may be a
/// pipe, a regular file, a terminal or /dev/null, but no other device and
/// no directory.
/// Throws as checkInputFile does.
void checkToolInput(const std::string &path, std::string_view what,
                    uint64_t limit = kMaxInputFileBytes);

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_SUPPORT_INPUTFILE_H
