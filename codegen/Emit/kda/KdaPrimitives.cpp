//===- KdaPrimitives.cpp - The KDA primitives as kernels ------------------===//
//
// The primitive interface of the chunked-recurrence ops, attached to them
// where the code generator lives: their kernel groups (decay, pairwise,
// solve and restore share the chunk-parallel `prepare` block; the walks and
// the output are kernels of their own), where their tiles live between
// kernels (one ChunkTiles layout per chunk, one GradientTiles scratch), and
// the kernel each group's last primitive emits through KdaEmitter.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emit/kda/KdaPrimitives.h"
#include "codegen/Emit/KernelEmitInterface.h"
#include "codegen/Emit/Primitives.h"
#include "codegen/Emit/kda/KdaEmitter.h"
#include "dialects/IR/ElementTypes.h"
#include "dialects/IR/RudnnOps.h"

using namespace mlir;
using namespace mlir::rudnn;
using ::rudnn::DType;
using namespace ::rudnn::codegen;

namespace {

/// A spec whose gate and beta types are the input type where the stage's
/// kernel does not read them (one kernel then serves every such pair);
/// packed where the primitive takes `cu_seqlens`.
KdaKernelSpec specOf(Value input, int64_t featureV, uint64_t chunk,
                     Value cuSeqlens, Value gate = {}, Value beta = {}) {
  const DType in = dtype(input);
  KdaKernelSpec spec{in,
                     gate ? dtype(gate) : in,
                     beta ? dtype(beta) : in,
                     lastDim(input),
                     featureV,
                     static_cast<int64_t>(chunk)};
  spec.packed = static_cast<bool>(cuSeqlens);
  return spec;
}

/// Sizes per (chunk slot, batch, head): N·B·H × `bytes`, N = ceil(T / C);
/// for packed sequences ceil(T / C) + S + 1 slots, each sequence's last
/// chunk partial (kda::chunk_slots).
SizeRef perChunk(int64_t bytes, int64_t chunk, Value cuSeqlens) {
  return {bytes,
          {::rudnn::codegen::kdaChunkSlots(chunk, static_cast<bool>(cuSeqlens)),
           DimRef::of('B'), DimRef::of('H')}};
}

/// A state per sequence, [B, H, K, V] fp32 (one a packed sequence and one
/// besides: [S + 1, H, K, V]); the kernels skip states not asked for.
ResultStorage states(int64_t elements, Value cuSeqlens, std::string name) {
  return ResultStorage::own(
             {4 * elements,
              {DimRef::of(cuSeqlens ? 'C' : 'B'), DimRef::of('H')}},
             std::move(name))
      .orNull();
}

/// A dense sequence tensor [B, T, H, *] of `result`'s type, named `name`.
ResultStorage sequence(Value result, std::string name) {
  auto type = cast<ShapedType>(result.getType());
  const int64_t width = type.getRank() == 4 ? type.getShape().back() : 1;
  return ResultStorage::own(
      {elementBytes(result) * width,
       {DimRef::of('B'), DimRef::of('T'), DimRef::of('H')}},
      std::move(name));
}

int64_t tileBytes(const KdaKernelSpec &spec) {
  return 4 * ::rudnn::codegen::kdaTileFloats(spec);
}

/// Emits `stages` binding `tensors`, with the op's aligned views.
LogicalResult emitStages(Operation *op, KernelBuilder &builder,
                         KdaKernelSpec spec,
                         std::initializer_list<KdaStage> stages,
                         ArrayRef<KdaTensor> tensors, FloatAttr scale = {}) {
  spec.alignedViews = op->hasAttr(RudnnDialect::kAlignedViewsAttrName);
  ::rudnn::codegen::emitKdaStages(builder, spec, stages, tensors,
                                  scale ? scale.getValueAsDouble() : 0);
  if (!builder.conflict().empty())
    return op->emitOpError()
           << "cannot emit its kernel: " << builder.conflict();
  return success();
}

/// The decay and pairwise ops a chunk_solve reads, which its kernel holds.
FailureOr<std::pair<ChunkDecayOp, ChunkPairwiseOp>>
prepareOf(ChunkSolveOp solve) {
  auto decay = solve.getGamma().getDefiningOp<ChunkDecayOp>();
  auto pairwise = solve.getStrict().getDefiningOp<ChunkPairwiseOp>();
  if (!decay || !pairwise)
    return solve.emitOpError() << "cannot emit its kernel: the chunk_decay "
                                  "and chunk_pairwise it reads must be in it";
  return std::make_pair(decay, pairwise);
}

/// The tensors of a prepare block (a restore adds its boundaries).
SmallVector<KdaTensor> prepareTensors(ChunkSolveOp solve, ChunkDecayOp decay,
                                      ChunkPairwiseOp pairwise) {
  return {{"q", pairwise.getQ()},
          {"k", solve.getK()},
          {"v", solve.getV()},
          {"g", decay.getG()},
          {"beta", solve.getBeta()},
          {"workspace", solve.getGamma()},
          {"cu_seqlens", solve.getCuSeqlens()}};
}

KdaKernelSpec prepareSpec(ChunkSolveOp solve, ChunkDecayOp decay) {
  KdaKernelSpec spec =
      specOf(solve.getK(), lastDim(solve.getV()), solve.getChunk(),
             solve.getCuSeqlens(), decay.getG(), solve.getBeta());
  spec.backwardTiles = solve.getForBackward();
  spec.keepQueries = solve.getKeepQueries();
  spec.tmaInputs = solve.getTma();
  return spec;
}

template <typename Op, typename Model>
struct KdaPrimitive : public PrimitiveOpInterface::ExternalModel<Model, Op> {};

struct DecayModel : KdaPrimitive<ChunkDecayOp, DecayModel> {
  StringRef getKernelGroup(Operation *) const { return "kda.prepare"; }
  // The chunk tiles' memory, which the solve sizes: Γ stays in the prepare
  // block's shared memory (a backward's solve keeps a copy there).
  ResultStorage getResultStorage(Operation *op, unsigned) const {
    auto decay = cast<ChunkDecayOp>(op);
    return ResultStorage::own(perChunk(0, decay.getChunk(), {}), "tiles");
  }
  LogicalResult emitKernel(Operation *op, KernelBuilder &) const {
    return op->emitOpError() << "cannot end a kernel: its chunk_solve does";
  }
};

struct PairwiseModel : KdaPrimitive<ChunkPairwiseOp, PairwiseModel> {
  StringRef getKernelGroup(Operation *) const { return "kda.prepare"; }
  ResultStorage getResultStorage(Operation *op, unsigned index) const {
    auto pairwise = cast<ChunkPairwiseOp>(op);
    // The strict matrix stays in the prepare block's shared memory.
    return index == 0 ? ResultStorage::kernelLocal()
                      : ResultStorage::sharedWith(pairwise.getGamma());
  }
  LogicalResult emitKernel(Operation *op, KernelBuilder &) const {
    return op->emitOpError() << "cannot end a kernel: its chunk_solve does";
  }
};

struct SolveModel : KdaPrimitive<ChunkSolveOp, SolveModel> {
  StringRef getKernelGroup(Operation *) const { return "kda.prepare"; }
  ResultStorage getResultStorage(Operation *op, unsigned) const {
    auto solve = cast<ChunkSolveOp>(op);
    KdaKernelSpec spec = specOf(solve.getK(), lastDim(solve.getV()),
                                solve.getChunk(), solve.getCuSeqlens());
    // A backward's tiles (or their decayed queries alone, in their place)
    // follow every chunk's forward tiles.
    const int64_t backwardBytes =
        solve.getForBackward() || solve.getKeepQueries()
            ? 4 * ::rudnn::codegen::kdaBackwardTileFloats(spec)
            : 0;
    return ResultStorage::sharedWith(
        solve.getGamma(), perChunk(tileBytes(spec) + backwardBytes,
                                   solve.getChunk(), solve.getCuSeqlens()));
  }
  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto solve = cast<ChunkSolveOp>(op);
    auto prepare = prepareOf(solve);
    if (failed(prepare))
      return failure();
    auto [decay, pairwise] = *prepare;
    return emitStages(op, builder, prepareSpec(solve, decay),
                      {KdaStage::Prepare},
                      prepareTensors(solve, decay, pairwise));
  }
};

