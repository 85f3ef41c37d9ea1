//===- rudnn-emulate.cpp - Run any CUDA kernel on the CPU -----------------===//
//
//   rudnn-emulate scale.cu --entry scale --grid 4 --block 128 --check
//                 --outputs out x.npy f32=2.5 i32=500
//
// Compiles the file with NVRTC (so only valid CUDA runs; --arch sm_90a for
// Hopper's wgmma and setmaxnreg), then runs one launch of the kernel in the
// emulator: .npy arguments are copied into device memory and passed as
// pointers, tmap:FILE.npy:box=...:swizzle=... as a TMA tensor map over such
// a copy (a `const __grid_constant__ rudnn::arch::TensorMap`), scalars by
// value, in the kernel's parameter order; after the launch every array is
// written to OUTPUTS/<its file name>. Exit status: 0 ran, 1 the kernel faulted
// (trap, failed assert, deadlock; with --check a race or an access outside the
// .npy argument it falls near: the report names kernel, block and thread),
// 2 bad usage or input, 3 the source does not compile. A library memcpy
// past an argument, which --check's hooks do not see, ends the process
// with SIGSEGV after the same report once it reaches the guard page.
//
//===----------------------------------------------------------------------===//

#include "tools/rudnn-emulate/KernelArguments.h"
#include "tools/support/CommandLine.h"
#include "tools/support/ToolMain.h"

#include "codegen/device/DeviceLibrary.h"
#include "runtime/backends/EmulationBackend.h"
#include "runtime/compile/NvrtcCompiler.h"
#include "runtime/support/InputFile.h"

#include "rudnn/errors.h"
#include "rudnn/version_number.h"

#include <boost/program_options.hpp>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <regex>
#include <set>
#include <sstream>

using namespace rudnn;
using namespace rudnn::emulate;
using namespace rudnn::runtime;
using rudnn::tools::parseCommandLine;
namespace fs = std::filesystem;
namespace po = boost::program_options;

