//===- CudaToolkit.cpp - NVRTC, headers and ptxas found at run time -------===//

#include "runtime/compile/CudaToolkit.h"
#include "runtime/support/Log.h"

#include "rudnn/errors.h"

#include <dlfcn.h>
#include <link.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <optional>

using namespace rudnn;
using namespace rudnn::runtime;
namespace fs = std::filesystem;

/// NVRTC's sonames, newest first; the entry points rudnn uses are the same.
static const char *const kNvrtcNames[] = {"libnvrtc.so.13", "libnvrtc.so.12"};

static std::string environment(const char *name) {
  const char *value = std::getenv(name);
  return value ? value : "";
}

/// Toolkit roots in the order they are trusted: the user's, the one rudnn
/// was built against, the standard install folders, then those listed in
/// $RUDNN_CUDA_ROOTS (':'-separated; the Python package names the NVRTC
/// and headers a pip-installed PyTorch brings, nvidia/cu13 in
/// site-packages, whose lib/ and include/ are laid out as a toolkit's).
std::vector<std::string> CudaToolkit::defaultRoots() {
  std::vector<std::string> candidates = {
      environment("CUDA_HOME"), environment("CUDA_PATH"),
      std::string(RUDNN_CUDA_ROOT), std::string("/usr/local/cuda"),
      std::string("/opt/cuda")};
  const std::string extra = environment("RUDNN_CUDA_ROOTS");
  for (size_t start = 0; start <= extra.size();) {
    const size_t end = std::min(extra.find(':', start), extra.size());
    candidates.push_back(extra.substr(start, end - start));
    start = end + 1;
  }
  std::vector<std::string> roots;
  for (const std::string &root : candidates)
    if (!root.empty() &&
        std::find(roots.begin(), roots.end(), root) == roots.end())
      roots.push_back(root);
  return roots;
}

/// "x86_64" or "sbsa": the name of the toolkit's targets/ folder.
static std::string targetFolder() {
  struct utsname name {};
  ::uname(&name);
  std::string machine = name.machine;
  return (machine == "aarch64" ? std::string("sbsa") : machine) + "-linux";
}

/// The folder a loaded library came from, through the loader's own record.
static fs::path loadedFrom(void *handle) {
  struct link_map *map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) != 0 || !map || !map->l_name)
    return {};
  return fs::path(map->l_name).parent_path();
}

/// The toolkit root a library folder belongs to: <root>/lib64, <root>/lib or
/// <root>/targets/<arch>/lib.
static fs::path rootOf(const fs::path &libraryDir) {
  fs::path parent = libraryDir.parent_path();
  if (parent.parent_path().filename() == "targets")
    return parent.parent_path().parent_path();
  return parent;
}

template <typename Function>
static void resolve(void *handle, Function &slot, const char *name) {
  slot = reinterpret_cast<Function>(dlsym(handle, name));
  if (!slot)
    throw Unsupported(std::string("NVRTC library lacks ") + name);
}

