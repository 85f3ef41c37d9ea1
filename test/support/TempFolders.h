//===- TempFolders.h - Fresh folders and whole files for tests --*- C++ -*-===//

#ifndef RUDNN_TEST_SUPPORT_TEMPFOLDERS_H
#define RUDNN_TEST_SUPPORT_TEMPFOLDERS_H

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <unistd.h>

namespace rudnn::test {

/// An empty folder of the test's own under the temporary folder: `name`
/// and the process id keep parallel tests apart.
inline std::filesystem::path freshDirectory(const std::string &name) {
  std::filesystem::path path =
      std::filesystem::temp_directory_path() /
      ("rudnn-test-" + name + "-" + std::to_string(::getpid()));
  std::filesystem::remove_all(path);
  std::filesystem::create_directories(path);
  return path;
}

/// The bytes of `path` (empty when it cannot be read).
inline std::string readFile(const std::filesystem::path &path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

} // namespace rudnn::test

#endif // RUDNN_TEST_SUPPORT_TEMPFOLDERS_H