struct RestoreModel : KdaPrimitive<ChunkRestoreOp, RestoreModel> {
  // Chunk-parallel like prepare: each block restores the chunk it prepared.
  StringRef getKernelGroup(Operation *) const { return "kda.prepare"; }
  ResultStorage getResultStorage(Operation *op, unsigned) const {
    return ResultStorage::sharedWith(cast<ChunkRestoreOp>(op).getW());
  }
  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto restore = cast<ChunkRestoreOp>(op);
    auto solve = restore.getW().getDefiningOp<ChunkSolveOp>();
    if (!solve)
      return restore.emitOpError() << "cannot emit its kernel: the "
                                      "chunk_solve it reads must be in it";
    auto prepare = prepareOf(solve);
    if (failed(prepare))
      return failure();
    auto [decay, pairwise] = *prepare;
    SmallVector<KdaTensor> tensors = prepareTensors(solve, decay, pairwise);
    tensors.push_back({"boundaries", restore.getBoundaries()});
    return emitStages(op, builder, prepareSpec(solve, decay),
                      {KdaStage::Prepare, KdaStage::Restore}, tensors);
  }
};

/// The wgmma walk that computes `output`'s chunks itself (its kernel then
/// ends with the output), or null.
ChunkPropagateOp fusedWalkOf(ChunkOutputOp output) {
  auto propagate = output.getU().getDefiningOp<ChunkPropagateOp>();
  return propagate && propagate.getWgmma() &&
                 output.getBoundaries() == propagate.getBoundaries()
             ? propagate
             : ChunkPropagateOp();
}

