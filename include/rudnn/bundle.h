//===- rudnn/bundle.h - Compiled functions, run without a compiler -*- C++
//-*-===//
//
// A bundle is one function of rudnn IR compiled ahead of time: its plan and
// kernels for each target it was built for (cubin and PTX per GPU
// architecture, or the emulation backend's), and its arguments and results.
// It is saved by `rudnn-translate --rudnn-to-bundle` or
// Function::saveBundle, and loaded and called by librudnn_runtime alone: a
// program serving it links no compiler, no LLVM and no MLIR.
//
//   rudnn::Bundle norm = rudnn::Bundle::load("rms_norm.rudnn");
//   norm.call({x, gamma}, {y, rstd}, stream);
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_BUNDLE_H
#define RUDNN_BUNDLE_H

#include "rudnn/errors.h"
#include "rudnn/types.h"

#include <memory>
#include <string>
#include <vector>

namespace rudnn {

struct BundleOptions {
  /// "auto": the GPU when there is one, else emulation (RUDNN_BACKEND
  /// decides first); "cuda"; "emulation".
  std::string backend = "auto";
  int deviceOrdinal = 0;
};

class Bundle {
public:
  /// Reads and verifies a bundle (format, version, checksum, and every
  /// index, name, rank, element type, layout and shape it holds against the
  /// others) and chooses the target the backend runs: the device's
  /// architecture, or the newest one below it (its PTX), or "emulation".
  /// Its kernels are loaded at the first call that launches them, after that
  /// call's checks. A bundle is code: load only bundles you trust as you
  /// would a shared library (the checksum detects damage, not tampering).
  /// Throws InvalidArgument naming the file for a damaged, malformed or
  /// foreign one, Unsupported when no target fits, DeviceUnavailable when
  /// the backend cannot be had.
  static Bundle load(const std::string &path,
                     const BundleOptions &options = {});

  const std::string &function() const;
  const std::vector<TensorInfo> &arguments() const;
  const std::vector<TensorInfo> &results() const;
  /// The targets the file holds, and the one in use.
  const std::vector<std::string> &targets() const;
  const std::string &target() const;

  /// The shapes the results take for these arguments.
  std::vector<std::vector<int64_t>>
  resultShapes(const std::vector<TensorView> &arguments) const;

  /// Runs the function: every argument and result, in declaration order,
  /// checked as Function::call checks them (element type, rank, sizes, one
  /// size per dim letter, layout and aliasing), before anything is loaded
  /// or runs.
  void call(const std::vector<TensorView> &arguments,
            const std::vector<TensorView> &results, Stream stream = nullptr);

  /// The backend's memory (host memory for emulation) and copies.
  void *allocate(size_t bytes);
  void release(void *pointer);
  void copyToDevice(void *dst, const void *src, size_t bytes,
                    Stream stream = nullptr);
  void copyToHost(void *dst, const void *src, size_t bytes,
                  Stream stream = nullptr);
  void synchronize(Stream stream = nullptr);

  struct Impl;

private:
  explicit Bundle(std::shared_ptr<Impl> impl) : impl(std::move(impl)) {}
  std::shared_ptr<Impl> impl;
};

} // namespace rudnn

#endif // RUDNN_BUNDLE_H
