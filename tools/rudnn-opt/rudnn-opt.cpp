//===- rudnn-opt.cpp - The rudnn optimizer driver -------------------------===//
//
// Parses rudnn IR, runs the passes named on the command line and prints the
// result: the tool lit tests drive, and the way to look at each lowering stage.
// Text nested too deep for the parser is refused first (SourceLimits.h).
//
//===----------------------------------------------------------------------===//

#include "codegen/InitRudnn.h"
#include "dialects/IR/SourceLimits.h"
#include "rudnn/errors.h"
#include "runtime/support/InputFile.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/ToolOutputFile.h"

#include "rudnn/version_number.h"

using namespace mlir;

int main(int argc, char **argv) {
  DialectRegistry registry;
  mlir::rudnn::registerRudnnDialects(registry);
  mlir::rudnn::registerRudnnPipelinePasses();
  llvm::cl::AddExtraVersionPrinter([](llvm::raw_ostream &os) {
    os << "rudnn " << RUDNN_VERSION_STRING << "\n";
  });
  auto [input, output] = registerAndParseCLIOptions(
      argc, argv, "rudnn optimizer driver\n", registry);
  MlirOptMainConfig config = MlirOptMainConfig::createFromCLOptions();
  if (config.shouldShowDialects())
    return asMainReturnCode(MlirOptMain(argc, argv, input, output, registry));

  try {
    ::rudnn::runtime::checkToolInput(input, "input");
  } catch (const ::rudnn::Error &error) {
    llvm::errs() << error.what() << "\n";
    return 1;
  }
  std::string message;
  std::unique_ptr<llvm::MemoryBuffer> file = openInputFile(input, &message);
  if (!file) {
    llvm::errs() << message << "\n";
    return 1;
  }
  if (auto refused = mlir::rudnn::findRefusedSource(file->getBuffer())) {
    llvm::SourceMgr sourceMgr;
    const char *start = file->getBufferStart();
    sourceMgr.AddNewSourceBuffer(std::move(file), llvm::SMLoc());
    sourceMgr.PrintMessage(llvm::SMLoc::getFromPointer(start + refused->first),
                           llvm::SourceMgr::DK_Error, refused->second);
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> out = openOutputFile(output, &message);
  if (!out) {
    llvm::errs() << message << "\n";
    return 1;
  }
  if (failed(MlirOptMain(out->os(), std::move(file), registry, config)))
    return 1;
  out->keep();
  return 0;
}
