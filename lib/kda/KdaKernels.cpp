//===- KdaKernels.cpp - The KDA forward plan and its kernels --------------===//

#include "lib/kda/KdaKernels.h"
#include "lib/OperatorFunctions.h"

#include "codegen/InitRudnn.h"
#include "codegen/Transforms/Passes.h"
#include "dialects/IR/RudnnOps.h"
#include "dialects/IR/TargetPolicy.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

#include <sstream>

using namespace rudnn;
using namespace rudnn::runtime;

std::string rudnn::kdaBackwardSignature(const KdaKernelSpec &spec,
                                        const KdaBackwardFlags &flags) {
  std::ostringstream key;
  key << "kda_backward:" << codegen::kdaSpecName(spec)
      << ":s0=" << flags.initialState << ":dsT=" << flags.dFinalState
      << ":bounds=" << flags.savedBoundaries << ":tiles=" << flags.savedTiles
      << ":ds0=" << flags.dInitialState << ":gva=" << flags.groupedHeads
      << ":scale=" << std::hexfloat << flags.scale;
  return key.str();
}

std::string rudnn::kdaForwardSignature(const KdaKernelSpec &spec,
                                       const KdaPlanFlags &flags) {
  std::ostringstream key;
  key << "kda_forward:" << codegen::kdaSpecName(spec)
      << ":s0=" << flags.initialState << ":sT=" << flags.finalState
      << ":bounds=" << flags.saveBoundaries << ":tiles=" << flags.saveTiles
      << ":gva=" << flags.groupedHeads << ":scale=" << std::hexfloat
      << flags.scale;
  return key.str();
}

