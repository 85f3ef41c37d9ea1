//===- KdaEmitter.cpp - CUDA C++ for the KDA kernels ----------------------===//

#include "codegen/Emit/kda/KdaEmitter.h"

#include "llvm/ADT/STLExtras.h"

#include <sstream>
#include <vector>

using namespace rudnn::codegen;

const char *rudnn::codegen::stageName(KdaStage stage) {
  switch (stage) {
  case KdaStage::Prepare:
    return "prepare";
  case KdaStage::Propagate:
    return "propagate";
  case KdaStage::Output:
    return "output";
  case KdaStage::Recurrent:
    return "recurrent";
  case KdaStage::Restore:
    return "restore";
  case KdaStage::StateGradient:
    return "state_gradient";
  case KdaStage::Gradients:
    return "gradients";
  case KdaStage::PoolStep:
    return "pool_step";
  }
  return "?";
}

namespace {
/// Floats of `operands` elements of the input type, in whole 16-byte chunks.
int64_t operandFloats(const KdaKernelSpec &spec, int64_t operands) {
  return (operands * dtypeSize(spec.input) + 15) / 16 * 4;
}
} // namespace

mlir::rudnn::DimRef rudnn::codegen::kdaGridChunks(int64_t chunk, bool packed) {
  // Packed, "N" names the slots; the grid's chunks take another name.
  return mlir::rudnn::DimRef::ceilDiv('T', chunk, packed ? "T_chunks" : "N");
}

mlir::rudnn::DimRef rudnn::codegen::kdaChunkSlots(int64_t chunk, bool packed) {
  const mlir::rudnn::DimRef chunks = kdaGridChunks(chunk, packed);
  if (!packed)
    return chunks;
  return mlir::rudnn::DimRef::sum({chunks, mlir::rudnn::DimRef::of('C')}, "N");
}

int64_t rudnn::codegen::kdaTileFloats(const KdaKernelSpec &spec) {
  return mlir::rudnn::kdaChunkTileWords(spec.chunk, spec.featureK,
                                        spec.featureV, dtypeSize(spec.input));
}

int64_t rudnn::codegen::kdaBackwardTileFloats(const KdaKernelSpec &spec) {
  return mlir::rudnn::kdaBackwardTileWords(spec.chunk, spec.featureK,
                                           dtypeSize(spec.input));
}

int64_t rudnn::codegen::kdaGradientTileFloats(const KdaKernelSpec &spec) {
  const int64_t C = spec.chunk, K = spec.featureK, V = spec.featureV;
  // kda::GradientTiles: dS_end and dU in the input type.
  return operandFloats(spec, K * V + C * V);
}

int64_t rudnn::codegen::walkColumns(const KdaKernelSpec &spec, KdaStage stage) {
  const bool tiled =
      stage == KdaStage::Propagate || stage == KdaStage::StateGradient;
  return tiled && spec.input != DType::F32 ? mlir::rudnn::kKdaWalkColumns16
                                           : kKdaColumnsPerBlock;
}

namespace {

/// The exponentials decayed_pairwise takes over a whole chunk: K a pair
/// of tokens within a 16-token block, and for each row block I > 0 the
/// split factors of its 16 rows and of the 16·I earlier tokens.
int64_t pairwiseExponentials(int64_t C, int64_t K) {
  const int64_t blocks = (C + 15) / 16;
  return blocks * 136 * K + 8 * (blocks - 1) * (blocks + 2) * K;
}

/// The exponentials the gradients kernel's 16 x 8 tiles take on the
/// special-function units (per 8 features): decayed_rows for its two
/// matrices at once (the earlier blocks' operand, the fragment's split, the
/// pairs within the block), decayed_columns likewise but for the later
/// blocks' two operands, and e^Γ and e^(Γlast − Γ) of every element.
int64_t gradientTileExponentials(int64_t C, int64_t K) {
  int64_t perColumnTile = 0;
  for (int64_t t0 = 0; t0 < C; t0 += 16) {
    const int64_t later = C - t0 - 16;
    const int64_t rows = (t0 > 0 ? 8 * t0 + 128 : 0) + 8 * 136;
    const int64_t columns = later > 0 ? 2 * 8 * later + 128 : 0;
    perColumnTile += rows + columns + 2 * 128;
  }
  return perColumnTile * K / 8;
}

/// Those it takes on the FMA pipes: decayed_columns' pairs within each
/// 16-token block (136 a feature), by polynomial_exp.
int64_t gradientTilePolynomialExponentials(int64_t C, int64_t K) {
  return (C + 15) / 16 * 136 * K;
}

} // namespace

