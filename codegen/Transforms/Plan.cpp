//===- Plan.cpp - Primitives to kernels, buffers and launches -------------===//

#include "codegen/Emit/EmitModule.h"
#include "codegen/Transforms/Passes.h"
#include "dialects/IR/RudnnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"

namespace mlir::rudnn {
#define GEN_PASS_DEF_RUDNNPLAN
#include "codegen/Transforms/Passes.h.inc"
} // namespace mlir::rudnn

using namespace mlir;
using namespace mlir::rudnn;
namespace codegen = ::rudnn::codegen;

namespace {

/// The tensors of one KDA forward, whichever form it was decomposed into.
struct KdaCall {
  Value q, k, v, g, beta, initialState, output, finalState, boundaries;
  Operation *anchor = nullptr; // the op whose kernel spec describes the call
  bool chunked = false;
  int64_t chunk = 0;
  float scale = 0;
};

FailureOr<KdaCall> findCall(func::FuncOp func) {
  SmallVector<Operation *> calls;
  func.walk([&](Operation *op) {
    if (isa<ChunkOutputOp, KdaRecurrentOp, KdaOp>(op))
      calls.push_back(op);
  });
  if (calls.empty())
    return KdaCall{};
  if (calls.size() > 1)
    return func.emitError()
           << "rudnn-plan handles one KDA forward per function, found "
           << calls.size();
  if (isa<KdaOp>(calls[0]))
    return calls[0]->emitOpError() << "must be decomposed first: run "
                                      "rudnn-decompose before rudnn-plan";
  KdaCall call;
  if (auto recurrent = dyn_cast<KdaRecurrentOp>(calls[0])) {
    call = {recurrent.getQ(),
            recurrent.getK(),
            recurrent.getV(),
            recurrent.getG(),
            recurrent.getBeta(),
            recurrent.getInitialState(),
            recurrent.getOutput(),
            recurrent.getFinalState(),
            recurrent.getBoundaries(),
            recurrent,
            false,
            (int64_t)recurrent.getChunk(),
            (float)recurrent.getScaleAttr().getValueAsDouble()};
    return call;
  }
  auto output = cast<ChunkOutputOp>(calls[0]);
  auto propagate = output.getU().getDefiningOp<ChunkPropagateOp>();
  auto solve = propagate ? propagate.getW().getDefiningOp<ChunkSolveOp>()
                         : ChunkSolveOp();
  auto decay = output.getGamma().getDefiningOp<ChunkDecayOp>();
  auto pairwise = output.getPairwise().getDefiningOp<ChunkPairwiseOp>();
  if (!propagate || !solve || !decay || !pairwise ||
      solve.getStrict().getDefiningOp() != pairwise.getOperation() ||
      propagate.getGamma() != output.getGamma() ||
      solve.getGamma() != output.getGamma() ||
      pairwise.getGamma() != output.getGamma())
    return output.emitOpError()
           << "is not part of a whole chunked chain (decay, pairwise, solve, "
              "propagate, output)";
  // One call: every primitive reads the same q, k and beta.
  if (pairwise.getQ() != output.getQ() || pairwise.getK() != solve.getK() ||
      propagate.getK() != solve.getK() || pairwise.getBeta() != solve.getBeta())
    return output.emitOpError() << "belongs to a chain whose primitives read "
                                   "different q, k or beta";
  call = {output.getQ(),
          propagate.getK(),
          solve.getV(),
          decay.getG(),
          solve.getBeta(),
          propagate.getInitialState(),
          output.getOutput(),
          propagate.getFinalState(),
          propagate.getBoundaries(),
          solve,
          true,
          (int64_t)output.getChunk(),
          (float)output.getScaleAttr().getValueAsDouble()};
  return call;
}

/// "<tensor>_stride_batch", "<tensor>_stride_time", "<tensor>_stride_head"
/// for each tensor.
SmallVector<std::string> strideNames(ArrayRef<StringRef> tensors) {
  SmallVector<std::string> names;
  for (StringRef tensor : tensors)
    for (StringRef dim : {"batch", "time", "head"})
      names.push_back((tensor + "_stride_" + dim).str());
  return names;
}

/// Creates the plan replacing `func`, over B, T, H, N (read from q's shape,
/// N = ceil(T / chunk)) and then the (batch, time, head) strides of
/// `tensors`, and leaves `builder` at the start of its body.
void beginPlan(OpBuilder &builder, func::FuncOp func,
               ArrayRef<StringRef> tensors, int64_t chunk) {
  MLIRContext *context = builder.getContext();
  SmallVector<Attribute> params, sources;
  auto dim = [&](StringRef name, int64_t index, int64_t divisor) {
    params.push_back(builder.getStringAttr(name));
    sources.push_back(DimSourceAttr::get(context, "q", index, divisor));
  };
  dim("B", 0, 1);
  dim("T", 1, 1);
  dim("H", 2, 1);
  dim("N", 1, chunk);
  for (const std::string &name : strideNames(tensors))
    params.push_back(builder.getStringAttr(name));
  for (StringRef tensor : tensors)
    for (int64_t index : {0, 1, 2})
      sources.push_back(StrideSourceAttr::get(context, tensor, index));
  auto plan = builder.create<PlanOp>(func.getLoc(), func.getSymName(),
                                     builder.getArrayAttr(params),
                                     builder.getArrayAttr(sources));
  builder.setInsertionPointToStart(&plan.getBody().emplaceBlock());
}

/// What `func` returns, seen through casts.
llvm::SmallPtrSet<Value, 4> returnedValues(func::FuncOp func) {
  llvm::SmallPtrSet<Value, 4> returned;
  func.walk([&](func::ReturnOp ret) {
    for (Value value : ret.getOperands()) {
      returned.insert(value);
      while (auto cast = value.getDefiningOp<tensor::CastOp>())
        returned.insert(value = cast.getSource());
    }
  });
  return returned;
}

/// Builds the ops of one plan.
class PlanBuilder {
public:
  PlanBuilder(OpBuilder &builder, Location loc) : b(builder), loc(loc) {}

