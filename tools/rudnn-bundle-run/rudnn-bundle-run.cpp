//===- rudnn-bundle-run.cpp - Run a bundle on .npy files ------------------===//
//
// rudnn-bundle-run BUNDLE --inputs DIR [--outputs DIR] [--backend B]
//
// Loads a bundle (rudnn/bundle.h) with librudnn_runtime alone, reads each
// argument from DIR/<name>.npy (converted to its declared element type),
// runs the function and writes each result to the outputs directory
// (bfloat16 results as float32: NumPy has no bfloat16), all of them or none.
// Only plain names become file names. It links no compiler: what a
// deployment that serves a bundle runs.
//
//===----------------------------------------------------------------------===//

#include "runtime/support/InputFile.h"
#include "tools/npy/Npy.h"
#include "tools/support/ToolMain.h"

#include "rudnn/bundle.h"
#include "rudnn/version.h"

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <vector>

using namespace rudnn;
namespace fs = std::filesystem;

namespace {

/// A tensor in the bundle's memory, released with it.
struct Buffer {
  Bundle &bundle;
  void *data;
  Buffer(Bundle &bundle, size_t bytes)
      : bundle(bundle), data(bundle.allocate(bytes ? bytes : 1)) {}
  ~Buffer() { bundle.release(data); }
};

/// A bundle's names become file names under --inputs and --outputs.
void requireFileName(const char *what, const std::string &name) {
  if (!runtime::isPlainFileName(name + ".npy"))
    throw InvalidArgument(
        std::string(what) + " '" + name +
        "' cannot name a file: names used as file names are letters, "
        "digits, '_', '.' and '-', not starting with '.'");
}

int run(int argc, char **argv) {
  std::string path, inputs, outputs, backend = "auto";
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc)
        throw InvalidArgument(flag + " needs a value");
      return argv[++i];
    };
    if (flag == "--version") {
      std::printf("rudnn-bundle-run (rudnn %s)\n", version());
      return 0;
    } else if (flag == "--help" || flag == "-h") {
      std::printf("usage: rudnn-bundle-run BUNDLE --inputs DIR [--outputs "
                  "DIR] [--backend auto|cuda|emulation]\n");
      return 0;
    } else if (flag == "--inputs") {
      inputs = value();
    } else if (flag == "--outputs") {
      outputs = value();
    } else if (flag == "--backend") {
      backend = value();
    } else if (path.empty() && flag.rfind("--", 0) != 0) {
      path = flag;
    } else {
      throw InvalidArgument("unknown argument '" + flag + "'");
    }
  }
  if (path.empty() || inputs.empty())
    throw InvalidArgument("give BUNDLE and --inputs DIR (--help for more)");

  BundleOptions options;
  options.backend = backend;
  Bundle bundle = Bundle::load(path, options);
  std::printf("bundle %s: function %s on %s\n", path.c_str(),
              bundle.function().c_str(), bundle.target().c_str());

  // Whoever made the bundle chose its names: refused before any file is
  // read or written.
  for (const TensorInfo &info : bundle.arguments())
    requireFileName("argument", info.name);
  if (!outputs.empty())
    for (const TensorInfo &info : bundle.results())
      requireFileName("result", info.name);

  std::vector<std::unique_ptr<Buffer>> buffers;
  std::vector<TensorView> arguments;
  for (const TensorInfo &info : bundle.arguments()) {
    npy::Array array = npy::convert(
        npy::read((fs::path(inputs) / (info.name + ".npy")).string()),
        npy::elementTypeOf(info.dtype));
    buffers.push_back(std::make_unique<Buffer>(bundle, array.bytes.size()));
    bundle.copyToDevice(buffers.back()->data, array.bytes.data(),
                        array.bytes.size());
    arguments.push_back(
        TensorView::contiguous(buffers.back()->data, info.dtype, array.shape));
  }
  std::vector<TensorView> results;
  const std::vector<std::vector<int64_t>> shapes =
      bundle.resultShapes(arguments);
  for (size_t r = 0; r < shapes.size(); ++r) {
    const TensorInfo &info = bundle.results()[r];
    bool updated = false;
    for (size_t a = 0; a < arguments.size() && !info.updates.empty(); ++a)
      if (bundle.arguments()[a].name == info.updates) {
        results.push_back(arguments[a]);
        updated = true;
      }
    if (updated)
      continue;
    size_t bytes;
    if (__builtin_mul_overflow(static_cast<size_t>(npy::numElements(shapes[r])),
                               dtypeSize(info.dtype), &bytes))
      throw InvalidArgument("result '" + info.name + "' is too large");
    buffers.push_back(std::make_unique<Buffer>(bundle, bytes));
    std::vector<uint8_t> zeros(bytes);
    bundle.copyToDevice(buffers.back()->data, zeros.data(), bytes);
    results.push_back(
        TensorView::contiguous(buffers.back()->data, info.dtype, shapes[r]));
  }
  bundle.call(arguments, results);
  bundle.synchronize();

  std::vector<std::pair<std::string, npy::Array>> written;
  for (size_t r = 0; r < results.size(); ++r) {
    const TensorInfo &info = bundle.results()[r];
    npy::Array array;
    array.type = npy::elementTypeOf(info.dtype);
    array.shape = results[r].shape;
    array.bytes.resize(static_cast<size_t>(results[r].numel()) *
                       dtypeSize(info.dtype));
    bundle.copyToHost(array.bytes.data(), results[r].data, array.bytes.size());
    bundle.synchronize();
    std::printf("result %s: %s\n", info.name.c_str(),
                results[r].describe().c_str());
    if (array.type == npy::ElementType::BF16)
      array = npy::convert(array, npy::ElementType::F32);
    if (!outputs.empty())
      written.emplace_back(info.name, std::move(array));
  }
  if (outputs.empty())
    return 0;
  npy::writeAll(outputs, written);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  return rudnn::tools::runReportingErrors("rudnn-bundle-run", 1,
                                          [&] { return run(argc, argv); });
}