rudnn::codegen::KdaStageCost
rudnn::codegen::kdaStageCost(const KdaKernelSpec &spec, KdaStage stage) {
  const int64_t C = spec.chunk, K = spec.featureK, V = spec.featureV;
  const int64_t in = dtypeSize(spec.input), gate = dtypeSize(spec.gate),
                beta = dtypeSize(spec.beta);
  // Per chunk-head: the sequence tensors' rows, the tiles (ChunkTiles), a
  // boundary state and the backward's per-chunk gradients.
  const int64_t inputs = 2 * C * K * in + C * V * in + C * K * gate + C * beta;
  const int64_t rowsK = C * K * in, rowsV = C * V * in, square = C * C * in;
  const int64_t gamma = 4 * C * K, last = 4 * K;
  const int64_t boundary = K * V * in; // a state in the input type
  // What a backward's prepare keeps besides: Qd, (I + A)⁻¹.
  const int64_t backwardTiles = spec.backwardTiles ? rowsK + square
                                : spec.keepQueries ? rowsK
                                                   : 0;
  // Exponentials of the 16-bit kernels (f32's run on FMA, unmodelled).
  const bool modelled = spec.input != DType::F32;
  auto exps = [&](int64_t count) { return modelled ? count : 0; };
  switch (stage) {
  case KdaStage::Prepare: // Γ, A, B, (I + A)⁻¹, W, U0, Kd
    // The pairwise products, e^Γlast, Kd's and W's decayed keys (and a
    // backward's decayed queries).
    return {inputs + last + 2 * rowsK + square + rowsV + backwardTiles,
            3 * C * C * K + C * C * V + C * C * C / 3,
            exps(pairwiseExponentials(C, K) + K +
                 (spec.backwardTiles || spec.keepQueries ? 3 : 2) * C * K),
            0, false};
  case KdaStage::Propagate: // U = U0 − W·S, S ← e^Γlast ⊙ S + Kdᵀ·U
    return {2 * rowsK + 2 * rowsV + last +
                (spec.keepsBoundaries ? boundary : 0),
            4 * C * K * V, 0, 0, false};
  case KdaStage::Output: // O = (q ⊙ e^Γ)·S + B·U
    // Each block of 64 value columns decays the chunk's queries.
    return {rowsK + C * K * gate + square + 2 * rowsV + boundary,
            2 * C * K * V + C * C * V,
            exps(C * K * ((V + kKdaOutputColumns - 1) / kKdaOutputColumns)), 0,
            false};
  case KdaStage::Recurrent: // per token: q, k, v, g, β in, o out
  case KdaStage::PoolStep:  // (and a state read and written per step)
    // Each value column's thread decays its K state entries.
    return {2 * K * in + 2 * V * in + K * gate + beta, 7 * K * V, exps(K * V),
            0, true};
  case KdaStage::Restore: // U = U0 − W·S from a saved boundary
    return {rowsK + 2 * rowsV + boundary, 2 * C * K * V, 0, 0, false};
  case KdaStage::StateGradient: // dU, dS through Bᵀ, Kd, Qdᵀ, Wᵀ
    return {square + rowsV + 3 * rowsK + last + boundary + rowsV,
            C * C * V + 6 * C * K * V, 0, 0, false};
  case KdaStage::Gradients: // every input gradient, chunk-parallel
    // In: the inputs (q read twice; k's and g's columns read again by the
    // feature steps come from L2), dO, U, dU, (I + A)⁻¹, S0, dS_end; out:
    // dq, dk, dv, dβ and dg, each written once.
    return {
        inputs + rowsK + 3 * rowsV + square + 2 * boundary + 2 * rowsK + rowsV +
            C * beta + gamma,
        5 * C * C * K + 3 * C * C * V + 6 * C * K * V,
        exps(pairwiseExponentials(C, K) + gradientTileExponentials(C, K) + K),
        exps(gradientTilePolynomialExponentials(C, K)), false};
  }
  return {};
}

