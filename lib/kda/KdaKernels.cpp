//===- KdaKernels.cpp - The KDA forward plan and its kernels --------------===//

#include "lib/kda/KdaKernels.h"
#include "lib/OperatorFunctions.h"

#include "codegen/InitRudnn.h"
#include "codegen/Transforms/Passes.h"
#include "dialects/IR/KdaPolicy.h"
#include "dialects/IR/RudnnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/PassManager.h"

#include <sstream>

using namespace rudnn;
using namespace rudnn::runtime;

rudnn::KdaTransformAttrs::KdaTransformAttrs(mlir::Builder &b,
                                            const KdaInputTransforms &t)
    : qkL2Norm(t.qkL2Norm ? b.getUnitAttr() : mlir::UnitAttr()),
      betaLogits(t.betaLogits ? b.getUnitAttr() : mlir::UnitAttr()),
      lowerBound(t.gate && t.lowerBound < 0 ? b.getF32FloatAttr(t.lowerBound)
                                            : mlir::FloatAttr()) {}

void rudnn::addGateParameters(llvm::SmallVector<mlir::Type> &types,
                              mlir::Builder &b, int64_t featureK,
                              const KdaInputTransforms &t) {
  const int64_t dyn = mlir::ShapedType::kDynamic;
  if (t.gate)
    types.push_back(mlir::RankedTensorType::get({dyn}, b.getF32Type()));
  if (t.gateBias)
    types.push_back(
        mlir::RankedTensorType::get({dyn, featureK}, b.getF32Type()));
}

std::string rudnn::kdaTransformsKey(const KdaInputTransforms &t) {
  std::ostringstream key;
  key << ":l2=" << t.qkL2Norm << ":logits=" << t.betaLogits
      << ":gate=" << t.gate << t.gateBias << ":bound=" << std::hexfloat
      << t.lowerBound;
  return key.str();
}

std::string rudnn::kdaBackwardSignature(const KdaKernelSpec &spec,
                                        const KdaBackwardFlags &flags) {
  std::ostringstream key;
  key << "kda_backward:" << codegen::kdaSpecName(spec)
      << ":s0=" << flags.initialState << ":dsT=" << flags.dFinalState
      << ":bounds=" << flags.savedBoundaries << ":tiles=" << flags.savedTiles
      << ":ds0=" << flags.dInitialState << ":gva=" << flags.groupedHeads
      << kdaTransformsKey(flags.transforms) << ":scale=" << std::hexfloat
      << flags.scale;
  return key.str();
}