  SizeAttr size(int64_t constant, ArrayRef<StringRef> params = {},
                int64_t divisor = 1) {
    SmallVector<Attribute> names;
    for (StringRef param : params)
      names.push_back(b.getStringAttr(param));
    return SizeAttr::get(b.getContext(), constant, b.getArrayAttr(names),
                         divisor);
  }

  Attribute buffer(StringRef name, StringRef access, SizeAttr bytes = {},
                   SizeAttr offset = {}, StringRef aliases = {}) {
    b.create<BufferOp>(loc, name, access,
                       aliases.empty()
                           ? FlatSymbolRefAttr()
                           : FlatSymbolRefAttr::get(b.getContext(), aliases),
                       bytes, offset);
    return FlatSymbolRefAttr::get(b.getContext(), name);
  }

  Attribute null() { return b.getI64IntegerAttr(0); }
  Attribute param(StringRef name, int64_t bits) {
    return ParamAttr::get(b.getContext(), name, bits);
  }

private:
  OpBuilder &b;
  Location loc;
};

Type elementType(Value value) {
  return cast<ShapedType>(value.getType()).getElementType();
}

LogicalResult planFunction(func::FuncOp func) {
  FailureOr<KdaCall> found = findCall(func);
  if (failed(found))
    return failure();
  KdaCall call = *found;
  if (!call.anchor)
    return success(); // nothing to plan
  for (Value input :
       {call.q, call.k, call.v, call.g, call.beta, call.initialState})
    if (input && !isa<BlockArgument>(input))
      return func.emitError() << "plan inputs must be function arguments";
  FailureOr<codegen::KdaKernelSpec> spec = codegen::kdaSpecOf(call.anchor);
  if (failed(spec))
    return failure();

  const llvm::SmallPtrSet<Value, 4> returned = returnedValues(func);
  const int64_t length = cast<ShapedType>(call.q.getType()).getDimSize(1);
  const bool dynamicLength = ShapedType::isDynamic(length);

  OpBuilder builder(func);
  Location loc = func.getLoc();
  const SmallVector<StringRef> strided = {"q", "k", "v", "g", "beta", "output"};
  const SmallVector<std::string> strides = strideNames(strided);
  beginPlan(builder, func, strided, spec->chunk);
  PlanBuilder pb(builder, loc);

  // Buffers, in the kernels' argument order.
  Attribute q = pb.buffer("q", "in"), k = pb.buffer("k", "in"),
            v = pb.buffer("v", "in"), g = pb.buffer("g", "in"),
            beta = pb.buffer("beta", "in");
  Attribute initial =
      call.initialState ? pb.buffer("initial_state", "in") : pb.null();
  Attribute output = pb.buffer("output", "out");
  // The state kernels read each block of the initial state before they
  // write that block of the final state.
  Attribute finalState =
      returned.contains(call.finalState)
          ? pb.buffer("final_state", "out", {}, {},
                      call.initialState ? "initial_state" : "")
          : pb.null();
  const int64_t tileBytes = 4 * codegen::kdaTileFloats(*spec);
  SizeAttr tilesSize = pb.size(tileBytes, {"N", "B", "H"});
  Attribute tiles = pb.buffer("tiles", "workspace", tilesSize, pb.size(0));
  Attribute boundaries =
      call.boundaries && returned.contains(call.boundaries)
          ? pb.buffer("boundaries", "out")
          : pb.buffer(
                "boundaries", "workspace",
                pb.size(4 * spec->featureK * spec->featureV, {"N", "B", "H"}),
                tilesSize);

  SmallVector<Attribute> args = {
      q, k, v, g, beta, initial, output, finalState, boundaries, tiles};
  for (const std::string &name : strides)
    args.push_back(pb.param(name, 64));
  for (StringRef dim : {"B", "T", "H"})
    args.push_back(pb.param(dim, 32));
  args.push_back(builder.getF32FloatAttr(call.scale));
  ArrayAttr argList = builder.getArrayAttr(args);

  // Kernels and launches.
  const int64_t columnBlocks =
      (spec->featureV + codegen::kKdaColumnsPerBlock - 1) /
      codegen::kKdaColumnsPerBlock;
  SizeAttr one = pb.size(1), sequences = pb.size(1, {"B", "H"}),
           chunks = pb.size(1, {"N"}), columns = pb.size(columnBlocks);
  auto kernel = [&](codegen::KdaStage stage, ArrayRef<StringRef> fuses,
                    int64_t threads, SizeAttr gridX, SizeAttr gridY,
                    std::optional<std::pair<int64_t, int64_t>> guard) {
    // Kernels are named by their entry, which says what they compute.
    std::string name = codegen::emitKdaKernel(*spec, stage).entry;
    SmallVector<Attribute> fused;
    for (StringRef op : fuses)
      fused.push_back(builder.getStringAttr(op));
    builder.create<KernelOp>(loc, name, codegen::stageName(stage), threads,
                             /*shared_bytes=*/0, builder.getArrayAttr(fused),
                             elementType(call.q), elementType(call.g),
                             elementType(call.beta), spec->featureK,
                             spec->featureV, spec->chunk);
    auto launch = builder.create<LaunchOp>(
        loc, FlatSymbolRefAttr::get(builder.getContext(), name),
        builder.getArrayAttr({gridX, gridY, one}), argList, StringAttr(),
        IntegerAttr(), IntegerAttr(), StringAttr());
    if (guard) {
      launch.setGuardAttr(builder.getStringAttr("T"));
      launch.setGuardMinAttr(builder.getI64IntegerAttr(guard->first));
      launch.setGuardMaxAttr(builder.getI64IntegerAttr(guard->second));
    }
  };
  using codegen::KdaStage;
  const int64_t threads = codegen::kKdaThreads;
  if (!call.chunked || dynamicLength)
    kernel(KdaStage::Recurrent, {"rudnn.kda_recurrent"},
           codegen::kKdaColumnsPerBlock, sequences, columns,
           call.chunked ? std::optional(std::pair<int64_t, int64_t>(1, 1))
                        : std::nullopt);
  if (call.chunked) {
    std::optional<std::pair<int64_t, int64_t>> longer;
    if (dynamicLength)
      longer = std::pair<int64_t, int64_t>(2, INT64_MAX);
    kernel(KdaStage::Prepare,
           {"rudnn.chunk_decay", "rudnn.chunk_pairwise", "rudnn.chunk_solve"},
           threads, chunks, sequences, longer);
    kernel(KdaStage::Propagate, {"rudnn.chunk_propagate"}, threads, sequences,
           columns, longer);
    kernel(KdaStage::Output, {"rudnn.chunk_output"}, threads, chunks, sequences,
           longer);
  }
  func.erase();
  return success();
}

/// A decomposed KDA backward: the forward's prepare and propagate recompute
/// the chunk quantities and states (or, given the saved boundaries, prepare
/// and restore), then state_gradient and gradients.
LogicalResult planBackward(func::FuncOp func, ChunkGradientsOp gradients) {
  auto stateGradient = gradients.getDu().getDefiningOp<ChunkStateGradientOp>();
  auto propagate = gradients.getU().getDefiningOp<ChunkPropagateOp>();
  auto restore = gradients.getU().getDefiningOp<ChunkRestoreOp>();
  auto solve = gradients.getW().getDefiningOp<ChunkSolveOp>();
  auto decay = gradients.getGamma().getDefiningOp<ChunkDecayOp>();
  if (!stateGradient || !(propagate || restore) || !solve || !decay ||
      (propagate && propagate.getBoundaries() != gradients.getBoundaries()))
    return gradients.emitOpError()
           << "is not part of a whole chunked backward chain";
  Value initialState = propagate ? propagate.getInitialState() : Value();
  Value savedBoundaries = restore ? restore.getBoundaries() : Value();
  Value dFinalState = stateGradient.getDFinalState();
  for (Value input : SmallVector<Value>{
           gradients.getQ(), gradients.getK(), gradients.getV(), decay.getG(),
           gradients.getBeta(), gradients.getDOutput(), initialState,
           savedBoundaries, dFinalState})
    if (input && !isa<BlockArgument>(input))
      return func.emitError() << "plan inputs must be function arguments";
  FailureOr<codegen::KdaKernelSpec> spec = codegen::kdaSpecOf(solve);
  if (failed(spec))
    return failure();
  const llvm::SmallPtrSet<Value, 4> returned = returnedValues(func);

  OpBuilder builder(func);
  Location loc = func.getLoc();
  beginPlan(
      builder, func,
      {"q", "k", "v", "g", "beta", "d_output", "dq", "dk", "dv", "dg", "dbeta"},
      spec->chunk);
  PlanBuilder pb(builder, loc);

  Attribute q = pb.buffer("q", "in"), k = pb.buffer("k", "in"),
            v = pb.buffer("v", "in"), g = pb.buffer("g", "in"),
            beta = pb.buffer("beta", "in");
  Attribute initial =
      initialState ? pb.buffer("initial_state", "in") : pb.null();
  Attribute dOutput = pb.buffer("d_output", "in");
  Attribute dFinal = dFinalState ? pb.buffer("d_final_state", "in") : pb.null();
  Attribute dq = pb.buffer("dq", "out"), dk = pb.buffer("dk", "out"),
            dv = pb.buffer("dv", "out"), dg = pb.buffer("dg", "out"),
            dbeta = pb.buffer("dbeta", "out");
  Attribute dInitial = returned.contains(stateGradient.getDInitialState())
                           ? pb.buffer("d_initial_state", "out")
                           : pb.null();
  SizeAttr tilesSize =
      pb.size(4 * codegen::kdaTileFloats(*spec), {"N", "B", "H"});
  SizeAttr boundariesSize =
      pb.size(4 * spec->featureK * spec->featureV, {"N", "B", "H"});
  Attribute tiles = pb.buffer("tiles", "workspace", tilesSize, pb.size(0));
  // Saved boundaries are an argument; recomputed ones follow the tiles.
  Attribute boundaries = savedBoundaries ? pb.buffer("boundaries", "in")
                                         : pb.buffer("boundaries", "workspace",
                                                     boundariesSize, tilesSize);
  SizeAttr scratchOffset = savedBoundaries
                               ? tilesSize
                               : pb.size(4 * (codegen::kdaTileFloats(*spec) +
                                              spec->featureK * spec->featureV),
                                         {"N", "B", "H"});
  Attribute scratch = pb.buffer(
      "scratch", "workspace",
      pb.size(4 * codegen::kdaGradientTileFloats(*spec), {"N", "B", "H"}),
      scratchOffset);

  // The forward's arguments (no output, no final state), then the
  // backward's.
  SmallVector<Attribute> forward = {
      q, k, v, g, beta, initial, pb.null(), pb.null(), boundaries, tiles};
  for (const std::string &name :
       strideNames({"q", "k", "v", "g", "beta", "d_output"}))
    forward.push_back(pb.param(name, 64));
  for (StringRef dim : {"B", "T", "H"})
    forward.push_back(pb.param(dim, 32));
  forward.push_back(
      builder.getF32FloatAttr(gradients.getScaleAttr().getValueAsDouble()));
  SmallVector<Attribute> backward = forward;
  llvm::append_range(backward,
                     SmallVector<Attribute>{dOutput, dFinal, dq, dk, dv, dg,
                                            dbeta, dInitial, scratch});
  for (const std::string &name :
       strideNames({"d_output", "dq", "dk", "dv", "dg", "dbeta"}))
    backward.push_back(pb.param(name, 64));

  const int64_t columnBlocks =
      (spec->featureV + codegen::kKdaColumnsPerBlock - 1) /
      codegen::kKdaColumnsPerBlock;
  SizeAttr one = pb.size(1), sequences = pb.size(1, {"B", "H"}),
           chunks = pb.size(1, {"N"}), columns = pb.size(columnBlocks);
  using codegen::KdaStage;
  struct Stage {
    KdaStage stage;
    ArrayRef<StringRef> fuses;
    SizeAttr x, y;
    ArrayRef<Attribute> args;
  };
  StringRef prepareOps[] = {"rudnn.chunk_decay", "rudnn.chunk_pairwise",
                            "rudnn.chunk_solve"};
  StringRef propagateOps[] = {"rudnn.chunk_propagate"};
  StringRef restoreOps[] = {"rudnn.chunk_restore"};
  StringRef stateOps[] = {"rudnn.chunk_state_gradient"};
  StringRef gradientOps[] = {"rudnn.chunk_gradients"};
  const Stage updates = restore ? Stage{KdaStage::Restore, restoreOps, chunks,
                                        sequences, backward}
                                : Stage{KdaStage::Propagate, propagateOps,
                                        sequences, columns, forward};
  for (const Stage &stage :
       {Stage{KdaStage::Prepare, prepareOps, chunks, sequences, forward},
        updates,
        Stage{KdaStage::StateGradient, stateOps, sequences, columns, backward},
        Stage{KdaStage::Gradients, gradientOps, chunks, sequences, backward}}) {
    std::string name = codegen::emitKdaKernel(*spec, stage.stage).entry;
    SmallVector<Attribute> fused;
    for (StringRef op : stage.fuses)
      fused.push_back(builder.getStringAttr(op));
    builder.create<KernelOp>(
        loc, name, codegen::stageName(stage.stage), codegen::kKdaThreads,
        /*shared_bytes=*/0, builder.getArrayAttr(fused),
        elementType(gradients.getQ()), elementType(decay.getG()),
        elementType(gradients.getBeta()), spec->featureK, spec->featureV,
        spec->chunk);
    builder.create<LaunchOp>(loc,
                             FlatSymbolRefAttr::get(builder.getContext(), name),
                             builder.getArrayAttr({stage.x, stage.y, one}),
                             builder.getArrayAttr(stage.args), StringAttr(),
                             IntegerAttr(), IntegerAttr(), StringAttr());
  }
  func.erase();
  return success();
}

struct PlanPass : public mlir::rudnn::impl::RudnnPlanBase<PlanPass> {
  void runOnOperation() override {
    SmallVector<func::FuncOp> funcs(getOperation().getOps<func::FuncOp>());
    for (func::FuncOp func : funcs) {
      SmallVector<ChunkGradientsOp> backward(func.getOps<ChunkGradientsOp>());
      LogicalResult result = backward.size() == 1
                                 ? planBackward(func, backward.front())
                                 : planFunction(func);
      if (failed(result))
        return signalPassFailure();
    }
  }
};

} // namespace