rudnn::codegen::KdaStageCost
rudnn::codegen::kdaFusedOutputCost(const KdaKernelSpec &spec) {
  const int64_t C = spec.chunk, K = spec.featureK, V = spec.featureV;
  const int64_t in = dtypeSize(spec.input);
  // Qd (from the backward's tiles) and the pairwise matrix in, O out; the
  // state and updates are the walk's own.
  return {C * K * in + C * C * in + C * V * in, 2 * C * K * V + C * C * V, 0, 0,
          false};
}

rudnn::codegen::KdaWalkStep
rudnn::codegen::kdaWalkStep(const KdaKernelSpec &spec, KdaStage stage) {
  const int64_t C = spec.chunk, K = spec.featureK;
  const int64_t in = dtypeSize(spec.input);
  const int64_t VB = walkColumns(spec, stage);
  const bool tensor = spec.input != DType::F32;
  auto deep = [](int64_t n) { return (n + 15) / 16; };
  // The wgmma walks multiply over the state's K' rows, K rounded up to a
  // whole 64-row tile (zeros past K).
  const int64_t stateDepth = spec.wgmmaWalk ? (K + 63) / 64 * 64 : K;
  if (stage == KdaStage::Propagate)
    // W and Kd whole, the block's columns of U0 in and U out, e^Γlast, the
    // boundary out; U = U0 − W·S (K deep), then S += Kdᵀ·U (C deep). Four
    // barriers: the pipeline's two, and the rounded state's and updates'
    // hand-over to the tensor cores (f32: the updates' alone, and the
    // chunk's end); on wgmma two, the operands' hand-over joined to the
    // state's.
    return {2 * C * K * in + 2 * C * VB * in + 4 * K +
                (spec.keepsBoundaries ? K * VB * in : 0),
            4 * C * K * VB,
            spec.wgmmaWalk ? 2
            : tensor       ? 4
                           : 2,
            tensor ? deep(stateDepth) + deep(C) : 0};
  // The reverse walk: the pairwise matrix, Kd, Qd and W whole, the block's
  // columns of dO, e^Γlast; dS at the chunk's end and dU out in the input
  // type (GradientTiles).
  // dU = Bᵀ·dO (C deep) + Kd·dS (K deep), then dS += Qdᵀ·dO − Wᵀ·dU (C
  // deep each, one after the other on dS's accumulators). On wgmma two
  // barriers, and the products beside one another: Bᵀ·dO beside Kd·dS,
  // Qdᵀ·dO in accumulators of its own beside Wᵀ·dU.
  return {C * C * in + C * VB * in + 3 * C * K * in + 4 * K +
              (K * VB + C * VB) * in,
          2 * C * C * VB + 6 * C * K * VB,
          spec.wgmmaWalk ? 2
          : tensor       ? 4
                         : 1,
          spec.wgmmaWalk ? deep(stateDepth) + deep(C)
          : tensor       ? 3 * deep(C) + deep(K)
                         : 0};
}

std::string rudnn::codegen::kdaSpecName(const KdaKernelSpec &spec) {
  std::ostringstream name;
  name << dtypeName(spec.input) << "_" << dtypeName(spec.gate) << "_"
       << dtypeName(spec.beta) << "_k" << spec.featureK << "_v" << spec.featureV
       << "_c" << spec.chunk << (spec.alignedViews ? "_a16" : "")
       << (spec.packed ? "_packed" : "")
       << (spec.state != DType::F32 ? "_s" + std::string(dtypeName(spec.state))
                                    : "");
  return name.str();
}

namespace {
/// Whether `stage` copies views (q, k, v, d_output) into shared tiles.
bool copiesViews(KdaStage stage) {
  return stage == KdaStage::Prepare || stage == KdaStage::Output ||
         stage == KdaStage::StateGradient || stage == KdaStage::Gradients;
}
} // namespace

