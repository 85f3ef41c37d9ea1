//===- CudaToolkitTest.cpp - NVRTC, headers and ptxas found at run time ---===//
//
// The toolkit is found wherever a standard install keeps it (lib64, lib,
// targets/<arch>-linux/lib), its headers and ptxas from the same toolkit, and
// a failed search names every place it looked.
//
//===----------------------------------------------------------------------===//

#include "runtime/compile/CudaToolkit.h"
#include "runtime/compile/NvrtcCompiler.h"
#include "test/support/TempFolders.h"

#include "rudnn/errors.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <sys/utsname.h>
#include <unistd.h>

using namespace rudnn;
using namespace rudnn::runtime;
using rudnn::test::freshDirectory;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

namespace {

TEST(CudaToolkit, DefaultSearchFindsNvrtcItsHeadersAndPtxas) {
  const CudaToolkit &toolkit = CudaToolkit::get();
  EXPECT_TRUE(fs::exists(toolkit.nvrtcLibrary)) << toolkit.nvrtcLibrary;
  EXPECT_THAT(fs::path(toolkit.nvrtcLibrary).filename().string(),
              HasSubstr("libnvrtc.so.1"));
  EXPECT_TRUE(fs::exists(fs::path(toolkit.includeDir) / "cuda_bf16.h"));
  EXPECT_EQ(cudaIncludeDir(), toolkit.includeDir);
  ASSERT_FALSE(toolkit.ptxas.empty());
  EXPECT_EQ(::access(toolkit.ptxas.c_str(), X_OK), 0) << toolkit.ptxas;
}

// A toolkit laid out as the CUDA packages of Debian/Ubuntu and the NVIDIA
// images do (only targets/<arch>-linux/lib and include, bin/ptxas): found
// from its root alone, everything taken from it.
TEST(CudaToolkit, FindsTheTargetsLayoutOfAStandardToolkit) {
  const CudaToolkit &system = CudaToolkit::get();
  struct utsname machine {};
  ::uname(&machine);
  const fs::path root = freshDirectory("targets");
  const fs::path target =
      root / "targets" / (std::string(machine.machine) + "-linux");
  fs::create_directories(target / "lib");
  fs::create_directories(target / "include");
  fs::create_directories(root / "bin");
  // A copy, not a link: the loader would otherwise report the original.
  fs::copy_file(system.nvrtcLibrary, target / "lib" / "libnvrtc.so.13");
  fs::create_symlink(fs::path(system.includeDir) / "cuda_fp16.h",
                     target / "include" / "cuda_fp16.h");
  fs::create_symlink(system.ptxas, root / "bin" / "ptxas");

  CudaToolkit found = CudaToolkit::locate({root.string()}, false);
  EXPECT_EQ(found.nvrtcLibrary, (target / "lib" / "libnvrtc.so.13").string());
  EXPECT_EQ(found.includeDir, (target / "include").string());
  EXPECT_EQ(found.ptxas, (root / "bin" / "ptxas").string());
  int major = 0, minor = 0;
  ASSERT_EQ(found.nvrtc.version(&major, &minor), NVRTC_SUCCESS);
  EXPECT_GE(major, 12);
  fs::remove_all(root);
}

// The NVIDIA wheels a pip-installed PyTorch brings (nvidia/cu13 in
// site-packages: lib/libnvrtc.so.13 and include/, no bin/): found from their
// root, with no ptxas.
TEST(CudaToolkit, FindsThePipWheelsLayout) {
  const CudaToolkit &system = CudaToolkit::get();
  const fs::path root = freshDirectory("cu13");
  fs::create_directories(root / "lib");
  fs::create_directories(root / "include");
  fs::copy_file(system.nvrtcLibrary, root / "lib" / "libnvrtc.so.13");
  fs::create_symlink(fs::path(system.includeDir) / "cuda_fp16.h",
                     root / "include" / "cuda_fp16.h");
  CudaToolkit found = CudaToolkit::locate({root.string()}, false);
  EXPECT_EQ(found.nvrtcLibrary, (root / "lib" / "libnvrtc.so.13").string());
  EXPECT_EQ(found.includeDir, (root / "include").string());
  EXPECT_TRUE(found.ptxas.empty()) << found.ptxas;
  fs::remove_all(root);
}

// $RUDNN_CUDA_ROOTS' roots come after every installed toolkit's, each once.
TEST(CudaToolkit, ExtraRootsAreSearchedLast) {
  const char *previous = std::getenv("RUDNN_CUDA_ROOTS");
  const std::string saved = previous ? previous : "";
  ::setenv("RUDNN_CUDA_ROOTS", "/pip/cu13::/other:/pip/cu13:/usr/local/cuda",
           1);
  const std::vector<std::string> roots = CudaToolkit::defaultRoots();
  previous ? ::setenv("RUDNN_CUDA_ROOTS", saved.c_str(), 1)
           : ::unsetenv("RUDNN_CUDA_ROOTS");
  ASSERT_GE(roots.size(), 3u);
  EXPECT_EQ(roots[roots.size() - 2], "/pip/cu13");
  EXPECT_EQ(roots.back(), "/other");
  EXPECT_EQ(std::count(roots.begin(), roots.end(), "/usr/local/cuda"), 1);
  EXPECT_LT(std::find(roots.begin(), roots.end(), "/usr/local/cuda") -
                roots.begin(),
            std::find(roots.begin(), roots.end(), "/pip/cu13") - roots.begin());
}

TEST(CudaToolkit, MissingNvrtcNamesEveryPlaceSearched) {
  const fs::path root = freshDirectory("empty");
  try {
    CudaToolkit::locate({root.string(), "/nonexistent/cuda"}, false);
    FAIL() << "found NVRTC in an empty folder";
  } catch (const Unsupported &error) {
    EXPECT_THAT(error.what(), HasSubstr("NVRTC not found"));
    EXPECT_THAT(error.what(),
                HasSubstr(root.string() + "/{lib64,lib,targets/"));
    EXPECT_THAT(error.what(), HasSubstr("/nonexistent/cuda/{lib64"));
    EXPECT_THAT(error.what(), HasSubstr("CUDA_HOME"));
  }
  fs::remove_all(root);
}

TEST(CudaToolkit, HeadersAndPtxasMayBeMissingWithoutHidingNvrtc) {
  const CudaToolkit &system = CudaToolkit::get();
  const fs::path root = freshDirectory("bare");
  fs::create_directories(root / "lib64");
  fs::copy_file(system.nvrtcLibrary, root / "lib64" / "libnvrtc.so.13");
  CudaToolkit found = CudaToolkit::locate({root.string()}, false);
  EXPECT_EQ(found.nvrtcLibrary, (root / "lib64" / "libnvrtc.so.13").string());
  EXPECT_TRUE(found.includeDir.empty()) << found.includeDir;
  EXPECT_TRUE(found.ptxas.empty()) << found.ptxas;
  EXPECT_THAT(found.includeSearched,
              ::testing::Contains((root / "include").string()));
  fs::remove_all(root);
}

} // namespace
