//===- KdaKernelsNvrtcTest.cpp - The emitted KDA kernels under NVRTC ------===//
//
// Every emitted KDA kernel, forward and backward, compiles for sm_90 at
// chunk 64 with K = V = 128 and 256; ptxas reports no local-memory spills,
// and the shared memory it reports stays within the chunk policy's model
// (and so within 48 KiB of static shared memory). (Their numerics are
// checked through rudnn::kdaForward / kdaBackward in test/api.)
//
//===----------------------------------------------------------------------===//

#include "codegen/Emit/kda/KdaEmitter.h"
#include "dialects/IR/kda/KdaPolicy.h"
#include "runtime/compile/CudaToolkit.h"
#include "runtime/compile/NvrtcCompiler.h"
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

// The workspace of the chunked forward per chunk and head: e^Γlast in fp32
// (K rounded to 4 floats), W, Kd, B and U in the input type (whole 16-byte
// chunks), and the boundary state in the input type. The emitted kernels
// static_assert the same count against kda::ChunkTiles.
TEST(KdaWorkspace, ForwardTilesFollowTheFormula) {
  const KdaKernelSpec production{DType::BF16, DType::F32, DType::BF16,
                                 128,         128,        64};
  EXPECT_EQ(4 * kdaTileFloats(production),
            4 * 128 + 2 * 64 * (2 * 128 + 64 + 128));
  const int64_t boundary = 2 * 128 * 128;
  const int64_t perToken = (4 * kdaTileFloats(production) + boundary) / 64;
  EXPECT_EQ(perToken, 1416);
  EXPECT_LE(perToken, 1536);
  // Odd dims: K = 60 is 60 floats of e^Γlast; 32·(120 + 32 + 100) bf16
  // operands round up to 1008 chunks of 16 bytes.
  const KdaKernelSpec odd{DType::BF16, DType::F32, DType::F32, 60, 100, 32};
  EXPECT_EQ(kdaTileFloats(odd), 60 + 1008 * 4);
  // f32 at K = 7: e^Γlast padded to 8 floats.
  const KdaKernelSpec f32{DType::F32, DType::F32, DType::F32, 7, 5, 16};
  EXPECT_EQ(kdaTileFloats(f32), 8 + 16 * (14 + 16 + 5));
}

// What a backward's prepare keeps besides, per chunk and head: the decayed
// queries and (I + A)⁻¹ in the input type.
TEST(KdaWorkspace, BackwardTilesFollowTheFormula) {
  const KdaKernelSpec production{DType::BF16, DType::F32, DType::BF16,
                                 128,         128,        64};
  EXPECT_EQ(4 * kdaBackwardTileFloats(production), 2 * 64 * (128 + 64));
  const KdaKernelSpec f32{DType::F32, DType::F32, DType::F32, 16, 8, 32};
  EXPECT_EQ(kdaBackwardTileFloats(f32), 32 * (16 + 32));
  // Odd dims: 16 · (60 + 16) bf16 round up to 152 chunks of 16 bytes.
  const KdaKernelSpec odd{DType::BF16, DType::F32, DType::F32, 60, 100, 16};
  EXPECT_EQ(kdaBackwardTileFloats(odd), 152 * 4);
}

// The reverse walk's per chunk and head: dS at the chunk's end and dU in
// the input type; the gradients kernel keeps nothing in device memory. A
// training step given the forward's boundaries holds the chunk tiles, the
// backward's tiles, these and the boundaries: 2568 bytes per token per head
// at the production shape, under the 3 KiB target.
TEST(KdaWorkspace, TrainingStepFollowsTheFormula) {
  const KdaKernelSpec production{DType::BF16, DType::F32, DType::BF16,
                                 128,         128,        64};
  EXPECT_EQ(4 * kdaGradientTileFloats(production), 2 * (128 * 128 + 64 * 128));
  const int64_t boundary = 2 * 128 * 128;
  const int64_t perChunk =
      4 * (kdaTileFloats(production) + kdaBackwardTileFloats(production) +
           kdaGradientTileFloats(production)) +
      boundary;
  EXPECT_EQ(perChunk / 64, 2568);
  EXPECT_LE(perChunk / 64, 3072);
  // f32 at K = 7, V = 5, chunk 16: 7·5 + 16·5 floats, whole chunks.
  const KdaKernelSpec f32{DType::F32, DType::F32, DType::F32, 7, 5, 16};
  EXPECT_EQ(kdaGradientTileFloats(f32), 116);
}

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

// prepare on sm_90a, its views promising 16-byte rows: q, k and v arrive by
// TMA (4-D boxes), g by cp.async, and nothing spills.
TEST(KdaKernelsNvrtc, PrepareLoadsItsRowsByTmaOnSm90a) {
  if (runtime::CudaToolkit::get().ptxas.empty())
    GTEST_SKIP() << "no ptxas beside NVRTC ("
                 << runtime::CudaToolkit::get().nvrtcLibrary << ")";
  runtime::NvrtcCompiler compiler(samples::deviceHeaders());
  for (int64_t features : {64, 128, 256}) {
    KdaKernelSpec spec{DType::BF16, DType::F32, DType::BF16,
                       features,    features,   64};
    spec.alignedViews = spec.tmaInputs = true;
    auto kernel = emitKdaKernel(spec, KdaStage::Prepare);
    EXPECT_THAT(kernel.entry, ::testing::EndsWith("_tma"));
    runtime::CudaBinary binary =
        compiler.compile({kernel.entry, kernel.source}, "sm_90a");
    EXPECT_THAT(binary.ptx,
                ::testing::HasSubstr("cp.async.bulk.tensor.4d.shared::cluster"))
        << kernel.entry;
    EXPECT_THAT(binary.ptx, ::testing::HasSubstr("cp.async.cg.shared.global"))
        << kernel.entry;
    const std::string report =
        samples::ptxasReport(kernel.entry, binary.ptx, "sm_90a");
    EXPECT_THAT(report, ::testing::HasSubstr("0 bytes spill stores"))
        << kernel.entry;
  }
}

} // namespace
