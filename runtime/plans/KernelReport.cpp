//===- KernelReport.cpp - What a profiler would show, without a GPU -------===//

#include "runtime/plans/KernelReport.h"
#include "runtime/compile/CudaToolkit.h"
#include "runtime/compile/Shell.h"
#include "runtime/support/TempRoot.h"

#include "rudnn/errors.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

using namespace rudnn;
using namespace rudnn::runtime;
namespace fs = std::filesystem;

namespace {

/// A scratch file holding `contents`, removed with the object.
struct ScratchFile {
  explicit ScratchFile(const std::string &name, const std::string &contents) {
    directory = makeTempDirectory("report");
    path = (fs::path(directory) / name).string();
    std::ofstream(path, std::ios::binary) << contents;
  }
  ~ScratchFile() {
    std::error_code error;
    fs::remove_all(directory, error);
  }
  std::string directory, path;
};

int64_t number(const std::string &text, const std::regex &pattern) {
  std::smatch match;
  return std::regex_search(text, match, pattern) ? std::stoll(match.str(1)) : 0;
}

} // namespace

TargetLimits TargetLimits::forArch(const std::string &arch) {
  TargetLimits target;
  target.arch = arch;
  if (arch == "sm_90" || arch == "sm_90a") {
    target.device = "H200";
    target.smCount = 132;
    target.sharedPerSm = 228 * 1024;
    target.sharedPerBlock = 227 * 1024;
    target.memoryBytesPerSecond = 4.8e12;
    target.tensorFlops = 989e12; // dense bf16/f16, fp32 accumulation
    target.tf32Flops = 494e12;
    target.fp32Flops = 67e12;
    target.exponentialsPerSecond = 3.9e12; // FlashAttention-3's figure
    target.clockHz = 1.83e9;
    target.sharedBytesPerSecond = 132 * 128 * 1.83e9;
    // A100's L2 bytes a clock (NVIDIA's figure) at Hopper's clock: Hopper's
    // is not published, and microbenchmarks measure H100's reads near it.
    target.reducedBytesPerSecond = 5120 * 1.83e9;
  } else if (arch == "sm_80") {
    target.device = "A100 80GB";
    target.smCount = 108;
    target.sharedPerSm = 164 * 1024;
    target.sharedPerBlock = 163 * 1024;
    target.memoryBytesPerSecond = 2.039e12;
    target.tensorFlops = 312e12;
    target.tf32Flops = 156e12;
    target.fp32Flops = 19.5e12;
    target.exponentialsPerSecond = 108 * 16 * 1.41e9;
    target.clockHz = 1.41e9;
    target.sharedBytesPerSecond = 108 * 128 * 1.41e9;
    target.reducedBytesPerSecond = 5120 * 1.41e9; // NVIDIA's L2 bytes a clock
  } else {
    throw InvalidArgument("no limits known for target '" + arch +
                          "' (sm_80, sm_90, sm_90a)");
  }
  return target;
}

KernelResources rudnn::runtime::ptxasResources(const std::string &entry,
                                               const std::string &ptx,
                                               const std::string &arch) {
  const std::string &ptxas = CudaToolkit::get().ptxas;
  if (ptxas.empty())
    throw Unsupported("no ptxas beside NVRTC (" +
                      CudaToolkit::get().nvrtcLibrary + ")");
  ScratchFile file(entry + ".ptx", ptx);
  auto [status, output] = runShell(shellQuote(ptxas) + " -arch=" + arch +
                                   " -v -o /dev/null " + shellQuote(file.path));
  if (status != 0)
    throw CompileError(entry, output, file.path);
  // ptxas reports every function of the module: keep `entry`'s part.
  const std::string header = "Compiling entry function '" + entry + "'";
  if (const size_t start = output.find(header); start != std::string::npos) {
    const size_t end =
        output.find("Compiling entry function", start + header.size());
    output = output.substr(start, end == std::string::npos ? end : end - start);
  }
  KernelResources resources;
  resources.registers =
      static_cast<int>(number(output, std::regex(R"(Used (\d+) registers)")));
  resources.spillStores =
      number(output, std::regex(R"((\d+) bytes spill stores)"));
  resources.spillLoads =
      number(output, std::regex(R"((\d+) bytes spill loads)"));
  resources.stackBytes =
      number(output, std::regex(R"((\d+) bytes stack frame)"));
  resources.staticShared = number(output, std::regex(R"((\d+) bytes smem)"));
  return resources;
}

const std::string &rudnn::runtime::cuobjdumpPath() {
  static const std::string path = [] {
    std::vector<fs::path> candidates;
    if (const char *given = std::getenv("RUDNN_CUOBJDUMP"); given && *given)
      candidates.push_back(given);
    try {
      if (const std::string &ptxas = CudaToolkit::get().ptxas; !ptxas.empty())
        candidates.push_back(fs::path(ptxas).parent_path() / "cuobjdump");
    } catch (const Error &) {
    }
    if (auto [status, found] = runShell("command -v cuobjdump"); status == 0)
      candidates.push_back(found.substr(0, found.find('\n')));
    // The PyPI wheels install under Python's nvidia/cuXX/bin.
    if (auto [status, roots] =
            runShell("python3 -c 'import nvidia; "
                     "print(\"\\n\".join(nvidia.__path__))'");
        status == 0) {
      std::istringstream lines(roots);
      for (std::string root; std::getline(lines, root);)
        for (const char *version : {"cu13", "cu12"})
          candidates.push_back(fs::path(root) / version / "bin" / "cuobjdump");
    }
    for (const fs::path &candidate : candidates)
      if (fs::is_regular_file(candidate) &&
          fs::is_regular_file(candidate.parent_path() / "nvdisasm"))
        return candidate.string();
    return std::string();
  }();
  return path;
}

