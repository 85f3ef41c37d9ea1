//===- NvrtcCompilerTest.cpp - NVRTC compilation without a GPU ------------===//

#include "runtime/compile/NvrtcCompiler.h"
#include "runtime/compile/CudaToolkit.h"
#include "test/support/DeviceHeaders.h"
#include "test/support/SampleKernels.h"
#include "test/support/TempFolders.h"

#include "rudnn/errors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

using namespace rudnn;
using namespace rudnn::runtime;
using rudnn::test::freshDirectory;
using rudnn::test::readFile;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

class NvrtcCompilerTest : public ::testing::TestWithParam<std::string> {
protected:
  NvrtcCompiler compiler{samples::deviceHeaders()};
};

TEST_P(NvrtcCompilerTest, CompilesTensorCoreKernelToCubinAndPtx) {
  const std::string arch = GetParam();
  CudaBinary binary =
      compiler.compile({samples::kMmaTileEntry, samples::kMmaTileSource}, arch);
  EXPECT_EQ(binary.entry, samples::kMmaTileEntry);
  EXPECT_EQ(binary.arch, arch);
  ASSERT_GE(binary.cubin.size(), 4u);
  EXPECT_EQ(binary.cubin.substr(0, 4), "\x7f"
                                       "ELF");
  EXPECT_THAT(binary.ptx, HasSubstr(".target " + arch));
  EXPECT_THAT(binary.ptx,
              HasSubstr("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32"));
  EXPECT_THAT(binary.ptx, HasSubstr(".entry mma_tile_bf16"));
  EXPECT_GT(binary.compileMilliseconds, 0.0);
}

TEST_P(NvrtcCompilerTest, PtxasAcceptsThePtx) {
  const std::string arch = GetParam();
  CudaBinary binary =
      compiler.compile({samples::kMmaTileEntry, samples::kMmaTileSource}, arch);
  const std::string &ptxas = CudaToolkit::get().ptxas;
  if (ptxas.empty())
    GTEST_SKIP() << "no ptxas beside NVRTC (" << CudaToolkit::get().nvrtcLibrary
                 << ")";
  fs::path directory = freshDirectory("ptxas-" + arch);
  std::ofstream(directory / "kernel.ptx") << binary.ptx;
  std::string command = ptxas + " -arch=" + arch + " " +
                        (directory / "kernel.ptx").string() + " -o " +
                        (directory / "kernel.cubin").string() + " 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  EXPECT_GT(fs::file_size(directory / "kernel.cubin"), 0u);
  fs::remove_all(directory);
}

INSTANTIATE_TEST_SUITE_P(Architectures, NvrtcCompilerTest,
                         ::testing::Values("sm_80", "sm_90"));

TEST(NvrtcCompiler, CompileErrorCarriesKernelNameLogAndSourceDump) {
  NvrtcCompiler compiler;
  try {
    compiler.compile({samples::kBrokenEntry, samples::kBrokenSource}, "sm_90");
    FAIL() << "a kernel with an undeclared name compiled";
  } catch (const CompileError &error) {
    EXPECT_EQ(error.kernel(), samples::kBrokenEntry);
    EXPECT_THAT(error.log(), HasSubstr("undeclared_name"));
    EXPECT_THAT(error.what(), HasSubstr("'broken'"));
    ASSERT_TRUE(fs::exists(error.sourcePath())) << error.sourcePath();
    EXPECT_EQ(readFile(error.sourcePath()), samples::kBrokenSource);
    EXPECT_EQ(error.status(), Status::CompileError);
  }
}

TEST(NvrtcCompiler, FindsTheToolkitsLibcuxxHeaders) {
  // As the CUDA Programming Guide's examples write a block-scoped barrier
  // and a grid of cooperative groups: their headers live in the toolkit's
  // cccl/ folder, which NVRTC is given.
  const std::string source = R"cuda(
#include <cooperative_groups.h>
#include <cuda/barrier>
namespace cg = cooperative_groups;
extern "C" __global__ void arrive(float *x) {
  __shared__ cuda::barrier<cuda::thread_scope_block> barrier;
  cg::thread_block block = cg::this_thread_block();
  if (block.thread_rank() == 0)
    init(&barrier, block.size());
  block.sync();
  barrier.arrive_and_wait();
  x[block.thread_rank()] = 1.0f;
}
)cuda";
  EXPECT_NO_THROW(NvrtcCompiler().compile({"arrive", source}, "sm_90"));
}

TEST(NvrtcCompiler, UnknownArchitectureIsUnsupported) {
  NvrtcCompiler compiler;
  for (const char *arch : {"sm_20", "gfx90a", "sm_", "sm_9x"})
    EXPECT_THROW(
        compiler.compile({samples::kAxpyEntry, samples::kAxpySource}, arch),
        Unsupported)
        << arch;
}

TEST(NvrtcCompiler, ReportsVersionAndArchitectures) {
  EXPECT_THAT(NvrtcCompiler::version(), ::testing::StartsWith("nvrtc "));
  std::vector<int> archs = NvrtcCompiler::supportedArchitectures();
  EXPECT_THAT(archs, ::testing::Contains(80));
  EXPECT_THAT(archs, ::testing::Contains(90));
  EXPECT_FALSE(cudaIncludeDir().empty());
}

TEST(NvrtcCompiler, DumpDirectoryReceivesThePtx) {
  fs::path directory = freshDirectory("dump");
  ::setenv("RUDNN_DUMP_DIR", directory.c_str(), 1);
  NvrtcCompiler compiler;
  CudaBinary binary =
      compiler.compile({samples::kAxpyEntry, samples::kAxpySource}, "sm_80");
  ::unsetenv("RUDNN_DUMP_DIR");
  EXPECT_EQ(readFile(directory / "axpy-sm_80.ptx"), binary.ptx);
  fs::remove_all(directory);
}

TEST(CudaBinary, SerializesLosslessly) {
  CudaBinary binary{"entry", "sm_90",   std::string("\0cubin\xff", 7),
                    "ptx",   "warning", 12.5};
  std::string bytes = binary.serialize();
  std::optional<CudaBinary> back = CudaBinary::deserialize(bytes);
  ASSERT_TRUE(back);
  EXPECT_EQ(back->entry, binary.entry);
  EXPECT_EQ(back->arch, binary.arch);
  EXPECT_EQ(back->cubin, binary.cubin);
  EXPECT_EQ(back->ptx, binary.ptx);
  EXPECT_EQ(back->log, binary.log);
  EXPECT_DOUBLE_EQ(back->compileMilliseconds, 12.5);

  EXPECT_FALSE(CudaBinary::deserialize(bytes.substr(0, bytes.size() - 1)));
  EXPECT_FALSE(CudaBinary::deserialize(bytes + "x"));
  EXPECT_FALSE(CudaBinary::deserialize("not a binary"));
}

} // namespace
