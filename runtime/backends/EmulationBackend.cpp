//===- EmulationBackend.cpp - CUDA kernels run on the CPU -----------------===//

#include "runtime/backends/EmulationBackend.h"
#include "runtime/backends/EmulationPrelude.h"
#include "runtime/cache/Hash.h"
#include "runtime/compile/Shell.h"
#include "runtime/emulation/GuardedMemory.h"
#include "runtime/emulation/Prelude.h"
#include "runtime/emulation/SimtExecutor.h"
#include "runtime/emulation/SourceRewrite.h"
#include "runtime/support/InputFile.h"
#include "runtime/support/Log.h"
#include "runtime/support/TempRoot.h"

#include "rudnn/errors.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <filesystem>
#include <fstream>
#include <link.h>
#include <mutex>
#include <set>
#include <sstream>
#include <sys/mman.h>
#include <system_error>
#include <thread>
#include <unistd.h>

using namespace rudnn;
using namespace rudnn::runtime;
namespace fs = std::filesystem;

EmulationOptions
EmulationOptions::fromEnvironment(std::vector<HeaderFile> headers) {
  EmulationOptions options;
  options.headers = std::move(headers);
  const char *compiler = std::getenv("RUDNN_HOST_CXX");
  options.hostCompiler =
      compiler && *compiler ? compiler : RUDNN_HOST_CXX_DEFAULT;
  const char *sanitize = std::getenv("RUDNN_EMULATION_SANITIZE");
  options.sanitize = sanitize && std::strcmp(sanitize, "1") == 0;
  if (const char *schedule = std::getenv("RUDNN_EMULATION_SCHEDULE"))
    options.schedule = Schedule::parse(schedule);
  // "1" turns check mode on; a schedule turns it on with that order, so one
  // variable can say both (as a test's environment property must).
  if (const char *check = std::getenv("RUDNN_EMULATION_CHECK");
      check && *check && std::strcmp(check, "0") != 0) {
    options.check = true;
    if (std::strcmp(check, "1") != 0)
      options.schedule = Schedule::parse(check);
  }
  if (const char *watchdog = std::getenv("RUDNN_EMULATION_WATCHDOG");
      watchdog && *watchdog) {
    char *rest = nullptr;
    double seconds = std::strtod(watchdog, &rest);
    if (*rest || !(seconds >= 0))
      throw InvalidArgument("RUDNN_EMULATION_WATCHDOG must be a number of "
                            "seconds (0: off), got '" +
                            std::string(watchdog) + "'");
    options.watchdogSeconds = seconds;
  }
  const char *prelude = std::getenv("RUDNN_EMULATION_PRELUDE_DIR");
  options.preludeDirectory =
      prelude ? prelude : defaultPreludeDirectory().string();
  return options;
}

namespace {

/// The size of TLS module `module`'s block (a loaded object's static
/// `__shared__` variables).
size_t threadLocalBytes(size_t module) {
  struct Search {
    size_t module, bytes = 0;
  } search{module};
  ::dl_iterate_phdr(
      [](dl_phdr_info *info, size_t, void *data) {
        auto *search = static_cast<Search *>(data);
        if (info->dlpi_tls_modid != search->module)
          return 0;
        for (int i = 0; i < info->dlpi_phnum; ++i)
          if (info->dlpi_phdr[i].p_type == PT_TLS)
            search->bytes = info->dlpi_phdr[i].p_memsz;
        return 1;
      },
      &search);
  return search.bytes;
}

/// A kernel object loaded with dlopen from a memory file. The file stays
/// open while the object is loaded: dlopen identifies objects by path, and a
/// reused descriptor number would hand back an earlier kernel.
class EmulationKernel final : public LoadedKernel {
public:
  EmulationKernel(int fd, void *handle, EmulatedKernel kernel)
      : fd(fd), handle(handle), kernel(std::move(kernel)) {}
  ~EmulationKernel() override {
    ::dlclose(handle);
    ::close(fd);
  }
  const std::string &entry() const override { return kernel.name; }