CudaToolkit CudaToolkit::locate(const std::vector<std::string> &rootNames,
                                bool loaderPath) {
  const std::vector<fs::path> toolkitRoots(rootNames.begin(), rootNames.end());
  CudaToolkit toolkit;
  void *handle = nullptr;
  std::string reasons;
  auto tryOpen = [&](const std::string &name) {
    toolkit.nvrtcSearched.push_back(name);
    handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char *reason = dlerror();
      if (reason && fs::exists(name))
        reasons += std::string("\n  ") + reason;
    }
    return handle != nullptr;
  };
  const std::string target = targetFolder();
  for (const fs::path &root : toolkitRoots) {
    for (const fs::path &dir :
         {root / "lib64", root / "lib", root / "targets" / target / "lib"})
      for (const char *soname : kNvrtcNames)
        if (fs::exists(dir / soname) && tryOpen((dir / soname).string()))
          break;
    if (handle)
      break;
  }
  // The dynamic loader's path: LD_LIBRARY_PATH, the ld.so cache.
  for (const char *soname : kNvrtcNames)
    if (loaderPath && !handle && tryOpen(soname))
      break;
  if (!handle) {
    std::string places;
    for (const fs::path &root : toolkitRoots)
      places +=
          " " + (root / ("{lib64,lib,targets/" + target + "/lib}")).string();
    throw Unsupported("NVRTC not found: no libnvrtc.so.13 or libnvrtc.so.12 "
                      "in" +
                      places +
                      (loaderPath ? " or on the dynamic loader's path" : "") +
                      "; install the CUDA toolkit (12.x or 13.x) or set "
                      "CUDA_HOME to it (or pip install nvidia-cuda-nvrtc for "
                      "the Python package)" +
                      reasons);
  }

  Nvrtc &n = toolkit.nvrtc;
  resolve(handle, n.getErrorString, "nvrtcGetErrorString");
  resolve(handle, n.version, "nvrtcVersion");
  resolve(handle, n.getNumSupportedArchs, "nvrtcGetNumSupportedArchs");
  resolve(handle, n.getSupportedArchs, "nvrtcGetSupportedArchs");
  resolve(handle, n.createProgram, "nvrtcCreateProgram");
  resolve(handle, n.destroyProgram, "nvrtcDestroyProgram");
  resolve(handle, n.compileProgram, "nvrtcCompileProgram");
  resolve(handle, n.getProgramLogSize, "nvrtcGetProgramLogSize");
  resolve(handle, n.getProgramLog, "nvrtcGetProgramLog");
  resolve(handle, n.getCUBINSize, "nvrtcGetCUBINSize");
  resolve(handle, n.getCUBIN, "nvrtcGetCUBIN");
  resolve(handle, n.getPTXSize, "nvrtcGetPTXSize");
  resolve(handle, n.getPTX, "nvrtcGetPTX");

  const fs::path libraryDir = loadedFrom(handle);
  toolkit.nvrtcLibrary = toolkit.nvrtcSearched.back();
  if (!libraryDir.empty())
    toolkit.nvrtcLibrary =
        (libraryDir / fs::path(toolkit.nvrtcSearched.back()).filename())
            .string();

  // Headers and ptxas from NVRTC's own toolkit first, so versions agree.
  std::vector<fs::path> roots;
  if (!libraryDir.empty())
    roots.push_back(rootOf(libraryDir));
  for (const fs::path &root : toolkitRoots)
    roots.push_back(root);
  std::vector<fs::path> includes;
  if (!libraryDir.empty())
    includes.push_back(libraryDir.parent_path() / "include");
  for (const fs::path &root : roots) {
    includes.push_back(root / "include");
    includes.push_back(root / "targets" / target / "include");
  }
  if (loaderPath) { // a toolkit installed into the system's folders
    includes.push_back(RUDNN_CUDA_INCLUDE_DIR);
    includes.push_back("/usr/include");
  }
  for (const fs::path &dir : includes) {
    toolkit.includeSearched.push_back(dir.string());
    if (fs::exists(dir / "cuda_fp16.h")) {
      toolkit.includeDir = dir.string();
      break;
    }
  }
  std::vector<fs::path> binaries;
  for (const fs::path &root : roots)
    binaries.push_back(root / "bin" / "ptxas");
  if (loaderPath)
    binaries.push_back(fs::path(RUDNN_CUDA_BIN_DIR) / "ptxas");
  for (const fs::path &candidate : binaries)
    if (::access(candidate.c_str(), X_OK) == 0) {
      toolkit.ptxas = candidate.string();
      break;
    }
  log(LogLevel::Info, "NVRTC from " + toolkit.nvrtcLibrary + ", headers from " +
                          (toolkit.includeDir.empty() ? std::string("nowhere")
                                                      : toolkit.includeDir));
  // Kept loaded for the process: compiled programs may be alive anywhere.
  return toolkit;
}

const CudaToolkit &CudaToolkit::get() {
  struct Located {
    std::optional<CudaToolkit> toolkit;
    std::string failure;
  };
  static const Located located = [] {
    Located result;
    try {
      result.toolkit = locate(defaultRoots(), /*loaderPath=*/true);
    } catch (const Error &error) {
      result.failure = error.what();
    }
    return result;
  }();
  if (!located.toolkit)
    throw Unsupported(located.failure);
  return *located.toolkit;
}
