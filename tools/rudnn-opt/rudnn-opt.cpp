//===- rudnn-opt.cpp - The rudnn optimizer driver -------------------------===//
//
// Parses rudnn IR, runs the passes named on the command line and prints the
// result: the tool lit tests drive, and the way to look at each lowering stage.
//
//===----------------------------------------------------------------------===//

#include "codegen/InitRudnn.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::rudnn::registerRudnnDialects(registry);
  mlir::rudnn::registerRudnnPipelinePasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "rudnn optimizer driver\n", registry));
}
