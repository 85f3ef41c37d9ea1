//===- rudnn-translate.cpp - rudnn IR to CUDA C++ and PTX -----------------===//
//
//   rudnn-opt k.mlir -rudnn-specialize -rudnn-decompose -rudnn-plan |
//     rudnn-translate --rudnn-to-cuda     (or --rudnn-to-ptx,
//                                          --rudnn-kernel-report[-json])
//
// Prints every kernel of a planned module, each after a line
// `// ----- kernel <entry>`; PTX comes from NVRTC for the module's target.
// The kernel report gives what a profiler would show of each kernel
// without a GPU: registers, spills, shared memory, resident blocks per SM
// and the static SASS instruction mix.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emit/EmitModule.h"
#include "codegen/InitRudnn.h"
#include "dialects/IR/RudnnDialect.h"
#include "dialects/IR/SourceLimits.h"
#include "lib/ContextImpl.h"

#include "runtime/KernelReport.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"

#include <nlohmann/json.hpp>

using namespace mlir;

static LogicalResult toCuda(Operation *op, llvm::raw_ostream &os) {
  auto kernels = ::rudnn::codegen::emitKernels(cast<ModuleOp>(op));
  if (failed(kernels))
    return failure();
  for (const ::rudnn::codegen::EmittedKernel &kernel : *kernels)
    os << "// ----- kernel " << kernel.entry << "\n" << kernel.source << "\n";
  return success();
}

static LogicalResult toPtx(Operation *op, llvm::raw_ostream &os) {
  auto module = cast<ModuleOp>(op);
  auto kernels = ::rudnn::codegen::emitKernels(module);
  if (failed(kernels))
    return failure();
  auto target = module->getAttrOfType<mlir::rudnn::TargetAttr>(
      mlir::rudnn::RudnnDialect::kTargetAttrName);
  std::string arch = target ? target.getArch().str() : "sm_90";
  ::rudnn::runtime::NvrtcCompiler compiler(::rudnn::deviceLibraryHeaders());
  for (const ::rudnn::codegen::EmittedKernel &kernel : *kernels) {
    try {
      ::rudnn::runtime::CudaBinary binary =
          compiler.compile({kernel.entry, kernel.source}, arch);
      os << "// ----- kernel " << kernel.entry << " (" << arch << ")\n"
         << binary.ptx << "\n";
    } catch (const std::exception &error) {
      return module.emitError() << error.what();
    }
  }
  return success();
}