  int fd;
  void *handle;
  EmulatedKernel kernel;
};

/// Loads the thread-slot library, once a process (whichever backend comes
/// first: kernel objects find any by its soname), its symbols global.
void loadThreadSlot(const fs::path &library) {
  static std::mutex mutex;
  static void *handle = nullptr;
  std::lock_guard<std::mutex> lock(mutex);
  if (handle)
    return;
  handle = ::dlopen(library.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (!handle)
    throw DeviceError("dlopen", ::dlerror(),
                      "the emulation's thread-slot library");
}

} // namespace

/// The folders holding the CUDA toolkit's headers: the build's, and those
/// of the toolkit roots a run names ($CUDA_HOME, $CUDA_PATH) or that are
/// usual. Only their file names are read, so no NVRTC is loaded for them.
std::vector<fs::path> toolkitIncludeDirectories() {
  std::vector<fs::path> folders;
  std::stringstream build(RUDNN_CUDA_INCLUDE_DIR); // a CMake list
  for (std::string folder; std::getline(build, folder, ';');)
    folders.push_back(folder);
  for (const char *variable : {"CUDA_HOME", "CUDA_PATH"})
    if (const char *root = std::getenv(variable); root && *root)
      folders.push_back(fs::path(root) / "include");
  folders.push_back("/usr/local/cuda/include");
  return folders;
}

/// A header for every top-level header of the CUDA toolkit that `files`
/// (the prelude and the device library) do not provide, refusing to
/// compile: the host compiler may find the toolkit's own on its system path
/// (/usr/local/include on some machines), device-only code it cannot
/// compile, so a kernel that includes one gets a message naming it instead.
std::vector<HeaderFile>
toolkitHeaderStubs(const std::vector<HeaderFile> &files) {
  std::set<std::string> provided;
  for (const HeaderFile &file : files)
    provided.insert(file.name);
  std::set<std::string> names;
  for (const fs::path &folder : toolkitIncludeDirectories()) {
    std::error_code error;
    for (const fs::directory_entry &entry :
         fs::directory_iterator(folder, error)) {
      const std::string name = entry.path().filename().string();
      const std::string extension = entry.path().extension().string();
      if (entry.is_regular_file(error) &&
          (extension == ".h" || extension == ".hpp") && !provided.count(name))
        names.insert(name);
    }
    // libcu++'s <cuda/barrier>, <cuda/pipeline>, ... (no extension).
    for (const fs::directory_entry &entry :
         fs::directory_iterator(folder / "cccl" / "cuda", error))
      if (entry.is_regular_file(error))
        names.insert("cuda/" + entry.path().filename().string());
  }
  std::vector<HeaderFile> stubs;
  for (const std::string &name : names)
    stubs.push_back(
        {name, "#error \"the emulator does not provide <" + name +
                   "> (a CUDA toolkit header); of the toolkit's headers it "
                   "has cuda_runtime.h, cuda_fp16.h, cuda_bf16.h, "
                   "cuda_pipeline.h and cuda_pipeline_primitives.h\"\n"});
  return stubs;
}

struct EmulationBackend::Impl {
  EmulationOptions options;
  std::once_flag setUp;
  std::string compilerVersion;
  fs::path includeDirectory;
  std::string identity;
  CompiledPrelude prelude;

  /// Writes the prelude and headers into a private directory (mkdtemp under
  /// the process's temporary root, so no other user can plant files the
  /// compiler would read), once.
  void prepare() {
    std::call_once(setUp, [&] {
      auto [status, version] =
          runShell(shellQuote(options.hostCompiler) + " --version");
      if (status != 0)
        throw CompileError("<host compiler>", version,
                           "(no source: '" + options.hostCompiler +
                               "' does not run; set RUDNN_HOST_CXX)");
      compilerVersion = version.substr(0, version.find('\n'));

      std::vector<HeaderFile> files = emulationPrelude();
      files.insert(files.end(), options.headers.begin(), options.headers.end());
      const std::vector<HeaderFile> stubs = toolkitHeaderStubs(files);
      files.insert(files.end(), stubs.begin(), stubs.end());
      Hasher hasher;
      for (const HeaderFile &file : files)
        hasher.add(file.name).add(file.contents);
      identity = options.hostCompiler + " | " + compilerVersion + " | " +
                 flags() + " | " + hasher.finish().hex();

      try {
        includeDirectory = makeTempDirectory("emulation-include");
      } catch (const std::system_error &error) {
        throw CompileError("<emulation prelude>", error.what(),
                           "<not written>");
      }
      for (const HeaderFile &file : files) {
        fs::path path = includeDirectory / file.name;
        fs::create_directories(path.parent_path());
        std::ofstream(path, std::ios::binary) << file.contents;
      }
      // Clang's precompiled headers are not found the way GCC's are.
      prelude = compilePrelude(
          {shellQuote(options.hostCompiler), flags(), baseFlags(),
           includeDirectory, identity, options.preludeDirectory,
           compilerVersion.find("clang") == std::string::npos, options.check});
      loadThreadSlot(prelude.threadSlot);
    });
  }

