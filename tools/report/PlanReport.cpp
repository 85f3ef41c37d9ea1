//===- PlanReport.cpp - The kernel report of a planned module -------------===//

#include "tools/report/PlanReport.h"

#include "codegen/Emit/EmitModule.h"
#include "codegen/InitRudnn.h"
#include "codegen/Transforms/Passes.h"
#include "codegen/device/DeviceLibrary.h"
#include "dialects/IR/RudnnDialect.h"
#include "dialects/IR/RudnnOps.h"
#include "dialects/IR/SourceLimits.h"
#include "runtime/compile/NvrtcCompiler.h"
#include "runtime/plans/KernelReport.h"
#include "runtime/support/InputFile.h"

#include "rudnn/errors.h"

#include "mlir/Pass/PassManager.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::rudnn;
namespace rt = ::rudnn::runtime;

namespace {

/// One kernel's report, from NVRTC, ptxas and the disassembler.
struct KernelReport {
  const ::rudnn::codegen::EmittedKernel *kernel;
  rt::KernelResources resources;
  rt::InstructionMix mix;
  int residentBlocks = 0;
  std::string resourcesUnavailable; // why ptxas's figures are missing
  // What ptxas said of the kernel's wgmma: a serialized wgmma or an
  // injected warpgroup.arrive means it repaired the code at a cost.
  std::vector<std::string> compilerNotes;
};

/// The lines of a compiler log about wgmma (ptxas's C75xx notes).
std::vector<std::string> wgmmaNotes(const std::string &log) {
  std::vector<std::string> notes;
  size_t start = 0;
  while (start < log.size()) {
    size_t end = log.find('\n', start);
    if (end == std::string::npos)
      end = log.size();
    const std::string line = log.substr(start, end - start);
    if (line.find("wgmma") != std::string::npos ||
        line.find("warpgroup") != std::string::npos ||
        line.find("GMMA") != std::string::npos)
      notes.push_back(line);
    start = end + 1;
  }
  return notes;
}

/// A launch of a kernel at the given dims.
struct LaunchSize {
  std::string grid;              // "(N, B·H, 2)" or "(512, 16, 2)"
  std::optional<int64_t> blocks; // with dims
  bool runs = true;              // false: its guard excludes the dims
  std::string repeat;            // the parameter counting its launches
  int64_t launches = 1;          // with dims: how many times it runs
};

/// "B=1,T=32768,H=16" → {B: 1, T: 32768, H: 16}.
FailureOr<std::map<std::string, int64_t>> parseDims(ModuleOp module,
                                                    const std::string &text) {
  std::map<std::string, int64_t> dims;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find(',', start);
    std::string item = text.substr(start, end - start);
    size_t equals = item.find('=');
    char *rest = nullptr;
    long long value = equals == std::string::npos
                          ? 0
                          : std::strtoll(item.c_str() + equals + 1, &rest, 10);
    if (equals == std::string::npos || equals == 0 || !rest || *rest ||
        value < 1)
      return module.emitError()
             << "the report's dims want NAME=SIZE items, got '" << item << "'";
    dims[item.substr(0, equals)] = value;
    if (end == std::string::npos)
      break;
    start = end + 1;
  }
  return dims;
}

std::optional<int64_t> sizeAt(SizeAttr size,
                              const std::map<std::string, int64_t> &params);

