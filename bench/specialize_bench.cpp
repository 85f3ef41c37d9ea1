//===- specialize_bench.cpp - Front-end cost of one operator call ---------===//
//
// Parses a KDA module and runs rudnn-specialize on it: the MLIR work a plan
// cache miss pays before any code is emitted.
//
//===----------------------------------------------------------------------===//

#include "codegen/InitRudnn.h"
#include "codegen/Transforms/Passes.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include <benchmark/benchmark.h>

static const char *kKdaModule = R"mlir(
func.func @main(%q: tensor<?x?x?x128xbf16>, %k: tensor<?x?x?x128xbf16>,
                %v: tensor<?x?x?x128xbf16>, %g: tensor<?x?x?x128xf32>,
                %beta: tensor<?x?x?xf32>)
    -> (tensor<?x?x?x128xbf16>, tensor<?x?x128x128xf32>) {
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta
      : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
         tensor<?x?x?x128xbf16>, tensor<?x?x?x128xf32>, tensor<?x?x?xf32>)
      -> (tensor<?x?x?x128xbf16>, tensor<?x?x128x128xf32>)
  return %o, %s : tensor<?x?x?x128xbf16>, tensor<?x?x128x128xf32>
}
)mlir";

static void BM_ParseAndSpecialize(benchmark::State &state) {
  mlir::DialectRegistry registry;
  mlir::rudnn::registerRudnnDialects(registry);
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();
  for (auto _ : state) {
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::parseSourceString<mlir::ModuleOp>(kKdaModule, &context);
    mlir::PassManager pm(&context);
    pm.addPass(mlir::rudnn::createRudnnSpecialize());
    if (!module || mlir::failed(pm.run(*module))) {
      state.SkipWithError("parse or rudnn-specialize failed");
      return;
    }
    benchmark::DoNotOptimize(module.get());
  }
}
BENCHMARK(BM_ParseAndSpecialize)->Unit(benchmark::kMicrosecond);

BENCHMARK_MAIN();
