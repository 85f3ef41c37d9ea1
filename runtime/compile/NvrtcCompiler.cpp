//===- NvrtcCompiler.cpp - CUDA C++ to cubin + PTX with NVRTC -------------===//

#include "runtime/compile/NvrtcCompiler.h"
#include "runtime/cache/Hash.h"
#include "runtime/compile/CudaToolkit.h"
#include "runtime/plans/Dump.h"
#include "runtime/support/Log.h"

#include "rudnn/errors.h"

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <sys/stat.h>
#include <system_error>
#include <unistd.h>

using namespace rudnn;
using namespace rudnn::runtime;
namespace fs = std::filesystem;

const std::string &rudnn::runtime::cudaIncludeDir() {
  const CudaToolkit &toolkit = CudaToolkit::get();
  if (toolkit.includeDir.empty()) {
    std::string places;
    for (const std::string &dir : toolkit.includeSearched)
      places += " " + dir;
    throw Unsupported("CUDA headers not found: no cuda_fp16.h beside NVRTC (" +
                      toolkit.nvrtcLibrary + ") nor in" + places +
                      "; set CUDA_HOME to the CUDA toolkit");
  }
  return toolkit.includeDir;
}

static const Nvrtc &nvrtc() { return CudaToolkit::get().nvrtc; }

/// Throws Internal-status errors for NVRTC failures outside compilation.
static void check(nvrtcResult result, const char *call) {
  if (result != NVRTC_SUCCESS)
    throw Error(Status::Internal, std::string(call) + " failed: " +
                                      nvrtc().getErrorString(result));
}

/// "sm_90a" -> 90; nullopt for anything that is not sm_<digits>[a].
static std::optional<int> parseArch(const std::string &arch) {
  if (arch.rfind("sm_", 0) != 0)
    return std::nullopt;
  std::string digits = arch.substr(3);
  if (!digits.empty() && digits.back() == 'a')
    digits.pop_back();
  if (digits.empty() || !std::all_of(digits.begin(), digits.end(), [](char c) {
        return c >= '0' && c <= '9';
      }))
    return std::nullopt;
  return std::stoi(digits);
}

NvrtcCompiler::NvrtcCompiler(std::vector<HeaderFile> headers)
    : headers_(std::move(headers)) {}

std::string NvrtcCompiler::version() {
  int major = 0, minor = 0;
  check(nvrtc().version(&major, &minor), "nvrtcVersion");
  return "nvrtc " + std::to_string(major) + "." + std::to_string(minor);
}

std::vector<int> NvrtcCompiler::supportedArchitectures() {
  int count = 0;
  check(nvrtc().getNumSupportedArchs(&count), "nvrtcGetNumSupportedArchs");
  std::vector<int> archs(count);
  check(nvrtc().getSupportedArchs(archs.data()), "nvrtcGetSupportedArchs");
  return archs;
}

std::vector<std::string> NvrtcCompiler::options(const std::string &arch) const {
  std::vector<std::string> options = {"--gpu-architecture=" + arch,
                                      "--std=c++17",
                                      "--include-path=" + cudaIncludeDir()};
  // libcu++ (<cuda/barrier>, <cuda/pipeline>, <cuda/std/...>), which
  // cooperative_groups.h includes too, lives in cccl/ in CUDA 13.
  std::error_code error;
  if (const fs::path cccl = fs::path(cudaIncludeDir()) / "cccl";
      fs::is_directory(cccl / "cuda", error))
    options.push_back("--include-path=" + cccl.string());
  return options;
}

std::string NvrtcCompiler::identity(const std::string &arch) const {
  std::string text = version() + "; " + arch + ";";
  for (const std::string &option : options(arch))
    text += " " + option;
  return text;
}