/// The plan's parameters at `dims`: the named dims themselves, those
/// derived from one (a chunk count: the same buffer dim with a divisor),
/// and the split counts the runtime would choose from them.
std::map<std::string, int64_t>
planParams(PlanOp plan, const std::map<std::string, int64_t> &dims) {
  std::map<std::string, int64_t> params(dims.begin(), dims.end());
  ArrayAttr sources = plan.getSourcesAttr();
  if (!sources)
    return params;
  auto names = plan.getParams().getValue();
  for (size_t i = 0; i < sources.size() && i < names.size(); ++i) {
    auto source = dyn_cast<DimSourceAttr>(sources[i]);
    if (!source || source.getDivisor() == 1)
      continue;
    for (size_t j = 0; j < sources.size() && j < names.size(); ++j) {
      auto base = dyn_cast<DimSourceAttr>(sources[j]);
      std::string name = cast<StringAttr>(names[j]).str();
      if (base && base.getDivisor() == 1 &&
          base.getBuffer() == source.getBuffer() &&
          base.getIndex() == source.getIndex() && params.count(name))
        params[cast<StringAttr>(names[i]).str()] =
            (params[name] + source.getDivisor() - 1) / source.getDivisor();
    }
  }
  // clamp(ceil(target / blocks), 1, max), as the runtime chooses.
  for (size_t i = 0; i < sources.size() && i < names.size(); ++i)
    if (auto split = dyn_cast<SplitSourceAttr>(sources[i])) {
      std::optional<int64_t> blocks = sizeAt(split.getBlocks(), params),
                             most = sizeAt(split.getMax(), params);
      if (blocks && most && *blocks > 0)
        params[cast<StringAttr>(names[i]).str()] =
            std::clamp<int64_t>((split.getTarget() + *blocks - 1) / *blocks, 1,
                                std::max<int64_t>(*most, 1));
    }
  return params;
}

/// A #rudnn.size at `params`; nullopt when one of its params is unknown.
std::optional<int64_t> sizeAt(SizeAttr size,
                              const std::map<std::string, int64_t> &params) {
  int64_t value = size.getConstant();
  for (Attribute param : size.getParams()) {
    auto found = params.find(cast<StringAttr>(param).str());
    if (found == params.end())
      return std::nullopt;
    value *= found->second;
  }
  return (value + size.getDivisor() - 1) / size.getDivisor();
}

std::string sizeText(SizeAttr size) {
  std::string text;
  if (size.getConstant() != 1 || size.getParams().empty())
    text = std::to_string(size.getConstant());
  for (Attribute param : size.getParams())
    text += (text.empty() ? "" : "·") + cast<StringAttr>(param).str();
  if (size.getDivisor() != 1)
    text = "⌈" + text + "/" + std::to_string(size.getDivisor()) + "⌉";
  return text;
}

LaunchSize launchSize(LaunchOp launch,
                      const std::map<std::string, int64_t> *params) {
  LaunchSize result;
  std::string grid;
  int64_t blocks = 1;
  bool known = params != nullptr;
  for (Attribute attr : launch.getGrid()) {
    auto size = cast<SizeAttr>(attr);
    std::optional<int64_t> value =
        params ? sizeAt(size, *params) : std::nullopt;
    known = known && value.has_value();
    grid += (grid.empty() ? "(" : ", ") +
            (value ? std::to_string(*value) : sizeText(size));
    blocks *= value.value_or(1);
  }
  result.grid = grid + ")";
  if (known)
    result.blocks = blocks;
  if (params && launch.getGuard()) {
    auto found = params->find(launch.getGuard()->str());
    if (found != params->end())
      result.runs =
          found->second >= int64_t(launch.getGuardMin().value_or(0)) &&
          found->second <= int64_t(launch.getGuardMax().value_or(INT64_MAX));
  }
  if (std::optional<StringRef> repeat = launch.getRepeat()) {
    result.repeat = repeat->str();
    if (params) {
      auto found = params->find(result.repeat);
      if (found != params->end())
        result.launches = found->second;
    }
  }
  return result;
}

