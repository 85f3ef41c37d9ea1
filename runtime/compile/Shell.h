//===- Shell.h - Running host tools ------------------------------*- C++
//-*-===//
//
// The host compiler, ptxas and the disassembler are separate programs; this
// runs them. Internal to the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_RUNTIME_COMPILE_SHELL_H
#define RUDNN_RUNTIME_COMPILE_SHELL_H

#include <string>
#include <utility>

namespace rudnn::runtime {

/// `text` as one word of a POSIX shell command.
std::string shellQuote(const std::string &text);

/// Runs `command` with sh, without LD_PRELOAD (a sanitizer runtime preloaded
/// into this process stays out of the tools). Returns its exit status (-1
/// when it could not run or did not exit) and its stdout and stderr.
std::pair<int, std::string> runShell(const std::string &command);

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_COMPILE_SHELL_H
