//===- rudnn/errors.h - Typed errors of the rudnn API -----------*- C++ -*-===//
//
// Every failure of the API is one of these exceptions; the C API maps each
// to its status code. Nothing is written to any output when one is thrown.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_ERRORS_H
#define RUDNN_ERRORS_H

#include <stdexcept>
#include <string>

namespace rudnn {

/// Status codes, shared with the C API (`rudnn_status_t`).
enum class Status : int {
  Ok = 0,
  InvalidArgument = 1,
  Unsupported = 2,
  CompileError = 3,
  DeviceError = 4,
  DeviceUnavailable = 5,
  Internal = 6,
};

/// The name of a status, e.g. "InvalidArgument".
const char *statusName(Status status);

class Error : public std::runtime_error {
public:
  Error(Status status, const std::string &message)
      : std::runtime_error(message), status_(status) {}
  Status status() const { return status_; }

private:
  Status status_;
};

/// A bad argument: names the argument and what was expected.
class InvalidArgument : public Error {
public:
  explicit InvalidArgument(const std::string &message)
      : Error(Status::InvalidArgument, message) {}
};

/// A valid request rudnn does not implement (dtype, architecture, ...).
class Unsupported : public Error {
public:
  explicit Unsupported(const std::string &message)
      : Error(Status::Unsupported, message) {}
};

/// A kernel failed to compile: its name, the compiler's full log and where
/// its source was dumped.
class CompileError : public Error {
public:
  CompileError(std::string kernel, std::string log, std::string sourcePath)
      : Error(Status::CompileError, "compiling kernel '" + kernel +
                                        "' failed (source: " + sourcePath +
                                        ")\n" + log),
        kernel_(std::move(kernel)), log_(std::move(log)),
        sourcePath_(std::move(sourcePath)) {}
  const std::string &kernel() const { return kernel_; }
  const std::string &log() const { return log_; }
  const std::string &sourcePath() const { return sourcePath_; }

private:
  std::string kernel_, log_, sourcePath_;
};

/// A CUDA call failed: the call and CUDA's error name.
class DeviceError : public Error {
public:
  DeviceError(std::string call, std::string cudaError,
              const std::string &detail = "")
      : Error(Status::DeviceError,
              call + " failed: " + cudaError +
                  (detail.empty() ? "" : " (" + detail + ")")),
        call_(std::move(call)), cudaError_(std::move(cudaError)) {}
  const std::string &call() const { return call_; }
  const std::string &cudaError() const { return cudaError_; }

private:
  std::string call_, cudaError_;
};

/// No CUDA driver or no device: everything that needs no GPU still works.
class DeviceUnavailable : public Error {
public:
  explicit DeviceUnavailable(const std::string &message)
      : Error(Status::DeviceUnavailable, message) {}
};

inline const char *statusName(Status status) {
  switch (status) {
  case Status::Ok:
    return "Ok";
  case Status::InvalidArgument:
    return "InvalidArgument";
  case Status::Unsupported:
    return "Unsupported";
  case Status::CompileError:
    return "CompileError";
  case Status::DeviceError:
    return "DeviceError";
  case Status::DeviceUnavailable:
    return "DeviceUnavailable";
  case Status::Internal:
    return "Internal";
  }
  return "Unknown";
}

} // namespace rudnn

#endif // RUDNN_ERRORS_H
