//===- ToolMain.h - How rudnn's tools report a failure ----------*- C++ -*-===//
//
// Every tool ends the same way when something escapes its work: one line
// on stderr naming the tool and, for rudnn's errors, their status.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_TOOLS_SUPPORT_TOOLMAIN_H
#define RUDNN_TOOLS_SUPPORT_TOOLMAIN_H

#include "rudnn/errors.h"

#include <iostream>
#include <new>

namespace rudnn::tools {

/// `run()`'s exit status, or `failure` after printing "TOOL: STATUS:
/// message" for whatever it throws.
template <typename Run>
int runReportingErrors(const char *tool, int failure, Run run) {
  try {
    return run();
  } catch (const Error &error) {
    std::cerr << tool << ": " << statusName(error.status()) << ": "
              << error.what() << "\n";
  } catch (const std::bad_alloc &) {
    std::cerr << tool << ": out of host memory\n";
  } catch (const std::exception &error) {
    std::cerr << tool << ": " << error.what() << "\n";
  }
  return failure;
}

} // namespace rudnn::tools

#endif // RUDNN_TOOLS_SUPPORT_TOOLMAIN_H