namespace {

enum ExitStatus { Ran = 0, Faulted = 1, BadInput = 2, DoesNotCompile = 3 };

/// "4", "4,2" or "4,2,1".
Dim3 parseDims(const std::string &text, const char *option) {
  static const std::regex form(R"((\d{1,10})(?:,(\d{1,10}))?(?:,(\d{1,10}))?)");
  std::smatch match;
  if (!std::regex_match(text, match, form))
    throw InvalidArgument(std::string(option) + " wants X[,Y[,Z]], got '" +
                          text + "'");
  auto dim = [&](int i) -> unsigned {
    if (!match[i].matched)
      return 1;
    unsigned long long value = std::stoull(match.str(i));
    if (value == 0 || value > 0xffffffffull)
      throw InvalidArgument(std::string(option) + ": '" + match.str(i) +
                            "' is not a size from 1 to 4294967295");
    return static_cast<unsigned>(value);
  };
  return {dim(1), dim(2), dim(3)};
}

std::string readSource(const std::string &path) {
  return runtime::readInputFile(path, "source");
}

/// The device library, and the headers the file includes with quotes from
/// its own folder (recursively), for both compilers.
std::vector<HeaderFile> headersFor(const std::string &source,
                                   const fs::path &folder) {
  std::vector<HeaderFile> headers;
  for (const device::EmbeddedHeader &header : device::embeddedHeaders())
    headers.push_back({std::string(header.name), std::string(header.contents)});
  static const std::regex include(R"re(#\s*include\s*"([^"]+)")re");
  std::vector<std::string> pending = {source};
  std::set<std::string> seen;
  while (!pending.empty()) {
    std::string text = std::move(pending.back());
    pending.pop_back();
    for (std::sregex_iterator it(text.begin(), text.end(), include), end;
         it != end; ++it) {
      const std::string name = it->str(1);
      fs::path path = folder / name;
      if (!seen.insert(name).second || !fs::is_regular_file(path))
        continue;
      headers.push_back({name, readSource(path.string())});
      pending.push_back(headers.back().contents);
    }
  }
  return headers;
}

/// The tensor map `argument` asks for over its array's copy at `data`:
/// dims and strides from the array (innermost first, padded to 3 dims).
TensorMapRequest tensorMapOver(const KernelArgument &argument, DevicePtr data) {
  const NpyFile &array = argument.array;
  TensorMapRequest request;
  request.address = data;
  request.elementBytes = static_cast<uint32_t>(array.itemBytes);
  request.rank = static_cast<uint32_t>(argument.box.size());
  const size_t arrayRank = array.shape.size();
  uint64_t stride = array.itemBytes;
  for (uint32_t d = 0; d < request.rank; ++d) {
    // C order, the last axis fastest; the padding dims are 1.
    request.dims[d] =
        d < arrayRank ? static_cast<uint64_t>(array.shape[arrayRank - 1 - d])
                      : 1;
    if (d > 0)
      request.strideBytes[d - 1] = stride;
    stride *= request.dims[d];
    request.box[d] = argument.box[d];
  }
  request.swizzleBytes = argument.swizzleBytes;
  return request;
}

int runTool(int argc, char **argv) {
  std::string file, entry, grid, block, schedule, outputs, arch;
  uint32_t shared = 0;
  std::vector<std::string> arguments;
  po::options_description options(
      "rudnn-emulate KERNEL.cu --entry NAME --grid X[,Y,Z] --block X[,Y,Z] "
      "[options] ARG...\n\nEach ARG is a .npy file (passed as a pointer to a "
      "copy in device memory), a tensor map "
      "tmap:FILE.npy:box=B0xB1[xB2[xB3]]:swizzle=0|32|64|128 (a TMA map over "
      "such a copy, innermost dim first, passed by value) or a scalar i32=, "
      "u32=, i64=, u64=, f32=, f64=, in the kernel's parameter order.\n\n"
      "Options");
  options.add_options()("help,h", "this help")("version",
                                               "print rudnn's version")(
      "entry", po::value(&entry), "the extern \"C\" __global__ kernel to run")(
      "grid", po::value(&grid), "blocks: X[,Y[,Z]]")(
      "block", po::value(&block), "threads per block: X[,Y[,Z]]")(
      "shared", po::value(&shared)->default_value(0),
      "dynamic shared memory bytes")(
      "check",
      "check mode: report shared-memory races, collectives met at "
      "different call sites, spin-waits that never finish, and loads, "
      "stores and atomics outside the .npy argument they fall near (up to "
      "64 MiB, or its size if larger, before or past it; not an access "
      "landing in another argument, and a memcpy of variable length only "
      "once it reaches the page after it); approximations and tensor-core "
      "sums at their error bounds")(
      "schedule", po::value(&schedule)->default_value("forward"),
      "forward, reverse or random:SEED: the order of blocks and threads")(
      "outputs", po::value(&outputs),
      "after the launch, write every .npy argument to DIR/<its name>")(
      "arch", po::value(&arch)->default_value("sm_90"),
      "the architecture NVRTC checks the source for");
  const po::variables_map vm = parseCommandLine(
      argc, argv, options,
      {{"file", po::value(&file)}, {"argument", po::value(&arguments), -1}});
  if (vm.count("help")) {
    std::cout << options << "\n";
    return Ran;
  }
  if (vm.count("version")) {
    std::cout << "rudnn-emulate (rudnn " << RUDNN_VERSION_STRING << ")\n";
    return Ran;
  }
  if (file.empty() || entry.empty() || grid.empty() || block.empty())
    throw InvalidArgument(
        "give KERNEL.cu, --entry, --grid and --block (--help for more)");

  LaunchGeometry geometry{parseDims(grid, "--grid"),
                          parseDims(block, "--block"), shared};
  const std::string source = readSource(file);
  std::vector<KernelArgument> kernelArguments;
  std::set<std::string> outputNames;
  for (const std::string &text : arguments) {
    kernelArguments.push_back(parseArgument(text));
    const KernelArgument &argument = kernelArguments.back();
    if (argument.kind != KernelArgument::Kind::Array &&
        argument.kind != KernelArgument::Kind::TensorMap)
      continue;
    const fs::path name = fs::path(argument.array.path).filename();
    if (!outputNames.insert(name).second)
      throw InvalidArgument("two arguments named '" + name.string() +
                            "' would be written to the same output file");
  }

  // NVRTC first: only CUDA a GPU would accept runs, and its PTX says what
  // the kernel's parameters are.
  std::vector<HeaderFile> headers =
      headersFor(source, fs::path(file).parent_path());
  CudaBinary binary;
  try {
    binary = NvrtcCompiler(headers).compile({entry, source}, arch);
  } catch (const CompileError &error) {
    std::cerr << "rudnn-emulate: " << file << " does not compile with NVRTC "
              << "for " << arch << ":\n"
              << error.log() << "\n";
    return DoesNotCompile;
  }
  std::vector<PtxParameter> parameters = ptxParameters(binary.ptx, entry);
  if (parameters.size() != kernelArguments.size())
    throw InvalidArgument("kernel '" + entry + "' takes " +
                          std::to_string(parameters.size()) + " parameters, " +
                          std::to_string(kernelArguments.size()) + " given");
  for (size_t i = 0; i < parameters.size(); ++i)
    if (!fits(kernelArguments[i], parameters[i]))
      throw InvalidArgument(
          "argument " + std::to_string(i + 1) + " '" + kernelArguments[i].text +
          "' does not fit parameter " + std::to_string(i + 1) + " of '" +
          entry + "', ." + parameters[i].kind +
          std::to_string(8 * parameters[i].bytes) +
          (parameters[i].kind == 'u' && parameters[i].bytes == 8
               ? " (a pointer wants a .npy file)"
               : ""));

  EmulationOptions emulationOptions =
      EmulationOptions::fromEnvironment(std::move(headers));
  emulationOptions.check = vm.count("check") > 0;
  emulationOptions.sanitize = false;
  emulationOptions.schedule = Schedule::parse(schedule);
  EmulationBackend backend(emulationOptions);
  std::shared_ptr<LoadedKernel> kernel;
  try {
    // Reports (asserts, call sites) name the user's file and lines.
    std::string named = "#line 1 \"";
    for (char c : fs::absolute(file).string())
      named +=
          c == '"' || c == '\\' ? std::string("\\") + c : std::string(1, c);
    named += "\"\n" + source;
    kernel = backend.load(backend.compile({entry, named}), entry);
  } catch (const CompileError &error) {
    std::cerr << "rudnn-emulate: " << file
              << " compiles with NVRTC but not for emulation:\n"
              << error.log() << "\n";
    return DoesNotCompile;
  }

  ArgPack pack;
  std::vector<DevicePtr> buffers(kernelArguments.size(), 0);
  for (size_t i = 0; i < kernelArguments.size(); ++i) {
    const KernelArgument &argument = kernelArguments[i];
    if (argument.kind == KernelArgument::Kind::Array ||
        argument.kind == KernelArgument::Kind::TensorMap) {
      const std::string &data = argument.array.data;
      buffers[i] = backend.allocate(std::max<size_t>(1, data.size()));
      backend.copyToDevice(buffers[i], data.data(), data.size(), nullptr);
      if (argument.kind == KernelArgument::Kind::Array)
        pack.push(buffers[i]);
      else
        pack.push(backend.encodeTensorMap(tensorMapOver(argument, buffers[i])));
    } else if (argument.bytes() == 4) {
      pack.push(static_cast<uint32_t>(argument.bits));
    } else {
      pack.push(argument.bits);
    }
  }
  int status = Ran;
  try {
    backend.launch(*kernel, geometry, pack, nullptr);
  } catch (const DeviceError &error) {
    std::cerr << "rudnn-emulate: " << error.what() << "\n";
    // An out-of-bounds report names the allocation by address: say which
    // argument that is.
    const std::string report = error.what();
    for (size_t i = 0; i < buffers.size(); ++i) {
      char address[32];
      std::snprintf(address, sizeof address, "%p",
                    reinterpret_cast<void *>(buffers[i]));
      if (buffers[i] &&
          report.find(" at " + std::string(address) + ")") != std::string::npos)
        std::cerr << "rudnn-emulate: the allocation at " << address
                  << " is argument " << i + 1 << ", " << kernelArguments[i].text
                  << "\n";
    }
    status = Faulted;
  }
  if (status == Ran && !outputs.empty()) {
    fs::create_directories(outputs);
    for (size_t i = 0; i < kernelArguments.size(); ++i) {
      if (!buffers[i])
        continue;
      NpyFile result = kernelArguments[i].array;
      backend.copyToHost(result.data.data(), buffers[i], result.data.size(),
                         nullptr);
      writeNpy((fs::path(outputs) / fs::path(result.path).filename()).string(),
               result);
    }
  }
  for (DevicePtr buffer : buffers)
    if (buffer)
      backend.release(buffer);
  return status;
}

} // namespace

int main(int argc, char **argv) {
  return rudnn::tools::runReportingErrors("rudnn-emulate", BadInput,
                                          [&] { return runTool(argc, argv); });
}