namespace {

/// The tensor types of a call with dynamic B, T, H (and N).
struct CallTypes {
  CallTypes(mlir::Builder &b, const KdaKernelSpec &spec) {
    const int64_t dyn = mlir::ShapedType::kDynamic;
    const int64_t K = spec.featureK, V = spec.featureV;
    auto tensor = [&](llvm::ArrayRef<int64_t> shape, DType dtype) {
      return mlir::RankedTensorType::get(shape, mlirElementType(b, dtype));
    };
    // Packed sequences: one batch entry of every sequence's tokens.
    const int64_t batch = spec.packed ? 1 : dyn;
    q = tensor({batch, dyn, dyn, K}, spec.input);
    v = tensor({batch, dyn, dyn, V}, spec.input);
    g = tensor({batch, dyn, dyn, K}, spec.gate);
    keyGradient = tensor({batch, dyn, dyn, K}, DType::F32);
    beta = tensor({batch, dyn, dyn}, spec.beta);
    offsets = tensor({dyn}, DType::I32);
    state = tensor({dyn, dyn, K, V}, DType::F32);
    boundaries = tensor({dyn, dyn, dyn, K, V}, spec.input);
    if (spec.chunk)
      tiles = tensor(
          {dyn, dyn, dyn,
           mlir::rudnn::kdaSavedTileWords(
               spec.chunk, K, V, static_cast<int64_t>(dtypeSize(spec.input)))},
          DType::F32);
  }
  mlir::Type q, v, g, keyGradient, beta, state, boundaries, offsets;
  mlir::Type tiles; // with a chunk
};

/// The `grouped_heads` attribute, set or not.
mlir::UnitAttr groupedHeads(mlir::Builder &b, bool grouped) {
  return grouped ? b.getUnitAttr() : mlir::UnitAttr();
}

/// With aligned views, `rudnn.align = 16` on the arguments `indices` (the
/// views the kernels copy): the calls check it, the kernels rely on it.
void promiseAlignedRows(mlir::func::FuncOp func, const KdaKernelSpec &spec,
                        std::initializer_list<unsigned> indices) {
  if (!spec.alignedViews)
    return;
  mlir::Builder b(func.getContext());
  for (unsigned index : indices)
    func.setArgAttr(index, mlir::rudnn::RudnnDialect::kAlignAttrName,
                    b.getI64IntegerAttr(16));
}

/// The operator call as rudnn IR: @kda taking q k v g beta [initial_state]
/// with dynamic B, T, H and returning output, [final_state],
/// [boundaries], [tiles].
mlir::OwningOpRef<mlir::ModuleOp> forwardModule(mlir::MLIRContext &mlir,
                                                const KdaKernelSpec &spec,
                                                const KdaPlanFlags &flags) {
  mlir::OpBuilder b(&mlir);
  mlir::Location loc = b.getUnknownLoc();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  const CallTypes t(b, spec);
  mlir::Type q = t.q, v = t.v, state = t.state, bounds = t.boundaries;
  llvm::SmallVector<mlir::Type> inputs = {q, q, v, t.g, t.beta};
  if (spec.packed)
    inputs.push_back(t.offsets);
  if (flags.initialState)
    inputs.push_back(state);
  llvm::SmallVector<mlir::Type> results = {v};
  if (flags.finalState)
    results.push_back(state);
  if (flags.saveBoundaries)
    results.push_back(bounds);
  if (flags.saveTiles)
    results.push_back(t.tiles);

  b.setInsertionPointToEnd(module->getBody());
  auto func = b.create<mlir::func::FuncOp>(
      loc, "kda_forward_" + codegen::kdaSpecName(spec),
      b.getFunctionType(inputs, results));
  promiseAlignedRows(func, spec, {0, 1, 2});
  mlir::Block *body = func.addEntryBlock();
  b.setInsertionPointToEnd(body);
  if (spec.packed) {
    mlir::Value initial =
        flags.initialState ? body->getArgument(6) : mlir::Value();
    auto kda = b.create<mlir::rudnn::KdaVarlenOp>(
        loc, v, state, body->getArgument(0), body->getArgument(1),
        body->getArgument(2), body->getArgument(3), body->getArgument(4),
        body->getArgument(5), initial,
        spec.chunk ? b.getI64IntegerAttr(spec.chunk) : mlir::IntegerAttr(),
        b.getF32FloatAttr(flags.scale), groupedHeads(b, flags.groupedHeads));
    llvm::SmallVector<mlir::Value> returned = {kda.getOutput()};
    if (flags.finalState)
      returned.push_back(kda.getFinalState());
    b.create<mlir::func::ReturnOp>(loc, returned);
    return module;
  }
  mlir::Value initial = flags.initialState ? body->getArgument(5) : nullptr;
  auto kda = b.create<mlir::rudnn::KdaOp>(
      loc, body->getArgument(0), body->getArgument(1), body->getArgument(2),
      body->getArgument(3), body->getArgument(4), initial, flags.saveBoundaries,
      flags.saveTiles ? spec.chunk : 0);
  if (spec.chunk) // else rudnn-specialize chooses it for the target
    kda.setChunkAttr(b.getI64IntegerAttr(spec.chunk));
  kda.setScaleAttr(b.getF32FloatAttr(flags.scale));
  kda.setGroupedHeadsAttr(groupedHeads(b, flags.groupedHeads));
  llvm::SmallVector<mlir::Value> returned = {kda.getOutput()};
  if (flags.finalState)
    returned.push_back(kda.getFinalState());
  if (flags.saveBoundaries)
    returned.push_back(kda.getBoundaries());
  if (flags.saveTiles)
    returned.push_back(kda.getTiles());
  b.create<mlir::func::ReturnOp>(loc, returned);
  return module;
}

/// The backward call as rudnn IR: @kda_backward taking q k v g beta
/// [initial_state] [boundaries [tiles]] d_output [d_final_state] with dynamic
/// B, T, H
/// and returning dq, dk, dv, dg, dbeta, [d_initial_state].
mlir::OwningOpRef<mlir::ModuleOp>
backwardModule(mlir::MLIRContext &mlir, const KdaKernelSpec &spec,
               const KdaBackwardFlags &flags) {
  mlir::OpBuilder b(&mlir);
  mlir::Location loc = b.getUnknownLoc();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  const CallTypes t(b, spec);
  mlir::Type q = t.q, v = t.v, beta = t.beta, state = t.state;
  llvm::SmallVector<mlir::Type> inputs = {q, q, v, t.g, beta};
  if (spec.packed)
    inputs.push_back(t.offsets);
  if (flags.initialState)
    inputs.push_back(state);
  if (flags.savedBoundaries)
    inputs.push_back(t.boundaries);
  if (flags.savedTiles)
    inputs.push_back(t.tiles);
  const unsigned dOutputIndex = inputs.size();
  inputs.push_back(v);
  if (flags.dFinalState)
    inputs.push_back(state);
  // The op yields d_initial_state exactly when there is an initial state;
  // the function returns it only when the caller wants it.
  llvm::SmallVector<mlir::Type> results = {q, q, v, t.keyGradient, beta};
  if (flags.initialState)
    results.push_back(state);
  llvm::ArrayRef<mlir::Type> returned(results);
  if (flags.initialState && !flags.dInitialState)
    returned = returned.drop_back();

  b.setInsertionPointToEnd(module->getBody());
  auto func = b.create<mlir::func::FuncOp>(
      loc, "kda_backward_" + codegen::kdaSpecName(spec),
      b.getFunctionType(inputs, returned));
  promiseAlignedRows(func, spec, {0, 1, 2, dOutputIndex});
  mlir::Block *body = func.addEntryBlock();
  b.setInsertionPointToEnd(body);
  const unsigned first = spec.packed ? 6 : 5; // after the offsets
  mlir::Value initial =
      flags.initialState ? body->getArgument(first) : mlir::Value();
  const unsigned savedIndex = dOutputIndex - flags.savedTiles;
  mlir::Value saved =
      flags.savedBoundaries ? body->getArgument(savedIndex - 1) : nullptr;
  mlir::Value savedTiles =
      flags.savedTiles ? body->getArgument(savedIndex) : nullptr;
  mlir::Value dFinal =
      flags.dFinalState ? body->getArgument(dOutputIndex + 1) : nullptr;
  mlir::IntegerAttr chunk =
      spec.chunk ? b.getI64IntegerAttr(spec.chunk) : mlir::IntegerAttr();
  if (spec.packed) {
    auto backward = b.create<mlir::rudnn::KdaVarlenBackwardOp>(
        loc, mlir::TypeRange(results), body->getArgument(0),
        body->getArgument(1), body->getArgument(2), body->getArgument(3),
        body->getArgument(4), body->getArgument(5), initial,
        body->getArgument(dOutputIndex), dFinal, chunk,
        b.getF32FloatAttr(flags.scale), groupedHeads(b, flags.groupedHeads));
    b.create<mlir::func::ReturnOp>(
        loc, backward.getResults().take_front(returned.size()));
    return module;
  }
  auto backward = b.create<mlir::rudnn::KdaBackwardOp>(
      loc, mlir::TypeRange(results), body->getArgument(0), body->getArgument(1),
      body->getArgument(2), body->getArgument(3), body->getArgument(4), initial,
      saved, savedTiles, body->getArgument(dOutputIndex), dFinal,
      spec.chunk ? b.getI64IntegerAttr(spec.chunk) : mlir::IntegerAttr(),
      b.getF32FloatAttr(flags.scale), groupedHeads(b, flags.groupedHeads));
  // An unwanted d_initial_state is not returned: the plan passes a null
  // pointer for it.
  b.create<mlir::func::ReturnOp>(
      loc, backward.getResults().take_front(returned.size()));
  return module;
}

} // namespace

Function rudnn::kdaForwardFunction(Context &context, const KdaKernelSpec &spec,
                                   const KdaPlanFlags &flags) {
  return cachedFunction(context, kdaForwardSignature(spec, flags),
                        [&](mlir::MLIRContext &mlir) {
                          return forwardModule(mlir, spec, flags);
                        });
}

Function rudnn::kdaBackwardFunction(Context &context, const KdaKernelSpec &spec,
                                    const KdaBackwardFlags &flags) {
  return cachedFunction(context, kdaBackwardSignature(spec, flags),
                        [&](mlir::MLIRContext &mlir) {
                          return backwardModule(mlir, spec, flags);
                        });
}