/// What the emitter's model says one launch moves and computes, at the
/// dims (or, without them, as expressions in the plan's dims), and its
/// roofline bound.
struct LaunchCost {
  std::string bytesText, flopsText; // the expressions
  std::optional<int64_t> bytes, flops, exponentials, polynomialExponentials,
      sharedBytes, reducedBytes, l2Bytes;
  std::optional<double> seconds;
  /// What bounds it: "memory", "compute", "exponential", "polynomial
  /// exponential", "shared-memory", "L2" or "serial".
  const char *bound = "compute";
  /// A recurrence's steps in one launch, each's critical path (a block's
  /// L2 reads, its FLOPs, times the blocks an SM takes in turn or shares
  /// its bandwidth and units with; its barrier or launch), and their sum.
  /// A walk's steps (`walk`) have no barrier or launch between them but a
  /// latency of their own: block barriers and dependent mma on the step's
  /// critical path, overlapped by the prefetched bytes and by the other
  /// blocks resident on the SM (`together`), the SM's blocks taking
  /// `waves` turns.
  struct Serial {
    int64_t steps, blocksPerSm;
    double l2, compute, wait, seconds;
    bool gridBarrier; // else a launch a step
    bool walk = false;
    int64_t barriers = 0, mmaChain = 0, together = 1, waves = 1;
    double latency = 0;
    /// One step's time: a wave's, for a walk.
    double stepSeconds() const {
      return walk ? std::max(together * l2, together * compute + latency)
                  : blocksPerSm * std::max(l2, compute) + wait;
    }
  };
  std::optional<Serial> serial;
};

/// A block's step of a recurrence at the SMs' share of the L2 bandwidth
/// and of the compute peak, once for each of `blocks` an SM gets, then its
/// wait; none without the model.
std::optional<LaunchCost::Serial>
serialCost(KernelOp kernel, const std::map<std::string, int64_t> &params,
           const rt::TargetLimits &target, bool tensor,
           std::optional<int64_t> blocks, int residentBlocks) {
  if (!kernel.getSerialSteps() || !kernel.getStepBytes() ||
      !kernel.getStepFlops())
    return std::nullopt;
  const std::optional<int64_t> steps = sizeAt(*kernel.getSerialSteps(), params),
                               bytes = sizeAt(*kernel.getStepBytes(), params),
                               flops = sizeAt(*kernel.getStepFlops(), params);
  if (!steps || !bytes || !flops || target.smCount < 1)
    return std::nullopt;
  int64_t stepBytes = *bytes;
  if (std::optional<SizeAttr> fixed = kernel.getStepFixedBytes()) {
    const std::optional<int64_t> more = sizeAt(*fixed, params);
    if (!more)
      return std::nullopt;
    stepBytes += *more;
  }
  LaunchCost::Serial serial;
  serial.steps = *steps;
  serial.blocksPerSm =
      blocks ? std::max<int64_t>(1, (*blocks + target.smCount - 1) /
                                        target.smCount)
             : 1;
  serial.l2 = stepBytes / (target.reducedBytesPerSecond / target.smCount);
  serial.compute =
      *flops / (target.computeRate(tensor, kernel.getTf32()) / target.smCount);
  serial.gridBarrier = kernel.getCooperative();
  serial.walk = kernel.getStepBarriers() || kernel.getStepMmaChain();
  if (serial.walk) {
    serial.barriers = kernel.getStepBarriers().value_or(0);
    serial.mmaChain = kernel.getStepMmaChain().value_or(0);
    serial.latency = (serial.barriers * target.blockBarrierCycles +
                      serial.mmaChain * target.mmaLatencyCycles) /
                     std::max(target.clockHz, 1.0);
    serial.together = std::clamp<int64_t>(
        residentBlocks, 1, std::max<int64_t>(serial.blocksPerSm, 1));
    serial.waves = (serial.blocksPerSm + serial.together - 1) / serial.together;
    serial.wait = 0;
    serial.seconds = serial.waves * *steps * serial.stepSeconds();
    return serial;
  }
  serial.wait =
      serial.gridBarrier ? target.gridBarrierSeconds : target.launchSeconds;
  serial.seconds = *steps * serial.stepSeconds();
  return serial;
}