llvm::ArrayRef<KdaField> rudnn::codegen::kdaFields() {
  using E = KdaElement;
  using B = KdaBlock;
  static const KdaField kFields[] = {
      {"q", E::Input, B::Forward, false, true},
      {"k", E::Input, B::Forward, false, true},
      {"v", E::Input, B::Forward, false, true},
      {"g", E::Gate, B::Forward, false, true},
      {"beta", E::Beta, B::Forward, false, true},
      {"initial_state", E::Float, B::Forward, false, false},
      {"output", E::Input, B::Forward, true, true},
      {"final_state", E::Float, B::Forward, true, false},
      {"boundaries", E::Input, B::Forward, true, false},
      {"workspace", E::Float, B::Forward, true, false},
      {"cu_seqlens", E::Int, B::Packed, false, false},
      {"state_pool", E::State, B::Pool, true, false},
      {"slots", E::Int, B::Pool, false, false},
      {"status", E::Int, B::Pool, true, false},
      {"d_output", E::Input, B::Backward, false, true},
      {"d_final_state", E::Float, B::Backward, false, false},
      {"dq", E::Input, B::Backward, true, true},
      {"dk", E::Input, B::Backward, true, true},
      {"dv", E::Input, B::Backward, true, true},
      {"dg", E::Float, B::Backward, true, true},
      {"dbeta", E::Beta, B::Backward, true, true},
      {"d_initial_state", E::Float, B::Backward, true, false},
      {"scratch", E::Float, B::Backward, true, false}};
  return kFields;
}