/// Whether a wgmma walk's boundaries are read by its fused output alone:
/// none are then kept.
bool boundariesStayInTheWalk(ChunkPropagateOp propagate) {
  return propagate.getWgmma() &&
         llvm::all_of(propagate.getBoundaries().getUsers(),
                      [](Operation *user) {
                        auto output = dyn_cast<ChunkOutputOp>(user);
                        return output && fusedWalkOf(output);
                      });
}

struct PropagateModel : KdaPrimitive<ChunkPropagateOp, PropagateModel> {
  StringRef getKernelGroup(Operation *) const { return "kda.propagate"; }
  ResultStorage getResultStorage(Operation *op, unsigned index) const {
    auto propagate = cast<ChunkPropagateOp>(op);
    const int64_t elements =
        lastDim(propagate.getK()) * lastDim(propagate.getU0());
    if (index == 0)
      return ResultStorage::sharedWith(propagate.getW());
    if (index == 1 && boundariesStayInTheWalk(propagate))
      return ResultStorage::kernelLocal();
    if (index == 1)
      return ResultStorage::own(
          perChunk(elementBytes(propagate.getK()) * elements,
                   propagate.getChunk(), propagate.getCuSeqlens()),
          "boundaries");
    return states(elements, propagate.getCuSeqlens(), "final_state");
  }
  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto propagate = cast<ChunkPropagateOp>(op);
    KdaKernelSpec spec = specOf(propagate.getK(), lastDim(propagate.getU0()),
                                propagate.getChunk(), propagate.getCuSeqlens());
    spec.wgmmaWalk = propagate.getWgmma();
    return emitStages(op, builder, spec, {KdaStage::Propagate},
                      {{"k", propagate.getK()},
                       {"initial_state", propagate.getInitialState()},
                       {"final_state", propagate.getFinalState()},
                       {"boundaries", propagate.getBoundaries()},
                       {"workspace", propagate.getW()},
                       {"cu_seqlens", propagate.getCuSeqlens()}});
  }
};

