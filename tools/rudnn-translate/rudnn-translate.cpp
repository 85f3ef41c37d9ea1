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
#include "codegen/device/DeviceLibrary.h"
#include "dialects/IR/RudnnDialect.h"
#include "dialects/IR/SourceLimits.h"
#include "runtime/compile/NvrtcCompiler.h"
#include "runtime/support/InputFile.h"

#include "tools/report/PlanReport.h"

#include "mlir/Tools/mlir-translate/MlirTranslateMain.h"
#include "mlir/Tools/mlir-translate/Translation.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"

#include "rudnn/program.h"
#include "rudnn/version_number.h"

#include <algorithm>

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
  const std::string arch = ::rudnn::tools::targetArch(module);
  ::rudnn::runtime::NvrtcCompiler compiler(::rudnn::device::headerFiles());
  for (const ::rudnn::codegen::EmittedKernel &kernel : *kernels) {
    try {
      ::rudnn::runtime::CudaBinary binary = compiler.compile(
          {kernel.entry, kernel.source, kernel.archSpecific}, arch);
      os << "// ----- kernel " << kernel.entry << " (" << binary.arch << ")\n"
         << binary.ptx << "\n";
    } catch (const std::exception &error) {
      return module.emitError() << error.what();
    }
  }
  return success();
}

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

static llvm::cl::opt<std::string> reportDims(
    "rudnn-report-dims",
    llvm::cl::desc("with --rudnn-kernel-report: the dims (B=1,T=32768,H=16) "
                   "to size grids, waves and workspace for"),
    llvm::cl::init(""));

static llvm::cl::opt<std::string> bundleTargets(
    "rudnn-bundle-targets",
    llvm::cl::desc("with --rudnn-to-bundle: the targets to compile for, "
                   "comma-separated (sm_90, sm_80, ..., emulation)"),
    llvm::cl::init("sm_90"));

static llvm::cl::opt<std::string> bundleFunction(
    "rudnn-bundle-function",
    llvm::cl::desc("with --rudnn-to-bundle: the function to bundle"),
    llvm::cl::init("main"));

/// The function compiled ahead of time for each target, as a bundle
/// (rudnn/bundle.h) librudnn_runtime loads.
static LogicalResult toBundle(Operation *op, llvm::raw_ostream &os) {
  std::string text;
  llvm::raw_string_ostream printed(text);
  op->print(printed);
  std::vector<std::string> targets;
  for (llvm::StringRef rest = bundleTargets; !rest.empty();) {
    auto [target, tail] = rest.split(',');
    if (!target.trim().empty())
      targets.push_back(target.trim().str());
    rest = tail;
  }
  ::rudnn::ContextOptions options;
  if (std::find(targets.begin(), targets.end(), "emulation") != targets.end())
    options.backend = ::rudnn::BackendKind::Emulation;
  try {
    ::rudnn::Context context(options);
    ::rudnn::Module module = ::rudnn::Module::parse(context, printed.str());
    llvm::SmallString<128> path;
    if (std::error_code error =
            llvm::sys::fs::createTemporaryFile("rudnn", "bundle", path))
      return op->emitError() << "cannot write a bundle: " << error.message();
    module.function(bundleFunction).saveBundle(path.str().str(), targets);
    auto buffer = llvm::MemoryBuffer::getFile(path);
    llvm::sys::fs::remove(path);
    if (!buffer)
      return op->emitError() << "cannot read the bundle back";
    os << (*buffer)->getBuffer();
    return success();
  } catch (const std::exception &error) {
    return op->emitError() << error.what();
  }
}

template <bool Json>
static LogicalResult kernelReport(Operation *op, llvm::raw_ostream &os) {
  return ::rudnn::tools::printPlanReport(cast<ModuleOp>(op), os, Json,
                                         reportDims);
}

/// Refuses an input that is not a regular file (or a pipe on the standard
/// input) before MLIR reads it to its end: /dev/zero or a FIFO would never
/// end or never start. The input is the one argument that is no option and
/// no value of `-o`; without one it is the standard input.
static bool refuseIrregularInput(int argc, char **argv) {
  std::string input = "-";
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    if (arg == "-o") {
      ++i;
      continue;
    }
    if (arg == "--")
      break;
    if (arg == "-" || !arg.starts_with("-"))
      input = arg.str();
  }
  try {
    ::rudnn::runtime::checkToolInput(input, "input");
    return false;
  } catch (const ::rudnn::Error &error) {
    llvm::errs() << error.what() << "\n";
    return true;
  }
}

int main(int argc, char **argv) {
  if (refuseIrregularInput(argc, argv))
    return 1;
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
  TranslateRegistration bundle(
      "rudnn-to-bundle",
      "compile a function ahead of time into a bundle for librudnn_runtime",
      fromRudnnSource(toBundle));
  TranslateRegistration reportJson("rudnn-kernel-report-json",
                                   "the kernel report as JSON",
                                   fromRudnnSource(kernelReport<true>));
  llvm::cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "rudnn " << RUDNN_VERSION_STRING << "\n";
  });
  return failed(mlirTranslateMain(argc, argv, "rudnn translation driver\n"));
}