/// Where a failing kernel's source goes: RUDNN_DUMP_DIR, else
/// $TMPDIR/rudnn-failed-<uid>, a folder of this user's that outlives the
/// process, so the path in the error can still be opened afterwards.
static std::string dumpFailedSource(const KernelSource &kernel) {
  std::string fileName =
      kernel.entry + "-" + hash128(kernel.source).hex().substr(0, 12) + ".cu";
  if (std::string path = dumpIfRequested(fileName, kernel.source);
      !path.empty())
    return path;
  std::error_code error;
  const fs::path directory = fs::temp_directory_path(error) /
                             ("rudnn-failed-" + std::to_string(::geteuid()));
  ::mkdir(directory.c_str(), 0700);
  struct stat info {};
  std::string path;
  // Only into a real folder of this user's that no one else can write.
  if (::lstat(directory.c_str(), &info) == 0 && S_ISDIR(info.st_mode) &&
      info.st_uid == ::geteuid() && (info.st_mode & 022) == 0)
    path = writeFile(directory.string(), fileName, kernel.source);
  else
    warn("cannot keep the failed source in " + directory.string());
  return path.empty() ? "<not written>" : path;
}

CudaBinary NvrtcCompiler::compile(const KernelSource &kernel,
                                  const std::string &target) const {
  std::string arch = target;
  if (kernel.archSpecific && arch.back() != 'a') {
    if (arch != "sm_90")
      throw Unsupported("kernel '" + kernel.entry +
                        "' uses sm_90a instructions and cannot run on " + arch +
                        "; specialize for the device's architecture");
    arch += 'a';
  }
  std::optional<int> capability = parseArch(arch);
  std::vector<int> supported = supportedArchitectures();
  if (!capability || std::find(supported.begin(), supported.end(),
                               *capability) == supported.end())
    throw Unsupported("NVRTC (" + version() + ") cannot target '" + arch + "'");

  auto start = std::chrono::steady_clock::now();
  std::vector<const char *> headerContents, headerNames;
  for (const HeaderFile &header : headers_) {
    headerContents.push_back(header.contents.c_str());
    headerNames.push_back(header.name.c_str());
  }
  nvrtcProgram program;
  std::string sourceName = kernel.entry + ".cu";
  check(nvrtc().createProgram(&program, kernel.source.c_str(),
                              sourceName.c_str(),
                              static_cast<int>(headers_.size()),
                              headerContents.data(), headerNames.data()),
        "nvrtcCreateProgram");
  struct Destroy {
    nvrtcProgram &program;
    ~Destroy() { nvrtc().destroyProgram(&program); }
  } destroy{program};

  std::vector<std::string> optionStrings = options(arch);
  std::vector<const char *> optionPointers;
  for (const std::string &option : optionStrings)
    optionPointers.push_back(option.c_str());
  nvrtcResult result = nvrtc().compileProgram(
      program, static_cast<int>(optionPointers.size()), optionPointers.data());

  size_t logSize = 0;
  check(nvrtc().getProgramLogSize(program, &logSize), "nvrtcGetProgramLogSize");
  std::string compilerLog(logSize, '\0');
  check(nvrtc().getProgramLog(program, compilerLog.data()),
        "nvrtcGetProgramLog");
  while (!compilerLog.empty() &&
         (compilerLog.back() == '\0' || compilerLog.back() == '\n'))
    compilerLog.pop_back();
  if (result != NVRTC_SUCCESS)
    throw CompileError(kernel.entry, compilerLog, dumpFailedSource(kernel));

  CudaBinary binary;
  binary.entry = kernel.entry;
  binary.arch = arch;
  binary.log = compilerLog;
  size_t size = 0;
  check(nvrtc().getCUBINSize(program, &size), "nvrtcGetCUBINSize");
  binary.cubin.resize(size);
  check(nvrtc().getCUBIN(program, binary.cubin.data()), "nvrtcGetCUBIN");
  check(nvrtc().getPTXSize(program, &size), "nvrtcGetPTXSize");
  binary.ptx.resize(size);
  check(nvrtc().getPTX(program, binary.ptx.data()), "nvrtcGetPTX");
  while (!binary.ptx.empty() && binary.ptx.back() == '\0')
    binary.ptx.pop_back();
  binary.compileMilliseconds = std::chrono::duration<double, std::milli>(
                                   std::chrono::steady_clock::now() - start)
                                   .count();

  log(LogLevel::Info, "compiled " + kernel.entry + " for " + arch + " in " +
                          std::to_string(binary.compileMilliseconds) + " ms");
  // The source is the requester's to dump (once, under its own name).
  dumpIfRequested(kernel.entry + "-" + arch + ".ptx", binary.ptx);
  return binary;
}