struct OutputModel : KdaPrimitive<ChunkOutputOp, OutputModel> {
  StringRef getKernelGroup(Operation *op) const {
    return fusedWalkOf(cast<ChunkOutputOp>(op)) ? "kda.propagate"
                                                : "kda.output";
  }
  ResultStorage getResultStorage(Operation *op, unsigned) const {
    return sequence(cast<ChunkOutputOp>(op).getOutput(), "output");
  }
  std::optional<DimRef> getResultDim(Operation *op, unsigned,
                                     unsigned dim) const {
    if (dim > 2)
      return std::nullopt;
    // g has the output's value heads (q may have fewer).
    return DimRef::of(cast<ChunkOutputOp>(op).getG(), dim);
  }
  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto output = cast<ChunkOutputOp>(op);
    if (ChunkPropagateOp walk = fusedWalkOf(output)) {
      KdaKernelSpec spec = specOf(walk.getK(), lastDim(walk.getU0()),
                                  walk.getChunk(), walk.getCuSeqlens());
      spec.wgmmaWalk = true;
      spec.keepsBoundaries = !boundariesStayInTheWalk(walk);
      return emitStages(
          op, builder, spec, {KdaStage::Propagate, KdaStage::Output},
          {{"k", walk.getK()},
           {"initial_state", walk.getInitialState()},
           {"final_state", walk.getFinalState()},
           {"boundaries",
            boundariesStayInTheWalk(walk) ? Value() : walk.getBoundaries()},
           {"workspace", walk.getW()},
           {"output", output.getOutput()},
           {"cu_seqlens", walk.getCuSeqlens()}},
          output.getScaleAttr());
    }
    return emitStages(op, builder,
                      specOf(output.getQ(), lastDim(output.getU()),
                             output.getChunk(), output.getCuSeqlens(),
                             output.getG()),
                      {KdaStage::Output},
                      {{"q", output.getQ()},
                       {"g", output.getG()},
                       {"output", output.getOutput()},
                       {"boundaries", output.getBoundaries()},
                       // the chunk tiles' memory
                       {"workspace", output.getPairwise()},
                       {"cu_seqlens", output.getCuSeqlens()}},
                      output.getScaleAttr());
  }
};

struct RecurrentModel : KdaPrimitive<KdaRecurrentOp, RecurrentModel> {
  StringRef getKernelGroup(Operation *) const { return "kda.recurrent"; }
  ResultStorage getResultStorage(Operation *op, unsigned index) const {
    auto recurrent = cast<KdaRecurrentOp>(op);
    const int64_t elements =
        lastDim(recurrent.getQ()) * lastDim(recurrent.getV());
    if (index == 0)
      return sequence(recurrent.getOutput(), "output");
    if (index == 1)
      return states(elements, recurrent.getCuSeqlens(), "final_state");
    return ResultStorage::own(
        perChunk(elementBytes(recurrent.getQ()) * elements,
                 recurrent.getChunk(), {}),
        "boundaries");
  }
  std::optional<DimRef> getResultDim(Operation *op, unsigned index,
                                     unsigned dim) const {
    if (index != 0 || dim > 2)
      return std::nullopt;
    return DimRef::of(cast<KdaRecurrentOp>(op).getV(), dim);
  }
  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto recurrent = cast<KdaRecurrentOp>(op);
    return emitStages(op, builder,
                      specOf(recurrent.getQ(), lastDim(recurrent.getV()),
                             recurrent.getChunk(), recurrent.getCuSeqlens(),
                             recurrent.getG(), recurrent.getBeta()),
                      {KdaStage::Recurrent},
                      {{"q", recurrent.getQ()},
                       {"k", recurrent.getK()},
                       {"v", recurrent.getV()},
                       {"g", recurrent.getG()},
                       {"beta", recurrent.getBeta()},
                       {"initial_state", recurrent.getInitialState()},
                       {"output", recurrent.getOutput()},
                       {"final_state", recurrent.getFinalState()},
                       {"boundaries", recurrent.getBoundaries()},
                       {"cu_seqlens", recurrent.getCuSeqlens()}},
                      recurrent.getScaleAttr());
  }
};