  ~Impl() {
    std::error_code error;
    if (!includeDirectory.empty())
      fs::remove_all(includeDirectory, error);
  }

  /// Compiler flags without instrumentation. Kernels are contracted into
  /// FMA where the CPU has it, as NVRTC contracts by default. Everything is
  /// hidden, so that one kernel object's symbols never stand in for
  /// another's.
  std::string baseFlags() const {
    std::string text = "-std=c++17 -O2 -fPIC -fno-strict-aliasing "
                       "-fvisibility=hidden -D__RUDNN_EMULATION__";
    if (__builtin_cpu_supports("fma"))
      text += " -mfma -ffp-contract=fast";
    // Tensor maps are 64-byte aligned parameters, whose ABI GCC remarks on.
    if (compilerVersion.find("clang") == std::string::npos)
      text += " -Wno-psabi";
    return text;
  }

  /// Kernels' compiler flags (they also take -include rudnn_emulation.h).
  /// Check mode adds ThreadSanitizer's instrumentation (not its runtime:
  /// the hooks object receives the calls).
  std::string flags() const {
    std::string text = baseFlags();
    if (options.sanitize)
      text += " -fsanitize=address,undefined -fno-omit-frame-pointer -g";
    if (options.check)
      text += " -DRUDNN_EMU_CHECK -fsanitize=thread" +
              std::string(compilerVersion.find("clang") != std::string::npos
                              ? " -mllvm -tsan-instrument-func-entry-exit=0"
                                " -mllvm -tsan-distinguish-volatile=1"
                              : " --param=tsan-instrument-func-entry-exit=0"
                                " --param=tsan-distinguish-volatile=1");
    return text;
  }