std::string rudnn::kdaForwardSignature(const KdaKernelSpec &spec,
                                       const KdaPlanFlags &flags) {
  std::ostringstream key;
  key << "kda_forward:" << codegen::kdaSpecName(spec)
      << ":s0=" << flags.initialState << ":sT=" << flags.finalState
      << ":bounds=" << flags.saveBoundaries << ":tiles=" << flags.saveTiles
      << ":gva=" << flags.groupedHeads << kdaTransformsKey(flags.transforms)
      << ":scale=" << std::hexfloat << flags.scale;
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

/// A forward's attributes: its transforms' and what it saves.
struct ForwardAttrs : KdaTransformAttrs {
  mlir::UnitAttr saveBoundaries, saveTiles;

  ForwardAttrs(mlir::Builder &b, const KdaPlanFlags &flags)
      : KdaTransformAttrs(b, flags.transforms),
        saveBoundaries(flags.saveBoundaries ? b.getUnitAttr()
                                            : mlir::UnitAttr()),
        saveTiles(flags.saveTiles ? b.getUnitAttr() : mlir::UnitAttr()) {}
};

/// The operator call as rudnn IR: @kda taking q k v g beta [cu_seqlens]
/// [initial_state] [a_log [dt_bias]] with dynamic B, T, H and returning
/// output, [final_state], [boundaries], [tiles].
mlir::OwningOpRef<mlir::ModuleOp> forwardModule(mlir::MLIRContext &mlir,
                                                const KdaKernelSpec &spec,
                                                const KdaPlanFlags &flags) {
  mlir::OpBuilder b(&mlir);
  mlir::Location loc = b.getUnknownLoc();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  const CallTypes t(b, spec);
  mlir::Type q = t.q, v = t.v, state = t.state;
  llvm::SmallVector<mlir::Type> inputs = {q, q, v, t.g, t.beta};
  if (spec.packed)
    inputs.push_back(t.offsets);
  if (flags.initialState)
    inputs.push_back(state);
  addGateParameters(inputs, b, spec.featureK, flags.transforms);
  llvm::SmallVector<mlir::Type> saved;
  if (flags.saveBoundaries)
    saved.push_back(t.boundaries);
  if (flags.saveTiles)
    saved.push_back(t.tiles);

  b.setInsertionPointToEnd(module->getBody());
  llvm::SmallVector<mlir::Type> results = {v};
  if (flags.finalState)
    results.push_back(state);
  results.append(saved.begin(), saved.end());
  auto func = b.create<mlir::func::FuncOp>(
      loc, "kda_forward_" + codegen::kdaSpecName(spec),
      b.getFunctionType(inputs, results));
  promiseAlignedRows(func, spec, {0, 1, 2});
  mlir::Block *body = func.addEntryBlock();
  b.setInsertionPointToEnd(body);
  unsigned next = 5;
  auto optional = [&](bool present) {
    return present ? body->getArgument(next++) : mlir::Value();
  };
  mlir::Value offsets = optional(spec.packed);
  mlir::Value initial = optional(flags.initialState);
  mlir::Value aLog = optional(flags.transforms.gate);
  mlir::Value dtBias = optional(flags.transforms.gateBias);
  mlir::IntegerAttr chunk =
      spec.chunk ? b.getI64IntegerAttr(spec.chunk) : mlir::IntegerAttr();
  const ForwardAttrs attrs(b, flags);
  mlir::Operation *op;
  if (spec.packed)
    op = b.create<mlir::rudnn::KdaVarlenOp>(
        loc, v, state, saved, body->getArgument(0), body->getArgument(1),
        body->getArgument(2), body->getArgument(3), body->getArgument(4),
        offsets, initial, aLog, dtBias, chunk, b.getF32FloatAttr(flags.scale),
        attrs.saveBoundaries, attrs.saveTiles,
        groupedHeads(b, flags.groupedHeads), attrs.qkL2Norm, attrs.betaLogits,
        attrs.lowerBound);
  else
    op = b.create<mlir::rudnn::KdaOp>(
        loc, v, state, saved, body->getArgument(0), body->getArgument(1),
        body->getArgument(2), body->getArgument(3), body->getArgument(4),
        initial, aLog, dtBias, chunk, b.getF32FloatAttr(flags.scale),
        attrs.saveBoundaries, attrs.saveTiles,
        groupedHeads(b, flags.groupedHeads), attrs.qkL2Norm, attrs.betaLogits,
        attrs.lowerBound);
  llvm::SmallVector<mlir::Value> returned = {op->getResult(0)};
  if (flags.finalState)
    returned.push_back(op->getResult(1));
  for (unsigned i = 2; i < op->getNumResults(); ++i)
    returned.push_back(op->getResult(i));
  b.create<mlir::func::ReturnOp>(loc, returned);
  return module;
}

/// The backward call as rudnn IR: @kda_backward taking q k v g beta
/// [cu_seqlens] [initial_state] [boundaries [tiles]] d_output
/// [d_final_state] [a_log [dt_bias]] with dynamic B, T, H and returning dq,
/// dk, dv, dg, dbeta, [d_initial_state], [d_a_log [d_dt_bias]].
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
  addGateParameters(inputs, b, spec.featureK, flags.transforms);
  // The op yields d_initial_state exactly when there is an initial state,
  // and the parameters' gradients exactly when they are given; the
  // function returns d_initial_state only when the caller wants it.
  llvm::SmallVector<mlir::Type> results = {q, q, v, t.keyGradient, beta};
  llvm::SmallVector<mlir::Type> parameters;
  addGateParameters(parameters, b, spec.featureK, flags.transforms);
  llvm::SmallVector<mlir::Type> returned = results;
  if (flags.initialState && flags.dInitialState)
    returned.push_back(state);
  returned.append(parameters.begin(), parameters.end());

  b.setInsertionPointToEnd(module->getBody());
  auto func = b.create<mlir::func::FuncOp>(
      loc, "kda_backward_" + codegen::kdaSpecName(spec),
      b.getFunctionType(inputs, returned));
  promiseAlignedRows(func, spec, {0, 1, 2, dOutputIndex});
  mlir::Block *body = func.addEntryBlock();
  b.setInsertionPointToEnd(body);
  unsigned next = 5;
  auto optional = [&](bool present) {
    return present ? body->getArgument(next++) : mlir::Value();
  };
  mlir::Value offsets = optional(spec.packed);
  mlir::Value initial = optional(flags.initialState);
  mlir::Value saved = optional(flags.savedBoundaries);
  mlir::Value savedTiles = optional(flags.savedTiles);
  mlir::Value dOutput = optional(true);
  mlir::Value dFinal = optional(flags.dFinalState);
  mlir::Value aLog = optional(flags.transforms.gate);
  mlir::Value dtBias = optional(flags.transforms.gateBias);
  mlir::IntegerAttr chunk =
      spec.chunk ? b.getI64IntegerAttr(spec.chunk) : mlir::IntegerAttr();
  const KdaTransformAttrs attrs(b, flags.transforms);
  // d_initial_state, d_a_log, d_dt_bias: each exactly with its input.
  llvm::SmallVector<mlir::Type> optionalGradients;
  if (flags.initialState)
    optionalGradients.push_back(state);
  optionalGradients.append(parameters.begin(), parameters.end());
  mlir::Operation *op;
  if (spec.packed)
    op = b.create<mlir::rudnn::KdaVarlenBackwardOp>(
        loc, q, q, v, t.keyGradient, beta, optionalGradients,
        body->getArgument(0), body->getArgument(1), body->getArgument(2),
        body->getArgument(3), body->getArgument(4), offsets, initial, saved,
        savedTiles, dOutput, dFinal, aLog, dtBias, chunk,
        b.getF32FloatAttr(flags.scale), groupedHeads(b, flags.groupedHeads),
        attrs.qkL2Norm, attrs.betaLogits, attrs.lowerBound);
  else
    op = b.create<mlir::rudnn::KdaBackwardOp>(
        loc, q, q, v, t.keyGradient, beta, optionalGradients,
        body->getArgument(0), body->getArgument(1), body->getArgument(2),
        body->getArgument(3), body->getArgument(4), initial, saved, savedTiles,
        dOutput, dFinal, aLog, dtBias, chunk, b.getF32FloatAttr(flags.scale),
        groupedHeads(b, flags.groupedHeads), attrs.qkL2Norm, attrs.betaLogits,
        attrs.lowerBound);
  // An unwanted d_initial_state is not returned: the plan passes a null
  // pointer for it.
  llvm::SmallVector<mlir::Value> values(op->getResults().take_front(5));
  unsigned result = 5;
  if (flags.initialState) {
    if (flags.dInitialState)
      values.push_back(op->getResult(result));
    ++result;
  }
  for (; result < op->getNumResults(); ++result)
    values.push_back(op->getResult(result));
  b.create<mlir::func::ReturnOp>(loc, values);
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