struct StateGradientModel
    : KdaPrimitive<ChunkStateGradientOp, StateGradientModel> {
  StringRef getKernelGroup(Operation *) const { return "kda.state_gradient"; }
  ResultStorage getResultStorage(Operation *op, unsigned index) const {
    auto walk = cast<ChunkStateGradientOp>(op);
    const int64_t K = lastDim(walk.getQ()), V = lastDim(walk.getDOutput());
    if (index == 2)
      return states(K * V, walk.getCuSeqlens(), "d_initial_state");
    if (index == 1)
      return ResultStorage::sharedWith(walk.getDu());
    KdaKernelSpec spec =
        specOf(walk.getQ(), V, walk.getChunk(), walk.getCuSeqlens());
    return ResultStorage::own(
        perChunk(4 * ::rudnn::codegen::kdaGradientTileFloats(spec),
                 walk.getChunk(), walk.getCuSeqlens()),
        "scratch");
  }
  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto walk = cast<ChunkStateGradientOp>(op);
    KdaKernelSpec spec = specOf(walk.getQ(), lastDim(walk.getDOutput()),
                                walk.getChunk(), walk.getCuSeqlens());
    spec.wgmmaWalk = walk.getWgmma();
    return emitStages(op, builder, spec, {KdaStage::StateGradient},
                      {{"q", walk.getQ()},
                       {"k", walk.getK()},
                       {"workspace", walk.getGamma()},
                       {"d_output", walk.getDOutput()},
                       {"d_final_state", walk.getDFinalState()},
                       {"scratch", walk.getDu()},
                       {"d_initial_state", walk.getDInitialState()},
                       {"cu_seqlens", walk.getCuSeqlens()}},
                      walk.getScaleAttr());
  }
};

struct GradientsModel : KdaPrimitive<ChunkGradientsOp, GradientsModel> {
  StringRef getKernelGroup(Operation *) const { return "kda.gradients"; }
  ResultStorage getResultStorage(Operation *op, unsigned index) const {
    static constexpr const char *kNames[] = {"dq", "dk", "dv", "dg", "dbeta"};
    return sequence(op->getResult(index), kNames[index]);
  }
  std::optional<DimRef> getResultDim(Operation *op, unsigned,
                                     unsigned dim) const {
    if (dim > 2)
      return std::nullopt;
    // Every gradient has v's value heads (dq and dk per value head).
    return DimRef::of(cast<ChunkGradientsOp>(op).getV(), dim);
  }
  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto gradients = cast<ChunkGradientsOp>(op);
    return emitStages(op, builder,
                      specOf(gradients.getQ(), lastDim(gradients.getV()),
                             gradients.getChunk(), gradients.getCuSeqlens(),
                             gradients.getG(), gradients.getBeta()),
                      {KdaStage::Gradients},
                      {{"q", gradients.getQ()},
                       {"k", gradients.getK()},
                       {"v", gradients.getV()},
                       {"g", gradients.getG()},
                       {"beta", gradients.getBeta()},
                       // the chunk tiles' memory
                       {"workspace", gradients.getPairwise()},
                       {"boundaries", gradients.getBoundaries()},
                       {"d_output", gradients.getDOutput()},
                       {"scratch", gradients.getDu()},
                       {"dq", gradients.getDq()},
                       {"dk", gradients.getDk()},
                       {"dv", gradients.getDv()},
                       {"dg", gradients.getDg()},
                       {"dbeta", gradients.getDbeta()},
                       {"cu_seqlens", gradients.getCuSeqlens()}},
                      gradients.getScaleAttr());
  }
};

struct PoolStepModel : KdaPrimitive<KdaPoolStepOp, PoolStepModel> {
  StringRef getKernelGroup(Operation *) const { return "kda.pool_step"; }
  ResultStorage getResultStorage(Operation *op, unsigned index) const {
    auto step = cast<KdaPoolStepOp>(op);
    if (index == 0)
      return sequence(step.getOutput(), "output");
    if (index == 1) // the pool, updated in place
      return ResultStorage::sharedWith(step.getStatePool());
    return ResultStorage::own({4, {DimRef::of('B')}}, "status").orNull();
  }
  std::optional<DimRef> getResultDim(Operation *op, unsigned index,
                                     unsigned dim) const {
    auto step = cast<KdaPoolStepOp>(op);
    if (index == 0 && dim <= 2)
      return DimRef::of(step.getV(), dim);
    if (index == 2 && dim == 0)
      return DimRef::of(step.getQ(), 0);
    return std::nullopt;
  }
  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto step = cast<KdaPoolStepOp>(op);
    // The chunk only names the kernel's layouts: no chunk is formed.
    KdaKernelSpec spec = specOf(step.getQ(), lastDim(step.getV()), 16, {},
                                step.getG(), step.getBeta());
    spec.state = dtype(step.getStatePool());
    return emitStages(op, builder, spec, {KdaStage::PoolStep},
                      {{"q", step.getQ()},
                       {"k", step.getK()},
                       {"v", step.getV()},
                       {"g", step.getG()},
                       {"beta", step.getBeta()},
                       {"output", step.getOutput()},
                       {"state_pool", step.getStatePool()},
                       {"slots", step.getSlots()},
                       {"status", step.getStatus()}},
                      step.getScaleAttr());
  }
};

