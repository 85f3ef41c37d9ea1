//===- InputFile.cpp - Reading the files a caller names -------------------===//

#include "runtime/support/InputFile.h"

#include "rudnn/errors.h"

#include <cctype>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace rudnn;

namespace {

/// Closes a descriptor on every path out.
struct Descriptor {
  int fd;
  ~Descriptor() {
    if (fd >= 0)
      ::close(fd);
  }
};

std::string quoted(std::string_view what, const std::string &path) {
  return std::string(what) + " '" + path + "'";
}

/// Opens `path` without blocking and checks what it is; returns its size.
uint64_t openRegular(const std::string &path, std::string_view what,
                     uint64_t limit, Descriptor &file) {
  file.fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (file.fd < 0)
    throw InvalidArgument(quoted(what, path) +
                          ": cannot read it: " + std::strerror(errno));
  struct stat info {};
  if (::fstat(file.fd, &info) != 0)
    throw InvalidArgument(quoted(what, path) +
                          ": cannot stat it: " + std::strerror(errno));
  if (!S_ISREG(info.st_mode))
    throw InvalidArgument(quoted(what, path) + ": not a regular file (" +
                          (S_ISDIR(info.st_mode)    ? "a directory"
                           : S_ISFIFO(info.st_mode) ? "a FIFO"
                           : S_ISCHR(info.st_mode)  ? "a character device"
                           : S_ISBLK(info.st_mode)  ? "a block device"
                           : S_ISSOCK(info.st_mode) ? "a socket"
                                                    : "not a file") +
                          ")");
  const auto size = static_cast<uint64_t>(info.st_size);
  if (size > limit)
    throw InvalidArgument(quoted(what, path) + ": " + std::to_string(size) +
                          " bytes, more than the " + std::to_string(limit) +
                          " read at most");
  return size;
}

} // namespace

uint64_t runtime::checkInputFile(const std::string &path, std::string_view what,
                                 uint64_t limit) {
  Descriptor file{-1};
  return openRegular(path, what, limit, file);
}

bool runtime::isPlainFileName(std::string_view name) {
  if (name.empty() || name.size() > 255 || name.front() == '.')
    return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '.' &&
        c != '-')
      return false;
  return true;
}

void runtime::checkToolInput(const std::string &path, std::string_view what,
                             uint64_t limit) {
  if (path != "-") {
    checkInputFile(path, what, limit);
    return;
  }
  struct stat info {};
  if (::fstat(0, &info) != 0)
    throw InvalidArgument(std::string(what) +
                          " on the standard input: " + std::strerror(errno));
  // A terminal is typed into and /dev/null ends at once; other devices
  // (/dev/zero, /dev/urandom) never end.
  struct stat null {};
  const bool endingDevice = S_ISCHR(info.st_mode) &&
                            (::isatty(0) || (::stat("/dev/null", &null) == 0 &&
                                             null.st_rdev == info.st_rdev));
  if (!S_ISREG(info.st_mode) && !S_ISFIFO(info.st_mode) &&
      !S_ISSOCK(info.st_mode) && !endingDevice)
    throw InvalidArgument(std::string(what) +
                          " on the standard input: not a file or a pipe");
  if (S_ISREG(info.st_mode) && static_cast<uint64_t>(info.st_size) > limit)
    throw InvalidArgument(
        std::string(what) +
        " on the standard input: " + std::to_string(info.st_size) +
        " bytes, more than the " + std::to_string(limit) + " read at most");
}

std::string runtime::readInputFile(const std::string &path,
                                   std::string_view what, uint64_t limit) {
  Descriptor file{-1};
  const uint64_t size = openRegular(path, what, limit, file);
  std::string text;
  text.resize(size);
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::read(file.fd, text.data() + done, size - done);
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      throw InvalidArgument(quoted(what, path) +
                            ": cannot read it: " + std::strerror(errno));
    if (n == 0) // shrank while read: what is there
      break;
    done += static_cast<size_t>(n);
  }
  text.resize(done);
  return text;
}
