//===- OperatorFunctions.cpp - Operator calls as cached functions ---------===//

#include "lib/OperatorFunctions.h"
#include "lib/ContextImpl.h"

#include "codegen/InitRudnn.h"

#include "rudnn/errors.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"

using namespace rudnn;

mlir::Type rudnn::mlirElementType(mlir::Builder &builder, DType dtype) {
  switch (dtype) {
  case DType::F16:
    return builder.getF16Type();
  case DType::BF16:
    return builder.getBF16Type();
  case DType::I32:
    return builder.getI32Type();
  case DType::Bool:
    return builder.getI1Type();
  default:
    return builder.getF32Type();
  }
}

Function rudnn::cachedFunction(
    Context &context, const std::string &signature,
    llvm::function_ref<mlir::OwningOpRef<mlir::ModuleOp>(mlir::MLIRContext &)>
        build) {
  Context::Impl &impl = context.impl();
  std::lock_guard<std::mutex> lock(impl.functionMutex);
  if (const std::optional<Function> *cached = impl.functions.find(signature)) {
    ++impl.functionCacheHits;
    return **cached;
  }
  ++impl.functionCacheMisses;
  mlir::DialectRegistry registry;
  mlir::rudnn::registerRudnnDialects(registry);
  mlir::MLIRContext mlir(registry, mlir::MLIRContext::Threading::DISABLED);
  mlir.loadAllAvailableDialects();
  mlir::OwningOpRef<mlir::ModuleOp> module = build(mlir);
  // The op's verifier names what the call got wrong that only the op knows
  // (a size its attributes fix).
  std::string diagnostics;
  {
    mlir::ScopedDiagnosticHandler handler(&mlir, [&](mlir::Diagnostic &d) {
      diagnostics += (diagnostics.empty() ? "" : "; ") + d.str();
      return mlir::success();
    });
    if (mlir::failed(mlir::verify(*module)))
      throw InvalidArgument(diagnostics);
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  module->print(os);
  auto func = *module->getOps<mlir::func::FuncOp>().begin();
  Function function =
      Module::parse(context, os.str()).function(func.getSymName().str());
  *impl.functions.insert(signature).first = function;
  impl.shrinkFunctions();
  return function;
}

void Context::Impl::shrinkFunctions() {
  const size_t dropped = functions.shrink(
      functionCapacity, [](const std::optional<Function> &) { return true; });
  planCacheEvictions += dropped;
  functionCacheEvictions += dropped;
}

std::vector<TensorView>
rudnn::presentViews(const std::vector<const TensorView *> &views) {
  std::vector<TensorView> present;
  for (const TensorView *view : views)
    if (view)
      present.push_back(*view);
  return present;
}
