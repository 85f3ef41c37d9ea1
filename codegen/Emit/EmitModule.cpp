//===- EmitModule.cpp - The CUDA kernels of decomposed rudnn IR -----------===//

#include "codegen/Emit/EmitModule.h"
#include "dialects/IR/ElementTypes.h"
#include "dialects/IR/RudnnOps.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace mlir::rudnn;
using namespace ::rudnn::codegen;

namespace {

FailureOr<DType> scalarOfType(Operation *op, Type type, StringRef name) {
  std::optional<DType> dtype = dtypeOf(type);
  if (dtype &&
      (*dtype == DType::F32 || *dtype == DType::F16 || *dtype == DType::BF16))
    return *dtype;
  return op->emitError() << "cannot emit '" << name << "' of type " << type;
}

FailureOr<DType> scalarOf(Operation *op, Value value, StringRef name) {
  return scalarOfType(op, cast<ShapedType>(value.getType()).getElementType(),
                      name);
}

int64_t lastDim(Value value) {
  return cast<ShapedType>(value.getType()).getShape().back();
}

/// The op of type OpT defining `value`, with an error naming `what` if none.
template <typename OpT>
FailureOr<OpT> definedBy(Operation *user, Value value, StringRef what) {
  if (auto op = value.getDefiningOp<OpT>())
    return op;
  return user->emitError() << "cannot emit: '" << what
                           << "' does not come from "
                           << OpT::getOperationName();
}

/// The dtypes of a chain, found from its decay and pairwise ops.
FailureOr<KdaKernelSpec> chainSpec(Operation *op, Value q, Value gamma,
                                   Value beta, int64_t featureV,
                                   uint64_t chunk) {
  FailureOr<ChunkDecayOp> decay = definedBy<ChunkDecayOp>(op, gamma, "gamma");
  if (failed(decay))
    return failure();
  FailureOr<DType> input = scalarOf(op, q, "q"),
                   gate = scalarOf(op, decay->getG(), "g"),
                   betaType = scalarOf(op, beta, "beta");
  if (failed(input) || failed(gate) || failed(betaType))
    return failure();
  return KdaKernelSpec{*input,     *gate,    *betaType,
                       lastDim(q), featureV, static_cast<int64_t>(chunk)};
}

FailureOr<std::pair<KdaKernelSpec, KdaStage>> kernelOf(Operation *op) {
  using Result = FailureOr<std::pair<KdaKernelSpec, KdaStage>>;
  auto with = [](FailureOr<KdaKernelSpec> spec, KdaStage stage) -> Result {
    if (failed(spec))
      return failure();
    return std::make_pair(*spec, stage);
  };
  return llvm::TypeSwitch<Operation *, Result>(op)
      .Case([&](ChunkSolveOp solve) {
        return with(chainSpec(op, solve.getK(), solve.getGamma(),
                              solve.getBeta(), lastDim(solve.getV()),
                              solve.getChunk()),
                    KdaStage::Prepare);
      })
      .Case([&](ChunkPropagateOp propagate) -> Result {
        FailureOr<ChunkSolveOp> solve =
            definedBy<ChunkSolveOp>(op, propagate.getW(), "w");
        if (failed(solve))
          return failure();
        return with(chainSpec(op, propagate.getK(), propagate.getGamma(),
                              solve->getBeta(), lastDim(propagate.getU0()),
                              propagate.getChunk()),
                    KdaStage::Propagate);
      })
      .Case([&](ChunkOutputOp output) -> Result {
        FailureOr<ChunkPairwiseOp> pairwise =
            definedBy<ChunkPairwiseOp>(op, output.getPairwise(), "pairwise");
        if (failed(pairwise))
          return failure();
        return with(chainSpec(op, output.getQ(), output.getGamma(),
                              pairwise->getBeta(), lastDim(output.getU()),
                              output.getChunk()),
                    KdaStage::Output);
      })
      .Case([&](KdaRecurrentOp recurrent) -> Result {
        FailureOr<DType> input = scalarOf(op, recurrent.getQ(), "q"),
                         gate = scalarOf(op, recurrent.getG(), "g"),
                         beta = scalarOf(op, recurrent.getBeta(), "beta");
        if (failed(input) || failed(gate) || failed(beta))
          return failure();
        return std::make_pair(
            KdaKernelSpec{*input, *gate, *beta, lastDim(recurrent.getQ()),
                          lastDim(recurrent.getV()),
                          static_cast<int64_t>(recurrent.getChunk())},
            KdaStage::Recurrent);
      })
      .Case([&](KernelOp kernel) -> Result {
        // A planned kernel carries its specialization.
        FailureOr<DType> input = scalarOfType(op, kernel.getInput(), "input"),
                         gate = scalarOfType(op, kernel.getGate(), "gate"),
                         beta = scalarOfType(op, kernel.getBeta(), "beta");
        if (failed(input) || failed(gate) || failed(beta))
          return failure();
        std::optional<KdaStage> stage = stageNamed(kernel.getStage().str());
        if (!stage)
          return failure();
        return std::make_pair(
            KdaKernelSpec{*input, *gate, *beta, (int64_t)kernel.getK(),
                          (int64_t)kernel.getV(), (int64_t)kernel.getChunk()},
            *stage);
      })
      .Default([](Operation *) -> Result { return failure(); });
}

} // namespace

namespace rudnn::codegen {

FailureOr<KdaKernelSpec> kdaSpecOf(Operation *primitive) {
  auto kernel = kernelOf(primitive);
  if (failed(kernel))
    return failure();
  return kernel->first;
}

FailureOr<std::vector<EmittedKernel>> emitKernels(ModuleOp module) {
  std::vector<EmittedKernel> kernels;
  llvm::StringSet<> seen;
  bool ok = true;
  module.walk([&](Operation *op) {
    if (isa<KdaOp, KdaBackwardOp>(op)) {
      op->emitError() << "cannot emit an operator op: run rudnn-specialize "
                         "and rudnn-decompose first";
      ok = false;
      return;
    }
    if (!isa<ChunkSolveOp, ChunkPropagateOp, ChunkOutputOp, KdaRecurrentOp,
             KernelOp>(op))
      return;
    auto kernel = kernelOf(op);
    if (failed(kernel)) {
      ok = false;
      return;
    }
    EmittedKernel emitted = emitKdaKernel(kernel->first, kernel->second);
    if (seen.insert(emitted.entry).second)
      kernels.push_back(std::move(emitted));
  });
  if (!ok)
    return failure();
  return kernels;
}

} // namespace rudnn::codegen