/// The sums of value heads' gradients over each q/k head's group: a
/// bandwidth-bound kernel, a block a (b, t) row.
struct HeadGroupSumModel : KdaPrimitive<HeadGroupSumOp, HeadGroupSumModel> {
  StringRef getKernelGroup(Operation *) const { return "kda.head_group_sum"; }
  ResultStorage getResultStorage(Operation *op, unsigned) const {
    auto sum = cast<HeadGroupSumOp>(op);
    return ResultStorage::own(
        {elementBytes(sum.getSum()) * lastDim(sum.getSum()),
         {DimRef::of('B'), DimRef::of('T'), DimRef::of(sum.getLike(), 2)}},
        "head_sums");
  }
  std::optional<DimRef> getResultDim(Operation *op, unsigned,
                                     unsigned dim) const {
    if (dim > 2)
      return std::nullopt;
    return DimRef::of(cast<HeadGroupSumOp>(op).getLike(), dim);
  }
  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto sum = cast<HeadGroupSumOp>(op);
    const DType type = dtype(sum.getX());
    const int64_t width = lastDim(sum.getX());
    const std::string element = ::rudnn::codegen::cudaType(type);
    builder.setEntry("kda_head_group_sum_" +
                     std::string(::rudnn::dtypeName(type)) + "_d" +
                     std::to_string(width));
    builder.preamble() << "// Sums of value heads' q/k gradients over each "
                          "group.\n#include \"rudnn/kda.cuh\"\n";
    builder.pointer(sum.getX(), "x", element, false);
    builder.pointer(sum.getSum(), "sum", element, true);
    builder.strides(sum.getX(), {"x_b", "x_t", "x_h"});
    builder.strides(sum.getSum(), {"sum_b", "sum_t", "sum_h"});
    builder.dim(DimRef::of(sum.getX(), 2), "heads");
    builder.dim(DimRef::of(sum.getLike(), 2), "groups");
    builder.body() << "  rudnn::kda::head_group_sum<" << width
                   << ">(x, {x_b, x_t, x_h}, sum, {sum_b, sum_t, sum_h}, "
                      "heads, groups);\n";
    ::rudnn::codegen::KernelLaunch &launch = builder.launch();
    launch.threads = 128;
    launch.grid[0] = SizeRef{1, {DimRef::of(sum.getX(), 1)}};
    launch.grid[1] = SizeRef{1, {DimRef::of(sum.getX(), 0)}};
    // Per (b, t) row and value head: its row read; the sums written.
    const SizeRef rows{1,
                       {DimRef::of(sum.getX(), 0), DimRef::of(sum.getX(), 1),
                        DimRef::of(sum.getX(), 2)}};
    launch.memoryBytes = {2 * elementBytes(sum.getX()) * width, rows.dims};
    launch.flops = {width, rows.dims};
    if (!builder.conflict().empty())
      return op->emitOpError()
             << "cannot emit its kernel: " << builder.conflict();
    return success();
  }
};

} // namespace

void ::rudnn::codegen::registerKdaPrimitives(DialectRegistry &registry) {
  attachPrimitives<Primitive<ChunkDecayOp, DecayModel>,
                   Primitive<ChunkPairwiseOp, PairwiseModel>,
                   Primitive<ChunkSolveOp, SolveModel>,
                   Primitive<ChunkRestoreOp, RestoreModel>,
                   Primitive<ChunkPropagateOp, PropagateModel>,
                   Primitive<ChunkOutputOp, OutputModel>,
                   Primitive<KdaRecurrentOp, RecurrentModel>,
                   Primitive<ChunkStateGradientOp, StateGradientModel>,
                   Primitive<ChunkGradientsOp, GradientsModel>,
                   Primitive<HeadGroupSumOp, HeadGroupSumModel>,
                   Primitive<KdaPoolStepOp, PoolStepModel>>(registry);
  registerKdaInputPrimitives(registry);
}