void rudnn::codegen::emitKdaStages(KernelBuilder &builder, KdaKernelSpec spec,
                                   llvm::ArrayRef<KdaStage> stages,
                                   llvm::ArrayRef<KdaTensor> tensors,
                                   double scale, bool bindEveryField) {
  // Only the walks have a wgmma form; with the output stage after the
  // forward's, the walk computes the chunks' outputs itself
  // (kda::propagate_wgmma).
  spec.wgmmaWalk &= (llvm::is_contained(stages, KdaStage::Propagate) ||
                     llvm::is_contained(stages, KdaStage::StateGradient)) &&
                    spec.input != DType::F32;
  const bool fusedOutput =
      spec.wgmmaWalk && llvm::is_contained(stages, KdaStage::Output);
  // Aligned views change only the kernels that copy them (one kernel then
  // serves both for the others); the wgmma walk copies workspace tiles
  // alone.
  spec.alignedViews &= llvm::any_of(stages, copiesViews) && !fusedOutput;
  // prepare's rows by TMA: boxes of 64 16-bit features from rows promised
  // 16-byte aligned.
  spec.tmaInputs &= stages.front() == KdaStage::Prepare && spec.alignedViews &&
                    spec.input != DType::F32 && spec.featureK % 64 == 0 &&
                    spec.featureV % 64 == 0;
  const std::string in = cudaType(spec.input), gate = cudaType(spec.gate),
                    beta = cudaType(spec.beta);
  std::ostringstream layout;
  layout << spec.featureK << ", " << spec.featureV << ", " << spec.chunk;
  bool backward = spec.backwardTiles;
  std::string names;
  for (KdaStage stage : stages) {
    backward |= isBackwardStage(stage);
    names += (names.empty() ? "" : "_") + std::string(stageName(stage));
  }
  builder.setEntry(std::string(backward ? "kda_bwd_" : "kda_fwd_") + names +
                   "_" + kdaSpecName(spec) +
                   (spec.keepQueries && !spec.backwardTiles ? "_qd" : "") +
                   (spec.wgmmaWalk ? "_wgmma" : "") +
                   (spec.tmaInputs ? "_tma" : ""));
  if (spec.wgmmaWalk || spec.tmaInputs)
    builder.setArchSpecific();

  builder.preamble() << "// Kimi Delta Attention "
                     << (backward ? "backward" : "forward") << ": " << names
                     << ".\n"
                     << "#include \"rudnn/kda.cuh\"\n\n"
                     << "// The host sizes the workspace and the shared memory "
                        "from the same layouts.\n";
  // static_assert(EXPRESSION == value) on a rudnn::kda layout.
  auto assertLayout = [&](const std::string &expression, int64_t value) {
    builder.preamble() << "static_assert(" << expression << " == " << value
                       << ");\n";
  };
  const std::string kw = std::to_string(spec.featureK) + ", " +
                         std::to_string(spec.chunk) + ", " + in;
  const std::string kvw = layout.str() + ", " + in;
  const int64_t inputBytes = dtypeSize(spec.input);
  const bool sixteenBit = spec.input != DType::F32;
  const KdaStage first = stages.front();
  assertLayout("rudnn::kda::ChunkTiles<" + kvw + ">::kFloats",
               kdaTileFloats(spec));
  if (spec.wgmmaWalk && llvm::is_contained(stages, KdaStage::StateGradient))
    assertLayout("sizeof(rudnn::kda::WgmmaGradientWalkShared<" + kw + ">)",
                 mlir::rudnn::kdaWgmmaGradientWalkSharedBytes(spec.chunk,
                                                              spec.featureK));
  else if (sixteenBit && llvm::is_contained(stages, KdaStage::StateGradient))
    assertLayout(
        "sizeof(rudnn::kda::GradientWalkShared<" + kw + ">)",
        mlir::rudnn::kdaGradientWalkSharedBytes(spec.chunk, spec.featureK));
  if (fusedOutput)
    assertLayout(
        "sizeof(rudnn::kda::WgmmaWalkOutputShared<" + kw + ">)",
        mlir::rudnn::kdaWgmmaWalkOutputSharedBytes(spec.chunk, spec.featureK));
  else if (spec.wgmmaWalk && llvm::is_contained(stages, KdaStage::Propagate))
    assertLayout(
        "sizeof(rudnn::kda::WgmmaWalkShared<" + kw + ">)",
        mlir::rudnn::kdaWgmmaWalkSharedBytes(spec.chunk, spec.featureK));
  else if (sixteenBit && llvm::is_contained(stages, KdaStage::Propagate))
    assertLayout("sizeof(rudnn::kda::WalkShared<" + kw + ">)",
                 mlir::rudnn::kdaWalkSharedBytes(spec.chunk, spec.featureK));
  if (first == KdaStage::Prepare)
    assertLayout("sizeof(rudnn::kda::PrepareShared<" + kvw +
                     (spec.tmaInputs ? ", true" : "") + ">)",
                 mlir::rudnn::kdaPrepareSharedBytes(spec.chunk, spec.featureK,
                                                    spec.featureV, inputBytes));
  if (first == KdaStage::Output)
    assertLayout("sizeof(rudnn::kda::OutputShared<" + kw + ">)",
                 mlir::rudnn::kdaOutputSharedBytes(spec.chunk, spec.featureK,
                                                   inputBytes));
  if (backward || spec.keepQueries || fusedOutput)
    assertLayout("rudnn::kda::BackwardTiles<" + kvw + ">::kFloats",
                 kdaBackwardTileFloats(spec));
  if (backward) {
    assertLayout("rudnn::kda::GradientTiles<" + kvw + ">::kFloats",
                 kdaGradientTileFloats(spec));
  }
  if (sixteenBit && llvm::is_contained(stages, KdaStage::Restore))
    assertLayout("sizeof(rudnn::kda::RestoreShared<" + in + ">)",
                 mlir::rudnn::kdaRestoreSharedBytes(inputBytes));
  if (first == KdaStage::Gradients) {
    const int64_t bytes = mlir::rudnn::kdaGradientsSharedBytes(
        spec.chunk, spec.featureK, spec.featureV, inputBytes);
    assertLayout("sizeof(rudnn::kda::GradientsShared<" + kvw + ">)", bytes);
    // Registers for two blocks an SM where a Hopper SM's shared memory
    // holds two (K = V = 128, chunk 64, 16-bit); a larger block keeps
    // every register it needs.
    if (2 * (bytes + 1024) <= mlir::rudnn::DefaultTarget::kSmemPerSm)
      builder.setLaunchBounds(kKdaGradientsThreads, 2);
  }

  // The parameter blocks of the device library, filled with the tensors the
  // kernel binds and null (zero strides) for the others: a kernel's
  // signature holds what its primitives read and write.
  const bool pool = llvm::is_contained(stages, KdaStage::PoolStep);
  auto tensorOf = [&](llvm::StringRef field) -> mlir::Value {
    for (const KdaTensor &tensor : tensors)
      if (tensor.field == field)
        return tensor.value;
    return {};
  };
  const std::string state = cudaType(spec.state);
  auto element = [&](KdaElement kind) -> std::string {
    switch (kind) {
    case KdaElement::Input:
      return in;
    case KdaElement::Gate:
      return gate;
    case KdaElement::Beta:
      return beta;
    case KdaElement::Float:
      return "float";
    case KdaElement::Int:
      return "int";
    case KdaElement::State:
      return state;
    }
    return "float";
  };
  // A block's fields as the device library lists them: its pointers, then
  // its sequence tensors' strides (null and zero where not given).
  struct BlockArguments {
    std::vector<std::string> pointers;
    std::string strides;
  };
  auto bindBlock = [&](KdaBlock block) {
    BlockArguments arguments;
    for (const KdaField &field : kdaFields()) {
      if (field.block != block)
        continue;
      const mlir::Value value = tensorOf(field.name);
      arguments.pointers.push_back(value || bindEveryField
                                       ? builder.pointer(value, field.name,
                                                         element(field.element),
                                                         field.written)
                                       : "nullptr");
    }
    for (const KdaField &field : kdaFields()) {
      if (field.block != block || !field.sequence)
        continue;
      const mlir::Value value = tensorOf(field.name);
      const std::string name = field.name;
      if (!arguments.strides.empty())
        arguments.strides += ", ";
      if (!value && !bindEveryField) {
        arguments.strides += "{0, 0, 0}";
        continue;
      }
      builder.strides(value, {name + "_b", name + "_t", name + "_h"});
      arguments.strides += "{" + name + "_b, " + name + "_t, " + name + "_h}";
    }
    return arguments;
  };
  auto join = [](const std::vector<std::string> &items) {
    std::string text;
    for (const std::string &item : items)
      text += (text.empty() ? "" : ", ") + item;
    return text;
  };
  using mlir::rudnn::DimRef;
  const BlockArguments forward = bindBlock(KdaBlock::Forward);
  builder.dim(DimRef::of('B'), "batch");
  builder.dim(DimRef::of('T'), "length");
  builder.dim(DimRef::of('H'), "heads");
  builder.scalar("scale", scale);
  // Grouped value heads (GVA): q's and k's heads, each shared by
  // heads / qk_heads value heads.
  mlir::Value keys = tensorOf("q");
  if (!keys)
    keys = tensorOf("k");
  if (keys)
    builder.dim(DimRef::of(keys, 2), "qk_heads");
  std::string offsets = "nullptr, 0";
  if (spec.packed) {
    offsets = bindBlock(KdaBlock::Packed).pointers.front() + ", offsets - 1";
    builder.dim(DimRef::of('C'), "offsets");
  }
  BlockArguments poolArguments;
  if (pool) {
    poolArguments = bindBlock(KdaBlock::Pool);
    builder.dim(DimRef::of(tensorOf("state_pool"), 0), "slot_count");
  }
  const BlockArguments gradients =
      backward ? bindBlock(KdaBlock::Backward) : BlockArguments{};
  // The wgmma walks' W, Kd and Qd by TMA: the workspace as rows of K
  // 16-bit elements, boxes of 64 features by a chunk's rows.
  const bool workspaceRows = spec.wgmmaWalk && mlir::rudnn::kdaWorkspaceRowsFit(
                                                   spec.chunk, spec.featureK,
                                                   spec.featureV, inputBytes);
  if (workspaceRows) {
    const int64_t rows = mlir::rudnn::kdaWorkspaceRows(spec.featureK);
    builder.tensorMapOver(
        tensorOf("workspace"), "workspace_rows", 2, {spec.featureK, rows, 1},
        {spec.featureK, spec.featureK * rows}, {64, spec.chunk, 1});
  }
  // prepare's q, k and v by TMA: innermost first (features, tokens, heads,
  // batch), boxes of 64 features by a chunk's tokens.
  if (spec.tmaInputs)
    for (const char *name : {"q", "k", "v"})
      builder.tensorMap(tensorOf(name), std::string(name) + "_map",
                        {3, 1, 2, 0}, {64, spec.chunk, 1, 1});

  const std::string params =
      std::string("<") + in + ", " + gate + ", " + beta + ">";
  std::ostringstream &body = builder.body();
  body << "  const rudnn::kda::ForwardParams" << params
       << (backward ? " f" : " p") << " = {\n      " << join(forward.pointers)
       << ",\n      " << forward.strides
       << ",\n      batch, length, heads, scale, " << offsets << ", "
       << (keys ? "heads / qk_heads};\n" : "1};\n");
  if (backward)
    body << "  const rudnn::kda::BackwardParams" << params
         << " p = {\n      f, " << join(gradients.pointers) << ",\n      "
         << gradients.strides << "};\n";
  // PoolParams: state_pool, slots, their count, status.
  if (pool)
    body << "  const rudnn::kda::PoolParams<" << in << ", " << gate << ", "
         << beta << ", " << state << "> s = {p, " << poolArguments.pointers[0]
         << ", " << poolArguments.pointers[1] << ", slot_count, "
         << poolArguments.pointers[2] << "};\n";
  // Stages of one kernel run one after the other in each block, on the
  // chunk they share.
  for (size_t i = 0; i < stages.size(); ++i) {
    const KdaStage stage = stages[i];
    if (stage == KdaStage::Output && fusedOutput)
      continue; // in the walk's call
    const bool walk =
        stage == KdaStage::Propagate || stage == KdaStage::Recurrent ||
        stage == KdaStage::StateGradient || stage == KdaStage::PoolStep;
    body << (i ? "  __syncthreads();\n" : "")
         << "  rudnn::kda::" << stageName(stage) << "<" << layout.str();
    if (walk)
      body << ", " << walkColumns(spec, stage);
    if (stage == KdaStage::Propagate && spec.wgmmaWalk)
      body << (fusedOutput ? ", true, true" : ", true")
           << (workspaceRows ? (fusedOutput ? ", true" : ", false, true") : "");
    // The stages copying views into shared tiles take their alignment.
    const bool aligned = spec.alignedViews && copiesViews(stage);
    if (stage == KdaStage::StateGradient && (spec.wgmmaWalk || aligned))
      body << (spec.wgmmaWalk ? ", true" : ", false");
    // The reverse walk by TMA names its views' alignment before it.
    const bool reverseRows = stage == KdaStage::StateGradient && workspaceRows;
    if (reverseRows)
      body << ", rudnn::tile::Alignment::" << (aligned ? "Aligned" : "Checked")
           << ", true";
    if (stage == KdaStage::Prepare &&
        (spec.backwardTiles || spec.keepQueries || aligned))
      body << ", rudnn::kda::Keep::"
           << (spec.backwardTiles ? "Backward"
               : spec.keepQueries ? "Queries"
                                  : "Tiles");
    if (aligned && !reverseRows)
      body << ", rudnn::tile::Alignment::Aligned";
    const bool inputMaps = stage == KdaStage::Prepare && spec.tmaInputs;
    if (inputMaps)
      body << ", true";
    body << ">("
         << (stage == KdaStage::PoolStep           ? "s"
             : backward && !isBackwardStage(stage) ? "f"
                                                   : "p")
         << ((stage == KdaStage::Propagate || reverseRows) && workspaceRows
                 ? ", &workspace_rows"
                 : "")
         << (inputMaps ? ", {&q_map, &k_map, &v_map}" : "") << ");\n";
  }

  // Launch geometry: chunk-parallel stages over (chunks, sequences), the
  // walks over (sequences, blocks of V columns).
  using mlir::rudnn::SizeRef;
  KernelLaunch &launch = builder.launch();
  const DimRef chunks = kdaGridChunks(spec.chunk, spec.packed);
  // Walks take a sequence a block: b·H + h of a batch, n·H + h packed
  // (one block a head past the last sequence).
  const SizeRef sequences{
      1, {DimRef::of(spec.packed ? 'C' : 'B'), DimRef::of('H')}};
  const SizeRef columnsOfChunks{1, {DimRef::of('B'), DimRef::of('H')}};
  const int64_t blockColumns = walkColumns(spec, first);
  const SizeRef columns{(spec.featureV + blockColumns - 1) / blockColumns, {}};
  const bool walk =
      first == KdaStage::Propagate || first == KdaStage::Recurrent ||
      first == KdaStage::StateGradient || first == KdaStage::PoolStep;
  launch.threads = first == KdaStage::Recurrent || first == KdaStage::PoolStep
                       ? kKdaColumnsPerBlock
                   : first == KdaStage::Gradients ? kKdaGradientsThreads
                                                  : kKdaThreads;
  launch.grid[0] = walk ? sequences : SizeRef{1, {chunks}};
  launch.grid[1] = walk ? columns : columnsOfChunks;
  // 16-bit outputs are computed 64 columns a block, on the tile layer.
  const bool tiledOutput = first == KdaStage::Output && sixteenBit;
  // The cost model: the stages' sums, per chunk-head (per token-head for
  // the decode kernel).
  KdaStageCost cost;
  for (KdaStage stage : stages) {
    const KdaStageCost part = fusedOutput && stage == KdaStage::Output
                                  ? kdaFusedOutputCost(spec)
                                  : kdaStageCost(spec, stage);
    cost.bytes += part.bytes;
    cost.flops += part.flops;
    cost.exponentials += part.exponentials;
    cost.polynomialExponentials += part.polynomialExponentials;
    cost.perToken = part.perToken;
  }
  const SizeRef units{1,
                      {cost.perToken ? DimRef::of('T') : chunks,
                       DimRef::of('B'), DimRef::of('H')}};
  launch.memoryBytes = {cost.bytes, units.dims};
  launch.flops = {cost.flops, units.dims};
  if (cost.exponentials > 0)
    launch.exponentials = {cost.exponentials, units.dims};
  if (cost.polynomialExponentials > 0)
    launch.polynomialExponentials = {cost.polynomialExponentials, units.dims};
  // A walk's chunks wait for one another: T / C steps (a packed batch's
  // longest sequence holds at most all T tokens), each a block's chunk.
  if (first == KdaStage::Propagate || first == KdaStage::StateGradient) {
    KdaWalkStep step = kdaWalkStep(spec, first);
    if (fusedOutput) {
      // Qd and the pairwise matrix whole, the block's output columns out;
      // Qd·S and B·U beside the state's update, off its dependent chain.
      const int64_t C = spec.chunk, K = spec.featureK, VB = blockColumns;
      step.bytes += (C * K + C * C + C * VB) * inputBytes;
      step.flops += 2 * C * K * VB + 2 * C * C * VB;
    }
    launch.serialSteps = {1, {chunks}};
    launch.stepBytes = {step.bytes, {}};
    launch.stepFlops = {step.flops, {}};
    launch.stepBarriers = step.barriers;
    launch.stepMmaChain = step.mmaChain;
  }
  // The wgmma walk's slack aligns its tiles to 1024 bytes.
  if (first == KdaStage::Propagate && fusedOutput)
    launch.sharedBytes =
        mlir::rudnn::kdaWgmmaWalkOutputSharedBytes(spec.chunk, spec.featureK) +
        1024;
  else if (first == KdaStage::Propagate && spec.wgmmaWalk)
    launch.sharedBytes =
        mlir::rudnn::kdaWgmmaWalkSharedBytes(spec.chunk, spec.featureK) + 1024;
  else if (first == KdaStage::Propagate && sixteenBit)
    launch.sharedBytes =
        mlir::rudnn::kdaWalkSharedBytes(spec.chunk, spec.featureK);
  if (first == KdaStage::StateGradient && spec.wgmmaWalk)
    launch.sharedBytes = mlir::rudnn::kdaWgmmaGradientWalkSharedBytes(
                             spec.chunk, spec.featureK) +
                         1024;
  else if (first == KdaStage::StateGradient && sixteenBit)
    launch.sharedBytes =
        mlir::rudnn::kdaGradientWalkSharedBytes(spec.chunk, spec.featureK);
  // A TMA prepare's slack aligns its column blocks to 1024 bytes.
  if (first == KdaStage::Prepare)
    launch.sharedBytes =
        mlir::rudnn::kdaPrepareSharedBytes(spec.chunk, spec.featureK,
                                           spec.featureV, inputBytes) +
        (spec.tmaInputs ? 1024 : 0);
  // A restore after prepare reuses its block's dynamic shared memory.
  if (llvm::is_contained(stages, KdaStage::Restore))
    launch.sharedBytes = std::max<int64_t>(
        launch.sharedBytes, mlir::rudnn::kdaRestoreSharedBytes(inputBytes));
  if (first == KdaStage::Output)
    launch.sharedBytes = mlir::rudnn::kdaOutputSharedBytes(
        spec.chunk, spec.featureK, inputBytes);
  if (first == KdaStage::Gradients)
    launch.sharedBytes = mlir::rudnn::kdaGradientsSharedBytes(
        spec.chunk, spec.featureK, spec.featureV, inputBytes);
  launch.grid[2] = SizeRef{
      tiledOutput ? (spec.featureV + kKdaOutputColumns - 1) / kKdaOutputColumns
                  : 1,
      {}};
}

KdaKernelSource rudnn::codegen::emitKdaKernel(const KdaKernelSpec &spec,
                                              KdaStage stage) {
  KernelBuilder builder;
  emitKdaStages(builder, spec, {stage}, {}, 0, /*bindEveryField=*/true);
  return {builder.entry(), builder.source()};
}