std::optional<LaunchCost>
launchCost(KernelOp kernel, const std::map<std::string, int64_t> *params,
           const rt::TargetLimits &target, bool tensor,
           std::optional<int64_t> blocks, int residentBlocks) {
  if (!kernel || !kernel.getMemoryBytes() || !kernel.getFlops())
    return std::nullopt;
  LaunchCost cost;
  std::optional<SizeAttr> streamed = kernel.getStreamedBytes();
  cost.bytesText = sizeText(*kernel.getMemoryBytes());
  if (streamed)
    cost.bytesText += " + " + sizeText(*streamed);
  cost.flopsText = sizeText(*kernel.getFlops());
  if (params) {
    cost.bytes = sizeAt(*kernel.getMemoryBytes(), *params);
    if (cost.bytes && streamed) {
      const std::optional<int64_t> more = sizeAt(*streamed, *params);
      cost.bytes =
          more ? std::optional<int64_t>(*cost.bytes + *more) : std::nullopt;
    }
    cost.flops = sizeAt(*kernel.getFlops(), *params);
  }
  if (cost.bytes && cost.flops) {
    if (std::optional<int64_t> per = kernel.getFlopsPerExponential())
      cost.exponentials = *cost.flops / *per;
    if (std::optional<SizeAttr> count = kernel.getExponentials())
      cost.exponentials = sizeAt(*count, *params);
    if (std::optional<SizeAttr> count = kernel.getPolynomialExponentials())
      cost.polynomialExponentials = sizeAt(*count, *params);
    if (std::optional<int64_t> per = kernel.getFlopsPerSharedByte())
      cost.sharedBytes = *cost.flops / *per;
    if (std::optional<int64_t> per = kernel.getFlopsPerReducedByte())
      cost.reducedBytes = *cost.flops / *per;
    if (std::optional<int64_t> per = kernel.getFlopsPerL2Byte())
      cost.l2Bytes = *cost.flops / *per;
    const rt::TargetLimits::Roofline roofline = target.roofline(
        *cost.bytes, *cost.flops, tensor, cost.exponentials.value_or(0),
        cost.sharedBytes.value_or(0),
        cost.reducedBytes.value_or(0) + cost.l2Bytes.value_or(0),
        kernel.getTf32(), cost.polynomialExponentials.value_or(0));
    cost.seconds = roofline.seconds;
    cost.bound = roofline.bound;
    cost.serial =
        serialCost(kernel, *params, target, tensor, blocks, residentBlocks);
    if (cost.serial && cost.serial->seconds > *cost.seconds) {
      cost.seconds = cost.serial->seconds;
      cost.bound = "serial";
    }
  }
  return cost;
}

/// "name: 268.4 M, 68.8 us at 3.9 T/s": an amount of work in `unit`s of
/// `perUnit`, its time at `rate` a second, and the rate in `rateUnit`s of
/// 10^12 (no line end).
void printBound(llvm::raw_ostream &os, llvm::StringRef name, double amount,
                double perUnit, llvm::StringRef unit, double rate,
                llvm::StringRef rateUnit) {
  os << name << ": " << llvm::format("%.1f", amount / perUnit) << " " << unit
     << ", " << llvm::format("%.1f", amount / rate * 1e6) << " us at "
     << llvm::format("%.1f", rate / 1e12) << " " << rateUnit;
}

} // namespace

