//===- DumpTest.cpp - File names rudnn writes under a folder --------------===//

#include "runtime/plans/Dump.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <unistd.h>

using namespace rudnn::runtime;
namespace fs = std::filesystem;

namespace {

TEST(PlainFileName, AcceptsIdentifiersAndRejectsPaths) {
  for (const char *name : {"kda_fwd_prepare-bf16.cu", "a", "x.1", "A-b_c.ptx"})
    EXPECT_TRUE(isPlainFileName(name)) << name;
  for (const char *name :
       {"", ".", "..", ".hidden", "../x", "a/b", "/etc/passwd", "a b", "a\nb",
        "a:b", "~x", "$HOME", "a\\b"})
    EXPECT_FALSE(isPlainFileName(name)) << name;
  EXPECT_TRUE(isPlainFileName(std::string(255, 'a')));
  EXPECT_FALSE(isPlainFileName(std::string(256, 'a')));
}

TEST(PlainFileName, WriteFileRefusesAnythingElse) {
  fs::path directory = fs::temp_directory_path() /
                       ("rudnn-dump-names-" + std::to_string(::getpid()));
  fs::remove_all(directory);
  fs::create_directories(directory / "inside");
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(writeFile((directory / "inside").string(), "../escaped", "x"), "");
  EXPECT_EQ(writeFile((directory / "inside").string(),
                      (directory / "absolute").string(), "x"),
            "");
  EXPECT_NE(
      ::testing::internal::GetCapturedStderr().find("not a plain file name"),
      std::string::npos);
  EXPECT_FALSE(fs::exists(directory / "escaped"));
  EXPECT_FALSE(fs::exists(directory / "absolute"));
  EXPECT_EQ(writeFile((directory / "inside").string(), "ok.txt", "x"),
            (directory / "inside" / "ok.txt").string());
  fs::remove_all(directory);
}

} // namespace
