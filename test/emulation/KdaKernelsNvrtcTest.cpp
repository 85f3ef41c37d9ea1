//===- KdaKernelsNvrtcTest.cpp - The emitted KDA kernels under NVRTC ------===//
//
// Every emitted KDA kernel compiles for sm_90 at K = V = 128, the chunk
// kernels multiply on tensor cores, and ptxas reports no local-memory
// spills. (Their numerics are checked through
// rudnn::kdaForward in test/api/KdaForwardApiTest.cpp.)
//
//===----------------------------------------------------------------------===//

#include "codegen/Emit/KdaEmitter.h"
#include "runtime/NvrtcCompiler.h"
#include "test/support/DeviceHeaders.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

using namespace rudnn;
using namespace rudnn::codegen;

namespace {

TEST(KdaKernelsNvrtc, EveryKernelCompilesForSm90WithoutSpills) {
  runtime::NvrtcCompiler compiler(samples::deviceHeaders());
  const KdaKernelSpec spec{
      ScalarType::BF16, ScalarType::F32, ScalarType::BF16, 128, 128, 64};
  for (KdaStage stage : {KdaStage::Prepare, KdaStage::Propagate,
                         KdaStage::Output, KdaStage::Recurrent}) {
    EmittedKernel kernel = emitKdaKernel(spec, stage);
    runtime::CudaBinary binary =
        compiler.compile({kernel.entry, kernel.source}, "sm_90");
    EXPECT_THAT(binary.ptx, ::testing::HasSubstr(".entry " + kernel.entry));
    if (stage != KdaStage::Recurrent) {
      // The chunk kernels multiply on tensor cores for 16-bit inputs.
      EXPECT_THAT(binary.ptx,
                  ::testing::HasSubstr(
                      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"));
    }
    std::string path = ::testing::TempDir() + kernel.entry + ".ptx";
    std::ofstream(path) << binary.ptx;
    std::string command = std::string(RUDNN_PTXAS) +
                          " -arch=sm_90 -v -o /dev/null " + path + " 2>&1";
    FILE *pipe = ::popen(command.c_str(), "r");
    ASSERT_NE(pipe, nullptr);
    std::string report;
    char buffer[512];
    while (std::fgets(buffer, sizeof(buffer), pipe))
      report += buffer;
    EXPECT_EQ(::pclose(pipe), 0) << report;
    EXPECT_THAT(report, ::testing::HasSubstr("0 bytes spill stores"))
        << kernel.entry;
    EXPECT_THAT(report, ::testing::Not(::testing::ContainsRegex(
                            "[1-9][0-9]* bytes spill stores")))
        << kernel.entry;
  }
}

} // namespace
