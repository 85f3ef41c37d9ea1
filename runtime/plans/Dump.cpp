//===- Dump.cpp - RUDNN_DUMP_DIR: generated sources, PTX and plans --------===//

#include "runtime/plans/Dump.h"
#include "runtime/support/Log.h"

#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>

using namespace rudnn::runtime;
namespace fs = std::filesystem;

std::optional<std::string> rudnn::runtime::dumpDirectory() {
  const char *value = std::getenv("RUDNN_DUMP_DIR");
  if (!value || !*value)
    return std::nullopt;
  return std::string(value);
}

std::string rudnn::runtime::writeFile(const std::string &directory,
                                      const std::string &fileName,
                                      const std::string &contents) {
  if (!isPlainFileName(fileName)) {
    warn("not writing '" + fileName + "': not a plain file name");
    return "";
  }
  std::error_code error;
  fs::create_directories(directory, error);
  fs::path path = fs::path(directory) / fileName;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  out.close();
  if (!out) {
    warn("cannot write " + path.string());
    return "";
  }
  return path.string();
}

std::string rudnn::runtime::dumpIfRequested(const std::string &fileName,
                                            const std::string &contents) {
  std::optional<std::string> directory = dumpDirectory();
  if (!directory)
    return "";
  std::string path = writeFile(*directory, fileName, contents);
  if (!path.empty())
    log(LogLevel::Debug, "dumped " + path);
  return path;
}
