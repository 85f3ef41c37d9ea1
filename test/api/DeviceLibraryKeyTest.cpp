//===- DeviceLibraryKeyTest.cpp - Kernels keyed on what they include ------===//
//
// A kernel's cache key covers exactly the device library headers it
// includes: editing one family's header compiles that family's kernels
// again and leaves every other family's cached kernels valid.
//
//===----------------------------------------------------------------------===//

#include "codegen/device/DeviceLibrary.h"
#include "lib/ContextImpl.h"
#include "runtime/compile/HeaderLibrary.h"

#include "rudnn/rudnn.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>

using namespace rudnn;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;
namespace fs = std::filesystem;

namespace {

const runtime::KernelSource kNormKernel{
    "norm_probe", "#include \"rudnn/norm.cuh\"\n"
                  "extern \"C\" __global__ void norm_probe(float *x) {\n"
                  "  x[0] = 1;\n}\n"};
const runtime::KernelSource kKdaKernel{
    "kda_probe", "#include \"rudnn/kda.cuh\"\n"
                 "extern \"C\" __global__ void kda_probe(float *x) {\n"
                 "  x[0] = 2;\n}\n"};

class DeviceLibraryKeyTest : public ::testing::Test {
protected:
  void SetUp() override {
    root = fs::temp_directory_path() /
           ("rudnn-device-library-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root);
    fs::create_directories(root / "cache");
  }
  void TearDown() override { fs::remove_all(root); }

  ContextOptions options() const {
    ContextOptions options;
    options.cacheDirectory = (root / "cache").string();
    return options;
  }

  /// A device library folder holding `name` (under "rudnn/") with `text`
  /// appended to the embedded contents.
  fs::path editedLibrary(const std::string &name, const std::string &text) {
    fs::path folder = root / "library";
    for (const runtime::HeaderFile &header : device::headerFiles()) {
      if (header.name != "rudnn/" + name)
        continue;
      fs::create_directories((folder / name).parent_path());
      std::ofstream(folder / name) << header.contents << text;
      return folder;
    }
    ADD_FAILURE() << "no header " << name;
    return folder;
  }

  fs::path root;
};

TEST_F(DeviceLibraryKeyTest, FamiliesIncludeTheCoreAndNotEachOther) {
  runtime::HeaderLibrary library(device::headerFiles());
  std::vector<std::string> norm = library.includedBy(kNormKernel.source);
  std::vector<std::string> kda = library.includedBy(kKdaKernel.source);
  for (const std::vector<std::string> *closure : {&norm, &kda}) {
    EXPECT_THAT(*closure, Contains("rudnn/core.cuh"));
    EXPECT_THAT(*closure, Contains("rudnn/arch/mma.cuh"));
    EXPECT_THAT(*closure, Not(Contains("rudnn/device.cuh")));
    EXPECT_THAT(*closure, Not(Contains("rudnn/attention/forward.cuh")));
    EXPECT_THAT(*closure, Not(Contains("rudnn/lstm/recurrence.cuh")));
  }
  EXPECT_THAT(norm, Contains("rudnn/norm/rows.cuh"));
  EXPECT_THAT(norm, Not(Contains("rudnn/kda/forward.cuh")));
  EXPECT_THAT(kda, Contains("rudnn/kda/forward.cuh"));
  EXPECT_THAT(kda, Not(Contains("rudnn/norm/rows.cuh")));
  EXPECT_NE(library.hashIncludedBy(kNormKernel.source),
            library.hashIncludedBy(kKdaKernel.source));
  // Another kernel of the family includes the same headers: the same hash.
  EXPECT_EQ(library.hashIncludedBy(kNormKernel.source),
            library.hashIncludedBy("#include \"rudnn/norm.cuh\"\n"
                                   "// another norm kernel\n"));
  // A source including nothing of the library depends on none of it.
  EXPECT_TRUE(library.includedBy("#include <cuda_fp16.h>\n").empty());
}

TEST_F(DeviceLibraryKeyTest, IncludesAreFoundThroughDirectivesOnly) {
  EXPECT_EQ(runtime::quotedIncludes("#include \"a.cuh\"\n"
                                    "  #  include \"b/c.cuh\" // why\n"
                                    "// #include \"comment.cuh\" is text\n"
                                    "#include <system.h>\n"
                                    "#define INCLUDE \"d.cuh\"\n"
                                    "#include \"unterminated\n"
                                    "#include \"last.cuh\""),
            (std::vector<std::string>{"a.cuh", "b/c.cuh", "last.cuh"}));
}

TEST_F(DeviceLibraryKeyTest, EditingANormHeaderRecompilesOnlyNormKernels) {
  {
    Context context(options());
    context.impl().compileForArch(kNormKernel, "sm_90");
    context.impl().compileForArch(kKdaKernel, "sm_90");
    ASSERT_EQ(context.counters().kernelsCompiled, 2u);
  }
  ContextOptions edited = options();
  edited.deviceLibraryDirectory =
      editedLibrary("norm/rows.cuh", "\nextern \"C\" __global__ void "
                                     "rudnn_edited_marker() {}\n")
          .string();
  Context context(edited);
  context.impl().compileForArch(kKdaKernel, "sm_90");
  EXPECT_EQ(context.counters().kernelsCompiled, 0u);
  EXPECT_EQ(context.counters().kernelCacheDiskHits, 1u);
  auto binary = runtime::CudaBinary::deserialize(
      *context.impl().compileForArch(kNormKernel, "sm_90"));
  EXPECT_EQ(context.counters().kernelsCompiled, 1u);
  // The edited header, not the embedded one, was compiled.
  ASSERT_TRUE(binary);
  EXPECT_THAT(binary->ptx, HasSubstr("rudnn_edited_marker"));
}

TEST_F(DeviceLibraryKeyTest, AnEnvironmentFolderIsUsedToo) {
  fs::path folder = editedLibrary("kda/heads.cuh", "\n// edited\n");
  ::setenv("RUDNN_DEVICE_LIBRARY", folder.c_str(), 1);
  Context fromEnvironment(options());
  ::unsetenv("RUDNN_DEVICE_LIBRARY");
  Context embedded(options());
  EXPECT_NE(fromEnvironment.impl().library.hashIncludedBy(kKdaKernel.source),
            embedded.impl().library.hashIncludedBy(kKdaKernel.source));
  EXPECT_EQ(fromEnvironment.impl().library.hashIncludedBy(kNormKernel.source),
            embedded.impl().library.hashIncludedBy(kNormKernel.source));
}

TEST_F(DeviceLibraryKeyTest, AMissingFolderIsRefusedByName) {
  ContextOptions missing = options();
  missing.deviceLibraryDirectory = (root / "absent").string();
  try {
    Context context(missing);
    FAIL() << "a missing folder was accepted";
  } catch (const InvalidArgument &error) {
    EXPECT_THAT(error.what(), HasSubstr((root / "absent").string()));
  }
}

} // namespace