namespace {

/// One kernel's report, from NVRTC, ptxas and the disassembler.
struct KernelReport {
  const ::rudnn::codegen::EmittedKernel *kernel;
  ::rudnn::runtime::KernelResources resources;
  ::rudnn::runtime::InstructionMix mix;
  int residentBlocks = 0;
};

std::string moduleArch(ModuleOp module) {
  auto target = module->getAttrOfType<mlir::rudnn::TargetAttr>(
      mlir::rudnn::RudnnDialect::kTargetAttrName);
  return target ? target.getArch().str() : "sm_90";
}

FailureOr<std::vector<KernelReport>>
reportKernels(ModuleOp module,
              const std::vector<::rudnn::codegen::EmittedKernel> &kernels,
              const ::rudnn::runtime::TargetLimits &target) {
  ::rudnn::runtime::NvrtcCompiler compiler(::rudnn::deviceLibraryHeaders());
  std::vector<KernelReport> reports;
  for (const ::rudnn::codegen::EmittedKernel &kernel : kernels) {
    try {
      ::rudnn::runtime::CudaBinary binary =
          compiler.compile({kernel.entry, kernel.source}, target.arch);
      KernelReport report{&kernel, {}, {}, 0};
      report.resources = ::rudnn::runtime::ptxasResources(
          kernel.entry, binary.ptx, target.arch);
      report.mix = ::rudnn::runtime::sassInstructionMix(binary.cubin);
      report.residentBlocks = ::rudnn::runtime::residentBlocks(
          report.resources, kernel.threads, kernel.dynamicShared, target);
      reports.push_back(std::move(report));
    } catch (const std::exception &error) {
      return module.emitError() << error.what();
    }
  }
  return reports;
}

std::string widths(const std::map<int, int64_t> &byWidth) {
  std::string text;
  for (int bits : {8, 16, 32, 64, 128}) {
    auto found = byWidth.find(bits);
    text += (text.empty() ? "" : ", ") + std::to_string(bits) + "-bit " +
            std::to_string(found == byWidth.end() ? 0 : found->second);
  }
  return text;
}

template <bool Json>
LogicalResult kernelReport(Operation *op, llvm::raw_ostream &os) {
  auto module = cast<ModuleOp>(op);
  auto kernels = ::rudnn::codegen::emitKernels(module);
  if (failed(kernels))
    return failure();
  ::rudnn::runtime::TargetLimits target;
  try {
    target = ::rudnn::runtime::TargetLimits::forArch(moduleArch(module));
  } catch (const std::exception &error) {
    return module.emitError() << error.what();
  }
  auto reports = reportKernels(module, *kernels, target);
  if (failed(reports))
    return failure();
  const std::string &disassembler = ::rudnn::runtime::cuobjdumpPath();
  if constexpr (Json) {
    nlohmann::json all = nlohmann::json::array();
    for (const KernelReport &report : *reports) {
      const auto &r = report.resources;
      const auto &mix = report.mix;
      nlohmann::json entry = {
          {"kernel", report.kernel->entry},
          {"arch", target.arch},
          {"device", target.device},
          {"threads", report.kernel->threads},
          {"registers", r.registers},
          {"spill_stores", r.spillStores},
          {"spill_loads", r.spillLoads},
          {"stack_bytes", r.stackBytes},
          {"static_shared", r.staticShared},
          {"dynamic_shared", report.kernel->dynamicShared},
          {"resident_blocks_per_sm", report.residentBlocks}};
      if (mix.unavailable.empty()) {
        nlohmann::json loads, stores;
        for (auto [bits, count] : mix.globalLoads)
          loads[std::to_string(bits)] = count;
        for (auto [bits, count] : mix.globalStores)
          stores[std::to_string(bits)] = count;
        entry["sass"] = {{"total", mix.total},
                         {"tensor", mix.tensor},
                         {"ldmatrix", mix.ldmatrix},
                         {"cp_async", mix.cpAsync},
                         {"tma", mix.tma},
                         {"shared_loads", mix.sharedLoads},
                         {"shared_stores", mix.sharedStores},
                         {"global_loads_by_bits", loads},
                         {"global_stores_by_bits", stores}};
      } else {
        entry["sass"] = {{"unavailable", mix.unavailable}};
      }
      all.push_back(entry);
    }
    os << all.dump(2) << "\n";
    return success();
  }
  os << "// kernel report for " << target.arch << " (" << target.device << ": "
     << target.smCount << " SMs), SASS "
     << (disassembler.empty() ? std::string("not available")
                              : "from " + disassembler)
     << "\n";
  for (const KernelReport &report : *reports) {
    const auto &r = report.resources;
    const auto &mix = report.mix;
    os << "// ----- kernel " << report.kernel->entry << "\n"
       << "block: " << report.kernel->threads << " threads\n"
       << "registers: " << r.registers
       << " per thread; spills: " << r.spillStores << " bytes stored, "
       << r.spillLoads << " loaded; stack: " << r.stackBytes << " bytes\n"
       << "shared memory: " << r.staticShared << " bytes static, "
       << report.kernel->dynamicShared << " dynamic\n"
       << "resident blocks per SM: " << report.residentBlocks << "\n";
    if (!mix.unavailable.empty()) {
      os << "sass: unavailable: " << mix.unavailable << "\n";
      continue;
    }
    os << "sass: " << mix.total << " instructions; tensor " << mix.tensor
       << ", ldmatrix " << mix.ldmatrix << ", cp.async " << mix.cpAsync
       << ", tma " << mix.tma << "; shared loads " << mix.sharedLoads
       << ", stores " << mix.sharedStores << "\n"
       << "global loads: " << widths(mix.globalLoads) << "\n"
       << "global stores: " << widths(mix.globalStores) << "\n";
  }
  return success();
}

} // namespace

/// A translation from rudnn IR text: parsed by parseRudnnSource, which
/// refuses text nested too deep for the parser, then handed to `emit`.
static TranslateFunction
fromRudnnSource(LogicalResult (*emit)(Operation *, llvm::raw_ostream &)) {
  return [emit](const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
                llvm::raw_ostream &os, MLIRContext *context) {
    DialectRegistry registry;
    mlir::rudnn::registerRudnnDialects(registry);
    context->appendDialectRegistry(registry);
    OwningOpRef<ModuleOp> module =
        mlir::rudnn::parseRudnnSource(sourceMgr, context);
    return module ? emit(*module, os) : failure();
  };
}

int main(int argc, char **argv) {
  TranslateRegistration cuda("rudnn-to-cuda",
                             "emit the CUDA C++ of every kernel",
                             fromRudnnSource(toCuda));
  TranslateRegistration ptx("rudnn-to-ptx",
                            "compile every kernel to PTX with NVRTC",
                            fromRudnnSource(toPtx));
  TranslateRegistration report(
      "rudnn-kernel-report",
      "per kernel: registers, spills, shared memory, resident blocks per SM "
      "and the static SASS instruction mix",
      fromRudnnSource(kernelReport<false>));
  TranslateRegistration reportJson("rudnn-kernel-report-json",
                                   "the kernel report as JSON",
                                   fromRudnnSource(kernelReport<true>));
  return failed(mlirTranslateMain(argc, argv, "rudnn translation driver\n"));
}
