//===- TempRoot.h - One private temporary folder per process ----*- C++ -*-===//
//
// Every temporary folder of a process (the emulation backend's headers and
// compiles, sources of failed compiles) lives under one root,
// `$TMPDIR/rudnn-<pid>-XXXXXX` (mode 0700), removed at normal exit. A process
// killed by a signal cannot remove its root, so each new root first removes
// the roots of processes that no longer exist: leftovers never accumulate.
// No signal handler is installed.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_RUNTIME_SUPPORT_TEMPROOT_H
#define RUDNN_RUNTIME_SUPPORT_TEMPROOT_H

#include <string>

namespace rudnn::runtime {

/// This process's root, made on first use (after a fork, the child makes
/// its own). Throws std::system_error when it cannot be made.
std::string processTempRoot();

/// A fresh private folder `<root>/<prefix>-XXXXXX`. Throws std::system_error
/// when it cannot be made.
std::string makeTempDirectory(const std::string &prefix);

/// Removes, from `parent`, the roots (directories named exactly
/// rudnn-<pid>-XXXXXX and owned by this user) of processes that no longer
/// exist; returns how many.
int removeDeadProcessRoots(const std::string &parent);

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_SUPPORT_TEMPROOT_H