  /// Links the object: without the sanitizer flags in check mode, whose
  /// runtime the process does not have; every symbol must resolve.
  std::string linkFlags() const {
    return options.check ? "-shared -Wl,-z,defs"
                         : "-shared" + std::string(options.sanitize
                                                       ? " -fsanitize=address,"
                                                         "undefined"
                                                       : "");
  }
};

EmulationBackend::EmulationBackend(EmulationOptions options)
    : impl(std::make_unique<Impl>()) {
  if (options.sanitize && options.check)
    throw InvalidArgument("emulation check mode and sanitizers exclude each "
                          "other (RUDNN_EMULATION_CHECK and "
                          "RUDNN_EMULATION_SANITIZE)");
  impl->options = std::move(options);
}

EmulationBackend::~EmulationBackend() = default;

const EmulationOptions &EmulationBackend::options() const {
  return impl->options;
}

std::string EmulationBackend::deviceDescription() const {
  impl->prepare();
  unsigned threads = impl->options.threads
                         ? impl->options.threads
                         : std::thread::hardware_concurrency();
  return "CPU emulation (" + std::to_string(threads) + " threads, " +
         impl->compilerVersion + (impl->options.sanitize ? ", sanitized" : "") +
         (impl->options.check ? ", check mode" : "") + ")";
}

std::string EmulationBackend::compilerIdentity() const {
  impl->prepare();
  return impl->identity;
}

std::string EmulationBackend::compile(const KernelSource &kernel) const {
  impl->prepare();
  auto start = std::chrono::steady_clock::now();
  fs::path directory;
  try {
    directory = makeTempDirectory("emulation");
  } catch (const std::system_error &error) {
    throw CompileError(kernel.entry, error.what(), "<not written>");
  }
  fs::path source = directory / (kernel.entry + ".cpp");
  fs::path object = directory / (kernel.entry + ".so");
  {
    std::ofstream text(source, std::ios::binary);
    text << rewriteDynamicShared(kernel.source) << "\nRUDNN_EMU_DEFINE_ENTRY("
         << kernel.entry << ")\n";
    if (auto [threads, blocks] = launchBoundsOf(kernel.source, kernel.entry);
        threads)
      text << "RUDNN_EMU_LAUNCH_BOUNDS(" << kernel.entry << ", " << threads
           << ", " << blocks << ")\n";
  }

  fs::path compiled = directory / (kernel.entry + ".o");
  std::string compiler = shellQuote(impl->options.hostCompiler);
  const CompiledPrelude &prelude = impl->prelude;
  std::string command =
      compiler + " " + impl->flags() + " -include rudnn_emulation.h -c " +
      prelude.precompiledInclude + " -I" +
      shellQuote(impl->includeDirectory.string()) + " " +
      shellQuote(source.string()) + " -o " + shellQuote(compiled.string()) +
      " && " + compiler + " " + impl->linkFlags() + " " +
      shellQuote(compiled.string()) +
      (prelude.hooksObject.empty()
           ? ""
           : " " + shellQuote(prelude.hooksObject.string())) +
      " " + shellQuote(prelude.threadSlot.string()) + " -o " +
      shellQuote(object.string());
  auto [status, output] = runShell(command);
  if (status != 0) {
    // Keep the source for the error report; the object is not needed.
    throw CompileError(kernel.entry, command + "\n" + output, source.string());
  }
  std::string binary = readInputFile(object.string(), "emulated kernel object");
  std::error_code error;
  fs::remove_all(directory, error);
  double milliseconds = std::chrono::duration<double, std::milli>(
                            std::chrono::steady_clock::now() - start)
                            .count();
  log(LogLevel::Info, "compiled " + kernel.entry + " for emulation in " +
                          std::to_string(milliseconds) + " ms");
  return binary;
}

std::shared_ptr<LoadedKernel> EmulationBackend::load(const std::string &binary,
                                                     const std::string &entry) {
  if (impl->options.sanitize && !::dlsym(RTLD_DEFAULT, "__asan_init"))
    throw Unsupported(
        "RUDNN_EMULATION_SANITIZE needs AddressSanitizer in the process: use "
        "a build made with the debug-asan preset, or run with "
        "LD_PRELOAD=$(g++ -print-file-name=libasan.so)");
  impl->prepare(); // the thread-slot library the object needs is loaded
  int fd = ::memfd_create(("rudnn-" + entry).c_str(), MFD_CLOEXEC);
  if (fd < 0)
    throw DeviceError("memfd_create", std::strerror(errno));
  size_t written = 0;
  while (written < binary.size()) {
    ssize_t n = ::write(fd, binary.data() + written, binary.size() - written);
    if (n <= 0) {
      ::close(fd);
      throw DeviceError("write", std::strerror(errno), "kernel object");
    }
    written += static_cast<size_t>(n);
  }
  std::string path = "/proc/self/fd/" + std::to_string(fd);
  void *handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    ::close(fd);
    throw InvalidArgument("not an emulated kernel object: " +
                          std::string(::dlerror()));
  }
  auto fail = [&](const std::string &message) {
    ::dlclose(handle);
    ::close(fd);
    throw InvalidArgument(message);
  };

  auto bind = reinterpret_cast<int (*)(const rudnn_emu_host *)>(
      ::dlsym(handle, "rudnn_emu_bind"));
  EmulatedKernel kernel;
  kernel.name = entry;
  kernel.setCurrent = reinterpret_cast<void (*)(rudnn_emu_thread *)>(
      ::dlsym(handle, "rudnn_emu_set_current"));
  kernel.entry = reinterpret_cast<void (*)(void **)>(
      ::dlsym(handle, ("rudnn_emu_entry_" + entry).c_str()));
  if (!bind || !kernel.setCurrent || !kernel.entry)
    fail("kernel object has no entry '" + entry +
         "' (or no emulation prelude)");
  if (int version = bind(&simtHost()); version != RUDNN_EMU_ABI_VERSION)
    fail("kernel object speaks emulation ABI " + std::to_string(version) +
         ", expected " + std::to_string(RUDNN_EMU_ABI_VERSION));
  if (::dlinfo(handle, RTLD_DI_TLS_MODID, &kernel.tlsModule) != 0)
    kernel.tlsModule = 0; // no thread-local block
  if (kernel.tlsModule)
    kernel.tlsBytes = threadLocalBytes(kernel.tlsModule);
  if (auto *bounds = static_cast<const unsigned *>(
          ::dlsym(handle, ("rudnn_emu_bounds_" + entry).c_str())))
    kernel.boundsThreads = bounds[0], kernel.boundsBlocks = bounds[1];
  auto loaded =
      std::make_shared<EmulationKernel>(fd, handle, std::move(kernel));
  // Objects that read no packed offsets have no index-fault word.
  loaded->indexFault =
      reinterpret_cast<DevicePtr>(::dlsym(handle, "rudnn_index_fault"));
  return loaded;
}

