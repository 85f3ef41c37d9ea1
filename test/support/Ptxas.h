//===- Ptxas.h - ptxas's report on a kernel's PTX ---------------*- C++ -*-===//

#ifndef RUDNN_TEST_SUPPORT_PTXAS_H
#define RUDNN_TEST_SUPPORT_PTXAS_H

#include "runtime/compile/CudaToolkit.h"
#include "runtime/compile/Shell.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <unistd.h>

namespace rudnn::samples {

/// ptxas -v's report (registers, spills, shared memory) on `ptx` for `arch`;
/// fails the test when ptxas does. Callers skip when the toolkit has no
/// ptxas (runtime::CudaToolkit::get().ptxas empty).
inline std::string ptxasReport(const std::string &entry, const std::string &ptx,
                               const std::string &arch = "sm_90") {
  // One file per process: suites run concurrently (a checked pass beside
  // the plain one) ask for the same entries.
  const std::string path =
      ::testing::TempDir() + entry + "." + std::to_string(::getpid()) + ".ptx";
  std::ofstream(path) << ptx;
  auto [status, report] = runtime::runShell(
      runtime::shellQuote(runtime::CudaToolkit::get().ptxas) +
      " -arch=" + arch + " -v -o /dev/null " + runtime::shellQuote(path));
  std::remove(path.c_str());
  EXPECT_EQ(status, 0) << report;
  return report;
}

} // namespace rudnn::samples

#endif // RUDNN_TEST_SUPPORT_PTXAS_H
