//===- KdaKernelsNvrtcTest.cpp - The emitted KDA kernels under NVRTC ------===//
//
// Every emitted KDA kernel, forward and backward, compiles for sm_90 at
// chunk 64 with K = V = 128 and 256; ptxas reports no local-memory spills,
// and the shared memory it reports stays within the chunk policy's model
// (and so within 48 KiB of static shared memory). (Their numerics are
// checked through rudnn::kdaForward / kdaBackward in test/api.)
//
//===----------------------------------------------------------------------===//

#include "codegen/Emit/KdaEmitter.h"
#include "dialects/IR/TargetPolicy.h"
#include "runtime/CudaToolkit.h"
#include "runtime/NvrtcCompiler.h"
#include "test/support/DeviceHeaders.h"
#include "test/support/Ptxas.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <regex>

using namespace rudnn;
using namespace rudnn::codegen;

namespace {

TEST(KdaKernelsNvrtc, EveryKernelCompilesWithoutSpillsWithinItsSharedMemory) {
  if (runtime::CudaToolkit::get().ptxas.empty())
    GTEST_SKIP() << "no ptxas beside NVRTC ("
                 << runtime::CudaToolkit::get().nvrtcLibrary << ")";
  runtime::NvrtcCompiler compiler(samples::deviceHeaders());
  for (int64_t features : {128, 256}) {
    const KdaKernelSpec spec{DType::BF16, DType::F32, DType::BF16,
                             features,    features,   64};
    const int64_t modelled = mlir::rudnn::kdaChunkSharedBytes(
        spec.chunk, spec.featureK, spec.featureV);
    EXPECT_LE(modelled, mlir::rudnn::kStaticSharedBytes);
    for (KdaStage stage :
         {KdaStage::Prepare, KdaStage::Propagate, KdaStage::Output,
          KdaStage::Recurrent, KdaStage::Restore, KdaStage::StateGradient,
          KdaStage::Gradients}) {
      auto kernel = emitKdaKernel(spec, stage);
      runtime::CudaBinary binary =
          compiler.compile({kernel.entry, kernel.source}, "sm_90");
      EXPECT_THAT(binary.ptx, ::testing::HasSubstr(".entry " + kernel.entry));
      if (stage != KdaStage::Recurrent) {
        // The chunk kernels multiply on tensor cores for 16-bit inputs.
        EXPECT_THAT(binary.ptx,
                    ::testing::HasSubstr(
                        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"));
      }
      const std::string report = samples::ptxasReport(kernel.entry, binary.ptx);
      EXPECT_THAT(report, ::testing::HasSubstr("0 bytes spill stores"))
          << kernel.entry;
      EXPECT_THAT(report, ::testing::Not(::testing::ContainsRegex(
                              "[1-9][0-9]* bytes spill stores")))
          << kernel.entry;
      // ptxas leaves out the shared memory of a kernel that has none.
      std::smatch shared;
      const long long sharedBytes =
          std::regex_search(report, shared, std::regex("([0-9]+) bytes smem"))
              ? std::stoll(shared[1])
              : 0;
      EXPECT_LE(sharedBytes, modelled) << kernel.entry;
    }
  }
}

} // namespace