namespace rudnn::tools {

std::string targetArch(ModuleOp module) {
  auto target =
      module->getAttrOfType<TargetAttr>(RudnnDialect::kTargetAttrName);
  return target ? target.getArch().str() : "sm_90";
}

LogicalResult printPlanReport(ModuleOp module, llvm::raw_ostream &os, bool json,
                              const std::string &dimsText) {
  auto kernels = ::rudnn::codegen::emitKernels(module);
  if (failed(kernels))
    return failure();
  rt::TargetLimits target;
  try {
    target = rt::TargetLimits::forArch(targetArch(module));
  } catch (const std::exception &error) {
    return module.emitError() << error.what();
  }
  std::optional<std::map<std::string, int64_t>> dims;
  if (!dimsText.empty()) {
    auto parsed = parseDims(module, dimsText);
    if (failed(parsed))
      return failure();
    dims = *parsed;
  }

  rt::NvrtcCompiler compiler(::rudnn::device::headerFiles());
  std::map<std::string, KernelReport> reports;
  for (const ::rudnn::codegen::EmittedKernel &kernel : *kernels) {
    try {
      rt::CudaBinary binary = compiler.compile(
          {kernel.entry, kernel.source, kernel.archSpecific}, target.arch);
      KernelReport report{&kernel, {}, {}, 0, {}, wgmmaNotes(binary.log)};
      try {
        report.resources =
            rt::ptxasResources(kernel.entry, binary.ptx, binary.arch);
        report.residentBlocks = rt::residentBlocks(
            report.resources, kernel.threads, kernel.dynamicShared, target);
      } catch (const ::rudnn::Unsupported &why) {
        // No ptxas beside NVRTC: the rest of the report still stands.
        report.resourcesUnavailable = why.what();
      }
      report.mix = rt::sassInstructionMix(binary.cubin);
      reports.emplace(kernel.entry, std::move(report));
    } catch (const std::exception &error) {
      return module.emitError() << error.what();
    }
  }

  nlohmann::json all = nlohmann::json::array();
  const std::string &disassembler = rt::cuobjdumpPath();
  if (!json)
    os << "// kernel report for " << target.arch << " (" << target.device
       << ": " << target.smCount << " SMs), SASS "
       << (disassembler.empty() ? std::string("not available")
                                : "from " + disassembler)
       << "\n";
  for (PlanOp plan : module.getOps<PlanOp>()) {
    std::map<std::string, int64_t> params;
    if (dims)
      params = planParams(plan, *dims);
    // The plan's workspace at the dims.
    int64_t workspace = 0;
    bool workspaceKnown = dims.has_value();
    for (BufferOp buffer : plan.getOps<BufferOp>())
      if (buffer.getAccess() == "workspace" && buffer.getBytes()) {
        std::optional<int64_t> bytes =
            dims ? sizeAt(*buffer.getBytes(), params) : std::nullopt;
        workspaceKnown = workspaceKnown && bytes.has_value();
        workspace += bytes.value_or(0);
      }
    std::optional<double> perToken;
    if (workspaceKnown && params.count("B") && params.count("T") &&
        params.count("H"))
      perToken = double(workspace) / (params["B"] * params["T"] * params["H"]);
    if (!json && workspaceKnown) {
      os << "// plan @" << plan.getSymName() << " at " << dimsText
         << ": workspace " << workspace << " bytes";
      if (perToken)
        os << " (" << llvm::format("%.1f", *perToken) << " per token per head)";
      os << "\n";
    }

    double rooflineTotal = 0;
    for (LaunchOp launch : plan.getOps<LaunchOp>()) {
      auto found = reports.find(launch.getKernel().str());
      if (found == reports.end())
        continue;
      const KernelReport &report = found->second;
      const LaunchSize size = launchSize(launch, dims ? &params : nullptr);
      const int64_t perWave = int64_t(target.smCount) * report.residentBlocks;
      std::optional<double> waves;
      if (size.blocks && perWave > 0)
        waves = double(*size.blocks) / perWave;
      const auto &r = report.resources;
      const auto &mix = report.mix;
      // Tensor-core kernels against the tensor peak, others the FP32 one.
      const std::optional<LaunchCost> cost =
          launchCost(SymbolTable::lookupNearestSymbolFrom<KernelOp>(
                         plan, launch.getKernelAttr()),
                     dims ? &params : nullptr, target,
                     mix.unavailable.empty() ? mix.tensor > 0 : true,
                     size.blocks, report.residentBlocks);
      if (cost && cost->seconds && size.runs)
        rooflineTotal += *cost->seconds * size.launches;
      if (json) {
        nlohmann::json entry = {
            {"kernel", report.kernel->entry},
            {"plan", plan.getSymName().str()},
            {"arch", target.arch},
            {"device", target.device},
            {"threads", report.kernel->threads},
            {"grid", size.grid},
            {"registers", r.registers},
            {"spill_stores", r.spillStores},
            {"spill_loads", r.spillLoads},
            {"stack_bytes", r.stackBytes},
            {"static_shared", r.staticShared},
            {"dynamic_shared", report.kernel->dynamicShared},
            {"resident_blocks_per_sm", report.residentBlocks}};
        if (!report.resourcesUnavailable.empty())
          entry["resources_unavailable"] = report.resourcesUnavailable;
        if (!report.compilerNotes.empty())
          entry["compiler_notes"] = report.compilerNotes;
        if (size.blocks) {
          entry["blocks"] = *size.blocks;
          entry["runs"] = size.runs;
          if (!size.repeat.empty())
            entry["launches"] = size.launches;
          if (waves)
            entry["waves"] = *waves;
        }
        if (!size.repeat.empty())
          entry["repeat"] = size.repeat;
        if (workspaceKnown)
          entry["plan_workspace_bytes"] = workspace;
        if (cost) {
          entry["model"] = {{"memory_bytes", cost->bytesText},
                            {"flops", cost->flopsText}};
          if (cost->seconds) {
            entry["memory_bytes"] = *cost->bytes;
            entry["flops"] = *cost->flops;
            entry["roofline_us"] = *cost->seconds * 1e6;
            entry["memory_bound"] = std::string(cost->bound) == "memory";
            entry["bound"] = cost->bound;
            if (cost->exponentials)
              entry["exponentials"] = *cost->exponentials;
            if (cost->polynomialExponentials)
              entry["polynomial_exponentials"] = *cost->polynomialExponentials;
            if (cost->sharedBytes)
              entry["shared_operand_bytes"] = *cost->sharedBytes;
            if (cost->reducedBytes)
              entry["reduced_bytes"] = *cost->reducedBytes;
            if (cost->l2Bytes)
              entry["l2_operand_bytes"] = *cost->l2Bytes;
            if (cost->serial) {
              entry["serial_steps"] = cost->serial->steps;
              // As printed: a walk's is a wave's.
              entry["step_us"] = cost->serial->stepSeconds() * 1e6;
              entry["serial_us"] = cost->serial->seconds * 1e6;
              entry["step_blocks_per_sm"] = cost->serial->blocksPerSm;
              if (cost->serial->walk) {
                entry["step_latency_us"] = cost->serial->latency * 1e6;
                entry["step_barriers"] = cost->serial->barriers;
                entry["step_mma_chain"] = cost->serial->mmaChain;
                entry["walk_waves"] = cost->serial->waves;
              }
            }
          }
        }
        if (mix.unavailable.empty()) {
          nlohmann::json loads = nlohmann::json::object(),
                         stores = nlohmann::json::object();
          for (auto [bits, count] : mix.globalLoads)
            loads[std::to_string(bits)] = count;
          for (auto [bits, count] : mix.globalStores)
            stores[std::to_string(bits)] = count;
          entry["sass"] = {{"total", mix.total},
                           {"tensor", mix.tensor},
                           {"ldmatrix", mix.ldmatrix},
                           {"cp_async", mix.cpAsync},
                           {"tma", mix.tma},
                           {"opcodes", mix.opcodes},
                           {"wgmma_shapes", mix.wgmmaShapes},
                           {"named_barrier_syncs", mix.namedBarrierSyncs},
                           {"named_barrier_arrivals", mix.namedBarrierArrivals},
                           {"shared_loads", mix.sharedLoads},
                           {"shared_stores", mix.sharedStores},
                           {"global_loads_by_bits", loads},
                           {"global_stores_by_bits", stores}};
        } else {
          entry["sass"] = {{"unavailable", mix.unavailable}};
        }
        all.push_back(entry);
        continue;
      }
      os << "// ----- kernel " << report.kernel->entry << "\n"
         << "block: " << report.kernel->threads << " threads; grid "
         << size.grid;
      if (size.blocks) {
        os << " = " << *size.blocks << " blocks";
        if (waves)
          os << ", " << llvm::format("%.2f", *waves) << " waves";
        if (!size.runs)
          os << " (not run at these dims)";
      }
      if (!size.repeat.empty()) {
        os << "; launched " << size.repeat << " times";
        if (size.blocks)
          os << " (" << size.launches << ")";
      }
      os << "\n";
      if (report.resourcesUnavailable.empty())
        os << "registers: " << r.registers
           << " per thread; spills: " << r.spillStores << " bytes stored, "
           << r.spillLoads << " loaded; stack: " << r.stackBytes << " bytes\n"
           << "shared memory: " << r.staticShared << " bytes static, "
           << report.kernel->dynamicShared << " dynamic\n"
           << "resident blocks per SM: " << report.residentBlocks << "\n";
      else
        os << "registers, spills, static shared memory: unavailable: "
           << report.resourcesUnavailable << "\n"
           << "shared memory: " << report.kernel->dynamicShared << " dynamic\n";
      if (cost && cost->seconds)
        os << "model: " << llvm::format("%.1f", *cost->bytes / 1048576.0)
           << " MiB moved, " << llvm::format("%.2f", *cost->flops / 1e9)
           << " GFLOP, "
           << llvm::format("%.1f", double(*cost->flops) / *cost->bytes)
           << " FLOP/B; roofline " << llvm::format("%.1f", *cost->seconds * 1e6)
           << " us (" << cost->bound << "-bound)\n";
      else if (cost)
        os << "model: " << cost->bytesText << " bytes, " << cost->flopsText
           << " flops per launch\n";
      // A recurrence's: its steps one after another.
      if (cost && cost->serial) {
        const LaunchCost::Serial &s = *cost->serial;
        os << "serial: " << s.steps << (s.steps == 1 ? " step x " : " steps x ")
           << llvm::format("%.2f", s.stepSeconds() * 1e6)
           << " us (a block's L2 reads " << llvm::format("%.2f", s.l2 * 1e6)
           << ", compute " << llvm::format("%.2f", s.compute * 1e6) << ", ";
        if (s.walk) {
          os << "latency " << llvm::format("%.2f", s.latency * 1e6) << " of "
             << s.barriers << " block barriers and " << s.mmaChain
             << " dependent mma";
          if (s.together > 1)
            os << ", " << s.together << " blocks an SM at once";
          os << ")";
          if (s.waves > 1)
            os << " x " << s.waves << " waves";
          os << " = " << llvm::format("%.1f", s.seconds * 1e6) << " us\n";
        } else {
          if (s.blocksPerSm > 1)
            os << "x " << s.blocksPerSm << " blocks an SM, ";
          os << (s.gridBarrier ? "grid barrier " : "launch ")
             << llvm::format("%.2f", s.wait * 1e6)
             << ") = " << llvm::format("%.1f", s.seconds * 1e6) << " us\n";
        }
      }
      // The model's third bound, beside the tensor work it overlaps.
      if (cost && cost->exponentials) {
        printBound(os, "exponentials", double(*cost->exponentials), 1e6, "M",
                   target.exponentialsPerSecond, "T/s");
        if (cost->polynomialExponentials)
          os << "; "
             << llvm::format("%.1f", *cost->polynomialExponentials / 1e6)
             << " M more by polynomial on the FP32 pipes, "
             << llvm::format("%.1f", target.polynomialExponentialSeconds(double(
                                         *cost->polynomialExponentials)) *
                                         1e6)
             << " us";
        os << "; tensor work "
           << llvm::format("%.1f", *cost->flops / target.tensorFlops * 1e6)
           << " us at " << llvm::format("%.0f", target.tensorFlops / 1e12)
           << " TFLOP/s\n";
        // The same warps issue both: without overlap they take the sum,
        // which is near what FlashAttention-3 measures at D = 64 and 128.
        const double serial =
            *cost->flops / target.tensorFlops +
            *cost->exponentials / target.exponentialsPerSecond +
            target.polynomialExponentialSeconds(
                double(cost->polynomialExponentials.value_or(0)));
        os << "in turn (no overlap): " << llvm::format("%.1f", serial * 1e6)
           << " us, " << llvm::format("%.0f", *cost->flops / serial / 1e12)
           << " TFLOP/s\n";
      }
      // The fourth: tensor-core operands read from shared memory.
      if (cost && cost->sharedBytes) {
        printBound(os, "shared operands", double(*cost->sharedBytes), 1048576.0,
                   "MiB", target.sharedBytesPerSecond, "TB/s");
        os << "\n";
      }
      // The fifth: partial sums added in global memory, met in L2, and
      // operand tiles re-read through it.
      if (cost && cost->reducedBytes) {
        printBound(os, "L2 reductions", double(*cost->reducedBytes), 1048576.0,
                   "MiB", target.reducedBytesPerSecond, "TB/s");
        os << "\n";
      }
      if (cost && cost->l2Bytes) {
        printBound(os, "L2 operand tiles", double(*cost->l2Bytes), 1048576.0,
                   "MiB", target.reducedBytesPerSecond, "TB/s");
        os << "\n";
      }
      for (const std::string &note : report.compilerNotes)
        os << "compiler: " << note << "\n";
      if (!mix.unavailable.empty()) {
        os << "sass: unavailable: " << mix.unavailable << "\n";
        continue;
      }
      auto widths = [](const std::map<int, int64_t> &byWidth) {
        std::string text;
        for (int bits : {8, 16, 32, 64, 128}) {
          auto count = byWidth.find(bits);
          text += (text.empty() ? "" : ", ") + std::to_string(bits) + "-bit " +
                  std::to_string(count == byWidth.end() ? 0 : count->second);
        }
        return text;
      };
      os << "sass: " << mix.total << " instructions; tensor " << mix.tensor
         << ", ldmatrix " << mix.ldmatrix << ", cp.async " << mix.cpAsync
         << ", tma " << mix.tma << "; shared loads " << mix.sharedLoads
         << ", stores " << mix.sharedStores;
      // Which instructions: HMMA or HGMMA, LDGSTS or UTMALDG.
      const char *separator = " (";
      for (auto [opcode, count] : mix.opcodes) {
        os << separator << opcode << " " << count;
        separator = ", ";
      }
      os << (mix.opcodes.empty() ? "\n" : ")\n")
         << "global loads: " << widths(mix.globalLoads) << "\n"
         << "global stores: " << widths(mix.globalStores) << "\n";
      if (mix.namedBarrierSyncs || mix.namedBarrierArrivals)
        os << "named barriers: " << mix.namedBarrierSyncs << " sync, "
           << mix.namedBarrierArrivals << " arrive\n";
      if (!mix.wgmmaShapes.empty()) {
        os << "wgmma shapes:";
        for (auto [shape, count] : mix.wgmmaShapes)
          os << " " << shape << " " << count;
        os << "\n";
      }
    }
    if (!json && dims)
      os << "// plan @" << plan.getSymName()
         << " roofline: " << llvm::format("%.1f", rooflineTotal * 1e6)
         << " us over the launches that run at these dims ("
         << llvm::format("%.1f", target.memoryBytesPerSecond / 1e12)
         << " TB/s, " << llvm::format("%.0f", target.tensorFlops / 1e12)
         << " TFLOP/s tensor, " << llvm::format("%.0f", target.fp32Flops / 1e12)
         << " FP32)\n";
  }
  if (json)
    os << all.dump(2) << "\n";
  return success();
}

void printFileReport(const std::string &path, const std::string &arch,
                     const std::string &dims, llvm::raw_ostream &os) {
  DialectRegistry registry;
  registerRudnnDialects(registry);
  MLIRContext context(registry, MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  std::string diagnostics;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &d) {
    llvm::raw_string_ostream text(diagnostics);
    text << d << "\n";
    return success();
  });
  auto sourceMgr = std::make_shared<llvm::SourceMgr>();
  sourceMgr->AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          ::rudnn::runtime::readInputFile(path, "module"), path),
      llvm::SMLoc());
  OwningOpRef<ModuleOp> module = parseRudnnSource(sourceMgr, &context);
  if (!module)
    throw InvalidArgument("not valid rudnn IR:\n" + diagnostics);
  PassManager pm(&context);
  RudnnSpecializeOptions options;
  options.arch = arch;
  pm.addPass(createRudnnSpecialize(options));
  pm.addPass(createRudnnDecompose());
  pm.addPass(createRudnnPlan());
  if (failed(pm.run(*module)) ||
      failed(printPlanReport(*module, os, /*json=*/false, dims)))
    throw InvalidArgument("no kernel report:\n" + diagnostics);
}

} // namespace rudnn::tools
