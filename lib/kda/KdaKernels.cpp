//===- KdaKernels.cpp - The KDA forward plan and its kernels --------------===//

#include "lib/kda/KdaKernels.h"
#include "lib/PlanImport.h"

#include "codegen/InitRudnn.h"
#include "codegen/Transforms/Passes.h"
#include "dialects/IR/RudnnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

#include <sstream>

using namespace rudnn;
using namespace rudnn::runtime;

namespace {

codegen::ScalarType scalarType(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return codegen::ScalarType::F16;
  case DType::BF16:
    return codegen::ScalarType::BF16;
  default:
    return codegen::ScalarType::F32;
  }
}

} // namespace

codegen::KdaKernelSpec rudnn::emitterSpec(const KdaKernelSpec &spec) {
  return {scalarType(spec.input), scalarType(spec.gate), scalarType(spec.beta),
          spec.featureK,          spec.featureV,         spec.chunk};
}

std::string rudnn::kdaForwardSignature(const KdaKernelSpec &spec,
                                       const KdaPlanFlags &flags) {
  std::ostringstream key;
  key << "kda_forward:" << codegen::kdaSpecName(emitterSpec(spec))
      << ":s0=" << flags.initialState << ":sT=" << flags.finalState
      << ":bounds=" << flags.saveBoundaries << ":scale=" << std::hexfloat
      << flags.scale;
  return key.str();
}

namespace {

mlir::Type mlirType(mlir::Builder &builder, DType dtype) {
  switch (dtype) {
  case DType::F16:
    return builder.getF16Type();
  case DType::BF16:
    return builder.getBF16Type();
  default:
    return builder.getF32Type();
  }
}

/// The operator call as rudnn IR: @kda taking q k v g beta [initial_state]
/// with dynamic B, T, H and returning output, [final_state],
/// [boundaries].
mlir::OwningOpRef<mlir::ModuleOp> kdaModule(mlir::MLIRContext &mlir,
                                            const KdaKernelSpec &spec,
                                            const KdaPlanFlags &flags) {
  mlir::OpBuilder b(&mlir);
  mlir::Location loc = b.getUnknownLoc();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  const int64_t dyn = mlir::ShapedType::kDynamic;
  const int64_t K = spec.featureK, V = spec.featureV;
  auto tensor = [&](llvm::ArrayRef<int64_t> shape, DType dtype) {
    return mlir::RankedTensorType::get(shape, mlirType(b, dtype));
  };
  mlir::Type q = tensor({dyn, dyn, dyn, K}, spec.input),
             v = tensor({dyn, dyn, dyn, V}, spec.input),
             g = tensor({dyn, dyn, dyn, K}, spec.gate),
             beta = tensor({dyn, dyn, dyn}, spec.beta),
             state = tensor({dyn, dyn, K, V}, DType::F32),
             bounds = tensor({dyn, dyn, dyn, K, V}, DType::F32);
  llvm::SmallVector<mlir::Type> inputs = {q, q, v, g, beta};
  if (flags.initialState)
    inputs.push_back(state);
  llvm::SmallVector<mlir::Type> results = {v};
  if (flags.finalState)
    results.push_back(state);
  if (flags.saveBoundaries)
    results.push_back(bounds);

  b.setInsertionPointToEnd(module->getBody());
  auto func = b.create<mlir::func::FuncOp>(loc, "kda",
                                           b.getFunctionType(inputs, results));
  mlir::Block *body = func.addEntryBlock();
  b.setInsertionPointToEnd(body);
  mlir::Value initial = flags.initialState ? body->getArgument(5) : nullptr;
  auto kda = b.create<mlir::rudnn::KdaOp>(
      loc, body->getArgument(0), body->getArgument(1), body->getArgument(2),
      body->getArgument(3), body->getArgument(4), initial,
      flags.saveBoundaries);
  kda.setChunkAttr(b.getI64IntegerAttr(spec.chunk));
  kda.setScaleAttr(b.getF32FloatAttr(flags.scale));
  llvm::SmallVector<mlir::Value> returned = {kda.getOutput()};
  if (flags.finalState)
    returned.push_back(kda.getFinalState());
  if (flags.saveBoundaries)
    returned.push_back(kda.getBoundaries());
  b.create<mlir::func::ReturnOp>(loc, returned);
  return module;
}

} // namespace

Plan rudnn::buildKdaForwardPlan(Context::Impl &context,
                                const KdaKernelSpec &spec,
                                const KdaPlanFlags &flags) {
  mlir::DialectRegistry registry;
  mlir::rudnn::registerRudnnDialects(registry);
  mlir::MLIRContext mlir(registry, mlir::MLIRContext::Threading::DISABLED);
  mlir.loadAllAvailableDialects();
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(&mlir, [&](mlir::Diagnostic &d) {
    diagnostics += d.str() + "\n";
    return mlir::success();
  });
  mlir::OwningOpRef<mlir::ModuleOp> module = kdaModule(mlir, spec, flags);
  mlir::PassManager pm(&mlir);
  pm.addPass(mlir::rudnn::createRudnnSpecialize());
  pm.addPass(mlir::rudnn::createRudnnDecompose());
  pm.addPass(mlir::rudnn::createRudnnPlan());
  if (mlir::failed(pm.run(*module)))
    throw Error(Status::Internal,
                "lowering the KDA forward failed:\n" + diagnostics);
  auto plans = module->getOps<mlir::rudnn::PlanOp>();
  if (plans.empty())
    throw Error(Status::Internal, "lowering the KDA forward made no plan");
  Plan plan = importPlan(*plans.begin(), context);
  plan.name = "kda_forward_" + codegen::kdaSpecName(emitterSpec(spec));
  return plan;
}