InstructionMix rudnn::runtime::sassInstructionMix(const std::string &cubin) {
  InstructionMix mix;
  const std::string &cuobjdump = cuobjdumpPath();
  if (cuobjdump.empty()) {
    mix.unavailable = "no cuobjdump with nvdisasm beside it (the CUDA "
                      "toolkit's, or pip install nvidia-cuda-cuobjdump "
                      "nvidia-cuda-nvdisasm; RUDNN_CUOBJDUMP names one)";
    return mix;
  }
  ScratchFile file("kernel.cubin", cubin);
  const std::string folder = fs::path(cuobjdump).parent_path().string();
  auto [status, sass] =
      runShell("PATH=" + shellQuote(folder) + ":\"$PATH\" " +
               shellQuote(cuobjdump) + " -sass " + shellQuote(file.path));
  if (status != 0) {
    mix.unavailable = "cuobjdump failed: " + sass.substr(0, 200);
    return mix;
  }
  // "        /*0040*/                   IMAD R5, R5, UR4, R0 ;"
  static const std::regex instruction(
      R"(/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_]*)((?:\.[A-Za-z0-9_]+)*))");
  std::istringstream lines(sass);
  for (std::string line; std::getline(lines, line);) {
    std::smatch match;
    if (!std::regex_search(line, match, instruction))
      continue;
    const std::string opcode = match.str(1), modifiers = match.str(2);
    if (opcode == "NOP")
      continue; // padding after the final branch

    ++mix.total;
    auto width = [&](int fallback) {
      for (int bits : {128, 64, 16, 8})
        if (modifiers.find("." + std::to_string(bits)) != std::string::npos ||
            (bits == 16 && (modifiers.find(".U16") != std::string::npos ||
                            modifiers.find(".S16") != std::string::npos)) ||
            (bits == 8 && (modifiers.find(".U8") != std::string::npos ||
                           modifiers.find(".S8") != std::string::npos)))
          return bits;
      return fallback;
    };
    if (opcode == "HMMA" || opcode == "HGMMA" || opcode == "IMMA" ||
        opcode == "DMMA")
      ++mix.tensor, ++mix.opcodes[opcode];
    if (opcode == "BAR") {
      // "BAR.SYNC.DEFER_BLOCKING 0x1, 0x100 ;": barrier 0 is __syncthreads.
      static const std::regex named(
          R"(BAR(\.[A-Z_]+)*\s+(0x[0-9a-f]*[1-9a-f]|R\d+))");
      if (std::regex_search(line, named)) {
        if (modifiers.rfind(".ARV", 0) == 0)
          ++mix.namedBarrierArrivals;
        else if (modifiers.rfind(".SYNC", 0) == 0)
          ++mix.namedBarrierSyncs;
      }
    }
    if (opcode == "HGMMA") {
      // "HGMMA.64x128x16.F32.BF16": the shape is the first modifier.
      static const std::regex shape(R"(^\.(\d+x\d+x\d+))");
      std::smatch found;
      if (std::regex_search(modifiers, found, shape))
        ++mix.wgmmaShapes[found.str(1)];
    } else if (opcode == "LDSM")
      ++mix.ldmatrix, ++mix.opcodes[opcode];
    else if (opcode == "LDGSTS")
      ++mix.cpAsync, ++mix.opcodes[opcode];
    else if (opcode.rfind("UTMA", 0) == 0 || opcode == "UBLKCP")
      ++mix.tma, ++mix.opcodes[opcode];
    else if (opcode == "LDS")
      ++mix.sharedLoads;
    else if (opcode == "STS")
      ++mix.sharedStores;
    else if (opcode == "LDG")
      ++mix.globalLoads[width(32)];
    else if (opcode == "STG")
      ++mix.globalStores[width(32)];
  }
  return mix;
}

int rudnn::runtime::residentBlocks(const KernelResources &resources,
                                   int64_t threads, int64_t dynamicShared,
                                   const TargetLimits &target) {
  if (threads <= 0)
    return 0;
  const int64_t warps = (threads + 31) / 32;
  // Registers are allocated per warp in units of 256.
  const int64_t perWarp =
      (std::max(resources.registers, 1) * 32 + 255) / 256 * 256;
  int64_t blocks = std::min<int64_t>(target.maxBlocksPerSm,
                                     target.maxThreadsPerSm / 32 / warps);
  blocks = std::min(blocks, target.registersPerSm / (perWarp * warps));
  const int64_t shared = resources.staticShared + dynamicShared;
  if (shared > target.sharedPerBlock)
    return 0;
  blocks = std::min(blocks, target.sharedPerSm /
                                (shared + target.sharedReservedPerBlock));
  return static_cast<int>(std::max<int64_t>(blocks, 0));
}