TensorMapBytes
EmulationBackend::encodeTensorMap(const TensorMapRequest &request) {
  checkTensorMapRequest(request);
  static_assert(sizeof(rudnn_emu_tensor_map) <= sizeof(TensorMapBytes));
  rudnn_emu_tensor_map map{};
  map.magic = RUDNN_EMU_TENSOR_MAP_MAGIC;
  map.address = request.address;
  for (uint32_t i = 0; i < request.rank; ++i) {
    map.dims[i] = request.dims[i];
    map.box[i] = request.box[i];
    if (i > 0)
      map.strideBytes[i - 1] = request.strideBytes[i - 1];
  }
  map.rank = request.rank;
  map.elementBytes = request.elementBytes;
  map.swizzleBytes = request.swizzleBytes;
  TensorMapBytes bytes{};
  std::memcpy(&bytes, &map, sizeof map);
  return bytes;
}

void EmulationBackend::launch(const LoadedKernel &kernel,
                              const LaunchGeometry &geometry, ArgPack &args,
                              StreamHandle) {
  auto *emulated = dynamic_cast<const EmulationKernel *>(&kernel);
  if (!emulated)
    throw InvalidArgument("kernel '" + kernel.entry() +
                          "' was not loaded by the emulation backend");
  runGrid(emulated->kernel, geometry, args.pointers(),
          {impl->options.threads, impl->options.schedule, impl->options.check,
           impl->options.watchdogSeconds});
}

DevicePtr EmulationBackend::allocate(size_t bytes) {
  if (bytes == 0)
    return 0;
  // 256-byte alignment, as cudaMalloc guarantees, and exactly `bytes`, so a
  // sanitized kernel's access one element past the end is caught. In check
  // mode, between guard regions its kernels' accesses are checked against.
  void *pointer = nullptr;
  if (impl->options.check)
    pointer = allocateGuarded(bytes);
  else if (::posix_memalign(&pointer, 256, bytes) != 0)
    throw DeviceError("allocate", "out of memory",
                      std::to_string(bytes) + " bytes");
  // Fresh device memory holds garbage (all bits set: NaN, -1), as what
  // cudaMalloc returns may: a kernel reading workspace it never wrote fails.
  std::memset(pointer, 0xff, bytes);
  return reinterpret_cast<DevicePtr>(pointer);
}

void EmulationBackend::release(DevicePtr pointer) {
  if (!releaseGuarded(reinterpret_cast<void *>(pointer)))
    std::free(reinterpret_cast<void *>(pointer));
}

void EmulationBackend::copyToDevice(DevicePtr dst, const void *src,
                                    size_t bytes, StreamHandle) {
  if (bytes)
    std::memcpy(reinterpret_cast<void *>(dst), src, bytes);
}

void EmulationBackend::copyToHost(void *dst, DevicePtr src, size_t bytes,
                                  StreamHandle) {
  if (bytes)
    std::memcpy(dst, reinterpret_cast<const void *>(src), bytes);
}

void EmulationBackend::copyOnDevice(DevicePtr dst, DevicePtr src, size_t bytes,
                                    StreamHandle) {
  if (bytes)
    std::memmove(reinterpret_cast<void *>(dst),
                 reinterpret_cast<const void *>(src), bytes);
}

void EmulationBackend::fillZero(DevicePtr dst, size_t bytes, StreamHandle) {
  if (bytes)
    std::memset(reinterpret_cast<void *>(dst), 0, bytes);
}

// Launches complete before they return, so a stream is only a token.
StreamHandle EmulationBackend::createStream() { return new char; }
void EmulationBackend::destroyStream(StreamHandle stream) {
  delete static_cast<char *>(stream);
}
void EmulationBackend::synchronize(StreamHandle) {}

const std::vector<HeaderFile> &rudnn::runtime::emulationPrelude() {
  static const std::vector<HeaderFile> files = [] {
    std::vector<HeaderFile> headers;
    constexpr std::string_view kFolder = "emulation/prelude/";
    for (const EmbeddedFile &file : emulationPreludeFiles()) {
      std::string_view name = file.name;
      if (name.substr(0, kFolder.size()) == kFolder)
        name.remove_prefix(kFolder.size());
      headers.push_back({std::string(name), std::string(file.contents)});
    }
    return headers;
  }();
  return files;
}
