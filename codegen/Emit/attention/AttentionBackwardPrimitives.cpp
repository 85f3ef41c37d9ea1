//===- AttentionBackwardPrimitives.cpp - The backward's three kernels -----===//
//
// The primitive interface of the attention backward's ops, a kernel each,
// emitted through the device library's rudnn::attention functions with
// every specialization a constant: the row terms, the gradients in one pass
// over each key tile (sm_80's kernel or Hopper's), and dQ's conversion from
// its f32 accumulator.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emit/attention/AttentionBackwardPrimitives.h"
#include "codegen/Emit/KernelBuilder.h"
#include "codegen/Emit/KernelEmitInterface.h"
#include "dialects/IR/ElementTypes.h"
#include "dialects/IR/RudnnOps.h"
#include "dialects/IR/attention/AttentionPolicy.h"

#include <sstream>

using namespace mlir;
using namespace mlir::rudnn;
using ::rudnn::DType;
using namespace ::rudnn::codegen;

namespace {

/// Whether `value` holds packed batches ([T, H, *], with offsets).
bool isPacked(Value value) {
  return cast<ShapedType>(value.getType()).getRank() == 3;
}

/// The grid's second dim: B·heads, or heads alone when packed (the blocks
/// of a head walk its entries' tiles).
SizeRef headGrid(bool packed, char heads) {
  if (packed)
    return SizeRef{1, {DimRef::of(heads)}};
  return SizeRef{1, {DimRef::of('B'), DimRef::of(heads)}};
}

/// The tensors and attributes of one backward kernel (null where the
/// kernel reads none).
struct BackwardValues {
  Value q, k, v, lengths, mask, queryOffsets, keyOffsets, slopes, o, lse,
      dOutput, terms, dq, dk, dv, dqAccum;
  FloatAttr scale, softcap;
  /// Packed batches: rank-3 tensors ([T, H, *]) and the entries' offsets;
  /// hopper: the sm_90a kernel (`wgmma`; aligned views).
  bool causal = false, aligned = false, packed = false, hopper = false;
  int64_t left = -1, right = -1;
  /// Keys a gradient block; the deterministic kernel's persistent grid (0:
  /// not deterministic).
  int64_t keys = 0, blocks = 0;

  static BackwardValues of(AttentionGradientsOp op) {
    auto bound = [](std::optional<uint64_t> keys) {
      return keys ? static_cast<int64_t>(*keys) : int64_t(-1);
    };
    BackwardValues values;
    values.q = op.getQ(), values.k = op.getK(), values.v = op.getV();
    values.lengths = op.getKeyLengths(), values.mask = op.getKeyMask();
    values.queryOffsets = op.getCuSeqlensQ();
    values.keyOffsets = op.getCuSeqlensK();
    values.slopes = op.getAlibiSlopes();
    values.packed = static_cast<bool>(values.queryOffsets);
    values.lse = op.getLse(), values.terms = op.getTerms();
    values.dOutput = op.getDOutput();
    values.dk = op.getDk(), values.dv = op.getDv();
    values.dqAccum = op.getDqAccum();
    values.scale = op.getScaleAttr(), values.softcap = op.getSoftcapAttr();
    values.causal = op.getCausal();
    values.left = bound(op.getWindowLeft());
    values.right = bound(op.getWindowRight());
    // Views promising 16-byte rows are copied without an element-wise path,
    // and only they can be TMA's.
    values.aligned = op->hasAttr(RudnnDialect::kAlignedViewsAttrName);
    values.hopper = op.getWgmma();
    values.keys = static_cast<int64_t>(*op.getBlockRows());
    if (op.getDeterministic())
      values.blocks = static_cast<int64_t>(*op.getBlocks());
    return values;
  }

  /// A tensor of the inputs' type: q, or o (the row terms), or dq (its
  /// conversion).
  Value input() const { return q ? q : o ? o : dq; }

  /// "f32_d64_e64_causal_window16_inf_keys64_a16".
  std::string specialization() const {
    auto bound = [](int64_t keys) {
      return keys < 0 ? std::string("inf") : std::to_string(keys);
    };
    std::string name = std::string(::rudnn::dtypeName(dtype(q))) + "_d" +
                       std::to_string(lastDim(q)) + "_e" +
                       std::to_string(lastDim(v)) + (causal ? "_causal" : "") +
                       (slopes ? "_alibi" : "");
    if (left >= 0 || right >= 0)
      name += "_window" + bound(left) + "_" + bound(right);
    if (blocks)
      name += "_deterministic";
    if (hopper)
      return name + "_wgmma";
    name += "_keys" + std::to_string(keys);
    return aligned ? name + "_a16" : name;
  }
};

/// Every parameter the backward's kernels read, bound by name (null
/// pointers and zero strides for the tensors this kernel has not; no batch
/// strides when packed), then the dims and scalars.
void bind(KernelBuilder &builder, const BackwardValues &values, bool keyDims) {
  const std::string in = cudaType(dtype(values.input()));
  builder.pointer(values.q, "q", in, false);
  builder.pointer(values.k, "k", in, false);
  builder.pointer(values.v, "v", in, false);
  builder.pointer(values.lengths, "key_lengths", "int", false);
  builder.pointer(values.mask, "key_mask", "unsigned char", false);
  builder.pointer(values.queryOffsets, "cu_seqlens_q", "int", false);
  builder.pointer(values.keyOffsets, "cu_seqlens_k", "int", false);
  builder.pointer(values.slopes, "alibi_slopes", "float", false);
  builder.pointer(values.o, "o", in, false);
  builder.pointer(values.lse, "lse", "float", false);
  builder.pointer(values.dOutput, "d_output", in, false);
  builder.pointer(values.terms, "terms", "float", !values.q);
  builder.pointer(values.dq, "dq", in, true);
  builder.pointer(values.dk, "dk", in, true);
  builder.pointer(values.dv, "dv", in, true);
  builder.pointer(values.dqAccum, "dq_accum", "float", !values.dq);
  for (auto [value, name] :
       {std::pair{values.q, "q"}, std::pair{values.k, "k"},
        std::pair{values.v, "v"}, std::pair{values.o, "o"},
        std::pair{values.dOutput, "d_o"}, std::pair{values.dq, "dq"},
        std::pair{values.dk, "dk"}, std::pair{values.dv, "dv"},
        std::pair{values.dqAccum, "dq_accum"}}) {
    std::vector<std::string> strides = {std::string(name) + "_t",
                                        std::string(name) + "_h"};
    if (!values.packed)
      strides.insert(strides.begin(), std::string(name) + "_b");
    builder.strides(value, strides);
  }
  builder.strides(values.mask, {"key_mask_b"});
  // [B, H] slopes: the entry's stride ([H] packed: none).
  builder.strides(values.slopes, values.packed
                                     ? std::vector<std::string>{}
                                     : std::vector<std::string>{"alibi_b"});
  if (!values.packed)
    builder.dim(DimRef::of('B'), "batch");
  else if (keyDims) // the entries are the offsets' count less one
    builder.dim(DimRef::of('C'), "offsets");
  builder.dim(DimRef::of('T'), "queries");
  builder.dim(DimRef::of('H'), "heads");
  if (keyDims) { // the row terms' kernel has no key dims
    builder.dim(DimRef::of('S'), "keys");
    builder.dim(DimRef::of('G'), "kv_heads");
  }
  builder.scalar("scale", values.scale ? values.scale.getValueAsDouble() : 1.0);
  builder.scalar("softcap",
                 values.softcap ? values.softcap.getValueAsDouble() : 0.0);
}

/// The parameter block, then `call` with it: rudnn::attention::<call>.
/// Packed: no batch strides, lse and terms [H, T], and the row terms one
/// entry of all T rows.
void writeBody(KernelBuilder &builder, const BackwardValues &values,
               bool keyDims, const std::string &call,
               const std::string &arguments = "p") {
  const std::string in = cudaType(dtype(values.input()));
  auto strides = [&](std::string name) {
    return "{" + (values.packed ? std::string("0") : name + "_b") + ", " +
           name + "_t, " + name + "_h}";
  };
  const char *batch = !values.packed ? "batch" : keyDims ? "offsets - 1" : "1";
  std::ostringstream &body = builder.body();
  body << "  const rudnn::attention::ForwardParams<" << in << "> f = {\n"
       << "      q, k, v, key_lengths, key_mask, cu_seqlens_q, cu_seqlens_k,\n"
       << "      const_cast<" << in << " *>(o), const_cast<float *>(lse),\n"
       << "      " << strides("q") << ", " << strides("k") << ", "
       << strides("v") << ",\n      " << strides("o") << ", key_mask_b, "
       << (values.packed ? "0" : "(long long)heads * queries")
       << ",\n      queries, " << batch << ", queries, "
       << (keyDims ? "keys" : "0") << ", heads, "
       << (keyDims ? "kv_heads" : "1") << ", scale, softcap, " << values.left
       << ", " << values.right << ", nullptr, nullptr, alibi_slopes, "
       << (values.packed ? "0" : "alibi_b") << "};\n"
       << "  const rudnn::attention::BackwardParams<" << in << "> p = {\n"
       << "      f, d_output, " << strides("d_o")
       << ", const_cast<float *>(terms),\n      dq, dk, dv,\n      "
       << strides("dq") << ", " << strides("dk") << ", " << strides("dv")
       << ",\n      const_cast<float *>(dq_accum), " << strides("dq_accum")
       << "};\n"
       << "  rudnn::attention::" << call << "(" << arguments << ");\n";
}

/// The gradient kernel's entry, parameters, body and launch: on Hopper 384
/// threads over tiles of 128 keys (64 past D = E = 128), TMA maps for the
/// operands; on sm_80 two threads a key over tiles of `keys`; either over
/// (tiles, B·G or G when packed), or deterministic a cooperative grid of
/// `blocks` with a semaphore a query tile (a 64-column block of one on
/// Hopper) in zeroed scratch.
LogicalResult emitGradients(Operation *op, KernelBuilder &builder,
                            const BackwardValues &values) {
  builder.setEntry(
      std::string(values.packed ? "attention_varlen_bwd_" : "attention_bwd_") +
      "gradients_" + values.specialization());
  const std::string in = cudaType(dtype(values.q));
  const int64_t D = lastDim(values.q), E = lastDim(values.v),
                inputBytes = elementBytes(values.q);
  // Hopper: its layout plus the 1024 bytes that align it.
  const int64_t sharedBytes =
      values.hopper
          ? hopperAttentionBackwardSharedBytes(D, E)
          : attentionGradientSharedBytes(D, E, inputBytes, values.keys);
  const std::string dims =
      in + ", " + std::to_string(D) + ", " + std::to_string(E);
  builder.preamble() << "// The attention backward's dk, dv and dq's "
                        "accumulator.\n#include \"rudnn/attention.cuh\"\n\n"
                     << "// The host sizes the shared memory from the same "
                        "layout.\nstatic_assert(sizeof(rudnn::attention::"
                     << (values.hopper ? "HopperBackwardShared<" + dims + ">"
                                       : "GradientShared<" + dims + ", " +
                                             std::to_string(values.keys) + ">")
                     << ") " << (values.hopper ? "+ 1024 " : "")
                     << "== " << sharedBytes << ");\n";
  bind(builder, values, /*keyDims=*/true);
  if (values.hopper) {
    // Innermost first: (dim, time, head, batch), packed (dim, row, head);
    // boxes of 64 columns (128-byte rows) by the resident rows or a step's.
    const std::vector<unsigned> order = values.packed
                                            ? std::vector<unsigned>{2, 0, 1}
                                            : std::vector<unsigned>{3, 1, 2, 0};
    auto box = [&](bool resident) {
      std::vector<int64_t> sizes = {
          64, resident ? values.keys : kHopperAttentionBackwardStep, 1};
      if (!values.packed)
        sizes.push_back(1);
      return sizes;
    };
    builder.tensorMap(values.q, "q_map", order, box(false));
    builder.tensorMap(values.k, "k_map", order, box(true));
    builder.tensorMap(values.v, "v_map", order, box(true));
    builder.tensorMap(values.dOutput, "d_o_map", order, box(false));
    builder.setArchSpecific();
    builder.setLaunchBounds(384, 1);
  }
  // Deterministic: a semaphore a query tile of `step` rows (on Hopper one a
  // 64-column block of it), padded (B, H, tiles), packed (H, tiles + C).
  if (values.blocks) {
    const int64_t step = values.hopper
                             ? kHopperAttentionBackwardStep
                             : attentionGradientStep(D, E, inputBytes);
    const int64_t perTile = values.hopper ? (D + 63) / 64 : 1;
    const DimRef tiles =
        DimRef::ceilDiv('T', step, "query_tiles" + std::to_string(step));
    SmallVector<DimRef, 4> shape = {DimRef::of('H'), tiles};
    if (values.packed)
      shape.back() = DimRef::sum({tiles, DimRef::of('C')},
                                 "query_slots" + std::to_string(step));
    else
      shape.insert(shape.begin(), DimRef::of('B'));
    builder.zeroedScratch("dq_semaphores", "int", SizeRef{4 * perTile, shape});
  }
  if (!builder.conflict().empty())
    return op->emitOpError()
           << "cannot emit its kernel: " << builder.conflict();
  const std::string flags = std::string(values.causal ? "true" : "false") +
                            ", " + (values.packed ? "true" : "false");
  // Deterministic, then whether the scores are ALiBi-biased.
  const std::string modes = std::string(values.blocks ? "true" : "false") +
                            (values.slopes ? ", true" : ", false");
  const std::string semaphores = values.blocks ? ", dq_semaphores" : "";
  if (values.hopper)
    writeBody(builder, values, true,
              "gradients_hopper<" + dims + ", " + flags + ", " + modes + ">",
              "p, q_map, k_map, v_map, d_o_map" + semaphores);
  else
    writeBody(builder, values, true,
              "gradients<" + dims + ", " + std::to_string(values.keys) + ", " +
                  flags + ", rudnn::tile::Alignment::" +
                  (values.aligned ? "Aligned" : "Checked") + ", " + modes + ">",
              "p" + semaphores);
  KernelLaunch &launch = builder.launch();
  // Hopper: a producer and two consumer warpgroups; sm_80: a warp a 16 keys.
  launch.threads = values.hopper ? 384 : 2 * values.keys;
  launch.sharedBytes = sharedBytes;
  launch.grid[0] =
      SizeRef{1,
              {DimRef::ceilDiv('S', values.keys,
                               "key_tiles" + std::to_string(values.keys))}};
  launch.grid[1] = headGrid(values.packed, 'G');
  launch.grid[2] = SizeRef{1, {}};
  // Deterministic: a persistent grid, every block resident (the blocks
  // wait on each other).
  if (values.blocks) {
    launch.grid[0] = SizeRef{values.blocks, {}}, launch.grid[1] = {1, {}};
    launch.cooperative = true;
  }
  return success();
}

/// A result with `value`'s [B, rows, heads, width] layout ([rows, heads,
/// width] when packed).
ResultStorage sequenceStorage(Value value, char rows, char heads,
                              std::string name) {
  SmallVector<DimRef, 4> dims = {DimRef::of(rows), DimRef::of(heads)};
  if (cast<ShapedType>(value.getType()).getRank() == 4)
    dims.insert(dims.begin(), DimRef::of('B'));
  return ResultStorage::own({elementBytes(value) * lastDim(value), dims},
                            std::move(name));
}

/// A kernel of a warp a row over every (entry, head, query) (packed
/// batches one entry of all T rows): entry point `stem`_<type>_<suffix>,
/// the device function `call` on `values` (its inputs' type the kernel's).
LogicalResult emitRowKernel(Operation *op, KernelBuilder &builder,
                            const BackwardValues &values, StringRef stem,
                            const std::string &suffix, StringRef what,
                            const std::string &call) {
  builder.setEntry(
      std::string(values.packed ? "attention_varlen_bwd_" : "attention_bwd_") +
      stem.str() + "_" + ::rudnn::dtypeName(dtype(values.input())) + "_" +
      suffix);
  builder.preamble() << "// The attention backward's " << what.str() << ".\n"
                     << "#include \"rudnn/attention.cuh\"\n";
  bind(builder, values, /*keyDims=*/false);
  if (!builder.conflict().empty())
    return op->emitOpError()
           << "cannot emit its kernel: " << builder.conflict();
  writeBody(builder, values, false, call);
  KernelLaunch &launch = builder.launch();
  launch.threads = 128; // a warp a row
  launch.grid[0] = SizeRef{1, {DimRef::ceilDiv('T', 4, "query_quads")}};
  launch.grid[1] = headGrid(values.packed, 'H');
  launch.grid[2] = SizeRef{1, {}};
  return success();
}

template <typename Op, typename Model>
struct BackwardPrimitive
    : public PrimitiveOpInterface::ExternalModel<Model, Op> {
  StringRef getKernelGroup(Operation *) const { return Model::kGroup; }
};

struct RowTermsModel : BackwardPrimitive<AttentionRowTermsOp, RowTermsModel> {
  static constexpr llvm::StringLiteral kGroup = "attention.row_terms";

  /// [B, H, T] f32 in the plan's workspace ([H, T] when packed).
  ResultStorage getResultStorage(Operation *op, unsigned) const {
    SmallVector<DimRef, 4> dims = {DimRef::of('H'), DimRef::of('T')};
    if (!isPacked(cast<AttentionRowTermsOp>(op).getO()))
      dims.insert(dims.begin(), DimRef::of('B'));
    return ResultStorage::own({4, dims}, "terms");
  }
  std::optional<DimRef> getResultDim(Operation *op, unsigned,
                                     unsigned dim) const {
    static constexpr unsigned kPadded[] = {0, 2, 1}, kPacked[] = {1, 0};
    Value o = cast<AttentionRowTermsOp>(op).getO();
    return DimRef::of(o, isPacked(o) ? kPacked[dim] : kPadded[dim]);
  }
  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto rows = cast<AttentionRowTermsOp>(op);
    BackwardValues values;
    values.o = rows.getO();
    values.dOutput = rows.getDOutput();
    values.terms = rows.getTerms();
    values.packed = isPacked(values.o);
    const std::string E = std::to_string(lastDim(values.o));
    return emitRowKernel(op, builder, values, "terms", "e" + E, "row terms",
                         "row_terms<" + std::string(cudaType(dtype(values.o))) +
                             ", " + E + ">");
  }
};

struct GradientsModel
    : BackwardPrimitive<AttentionGradientsOp, GradientsModel> {
  static constexpr llvm::StringLiteral kGroup = "attention.gradients";

  ResultStorage getResultStorage(Operation *op, unsigned index) const {
    auto gradients = cast<AttentionGradientsOp>(op);
    if (index == 2) { // f32 in q's layout, zeroed: the kernel adds to it
      Value q = gradients.getQ();
      SmallVector<DimRef, 4> dims = {DimRef::of('T'), DimRef::of('H')};
      if (!isPacked(q))
        dims.insert(dims.begin(), DimRef::of('B'));
      return ResultStorage::own({4 * lastDim(q), dims}, "dq_accum")
          .startingAtZero();
    }
    return index == 0 ? sequenceStorage(gradients.getDk(), 'S', 'G', "dk")
                      : sequenceStorage(gradients.getDv(), 'S', 'G', "dv");
  }
  std::optional<DimRef> getResultDim(Operation *op, unsigned index,
                                     unsigned dim) const {
    auto gradients = cast<AttentionGradientsOp>(op);
    Value of[] = {gradients.getK(), gradients.getV(), gradients.getQ()};
    return DimRef::of(of[index], dim);
  }
  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto gradients = cast<AttentionGradientsOp>(op);
    const BackwardValues values = BackwardValues::of(gradients);
    if (values.hopper && !values.aligned)
      return op->emitOpError() << "loads its operands with TMA: its views "
                                  "must promise 16-byte rows";
    if (failed(emitGradients(op, builder, values)))
      return failure();
    model(builder.launch(), values, gradients.getDeterministic());
    return success();
  }

private:
  /// The cost model. GEMM FLOPs a (query, key) pair the kernel issues: S,
  /// dP, dV, dK and dQ, 2·(3D + 2E), and S again where sm_80 takes dV and
  /// dK in two passes; every pair the bounds allow (half when causal, the
  /// window's width when both sides are bounded; lengths and masks not
  /// discounted), none for packed batches (their work is in the offsets).
  static void model(KernelLaunch &launch, const BackwardValues &values,
                    bool deterministic) {
    const int64_t D = lastDim(values.q), E = lastDim(values.v),
                  inputBytes = elementBytes(values.q);
    const bool split = !values.hopper && attentionGradientSplit(D, E);
    const int64_t pairFlops = 2 * (3 * D + 2 * E) + (split ? 2 * D : 0);
    // The key side once: K and V read, dK and dV written.
    auto rowsOf = [&](char rows, char heads) {
      SmallVector<DimRef, 4> dims = {DimRef::of(rows), DimRef::of(heads)};
      if (!values.packed)
        dims.insert(dims.begin(), DimRef::of('B'));
      return dims;
    };
    launch.memoryBytes = {2 * (D + E) * inputBytes, rowsOf('S', 'G')};
    SmallVector<DimRef, 4> queries = rowsOf('T', 'H');
    std::swap(queries[queries.size() - 2], queries.back()); // (B,) H, T
    if (values.left >= 0 && values.right >= 0) {
      launch.flops = {pairFlops * (values.left + values.right + 1), queries};
    } else if (!values.packed) {
      queries.push_back(DimRef::of('S'));
      launch.flops = {values.causal ? pairFlops / 2 : pairFlops, queries};
    }
    // The query side at least once: Q and dO read, lse and the row term
    // read, dq's f32 sum written (its reductions land in L2).
    launch.streamedBytes = {(D + E) * inputBytes + 8 + 4 * D, rowsOf('T', 'H')};
    // One exponential a pair (two where S is formed twice).
    launch.flopsPerExponential = split ? pairFlops / 2 : pairFlops;
    // dQ: each block adds its keys' share of a query row, 4·D bytes, to
    // the f32 sum in L2, with reductions; deterministic, with a load and a
    // store.
    launch.flopsPerReducedByte = std::max<int64_t>(
        1, values.keys * pairFlops / ((deterministic ? 8 : 4) * D));
    if (!values.hopper)
      return;
    // Hopper, per warpgroup step (dims in 64-column blocks), 64 keys and
    // 64 queries: Sᵀ and dPᵀ read K, Q, V and dO, dV and dK read dO and Q,
    // and half of dQ's dS (64 x 128) and K (128 x D) falls to each
    // warpgroup. Wide (the warpgroups share 64 keys), 64 keys and 32
    // queries: Sᵀ and dPᵀ read K, V and half of Q and dO, dV and dK the
    // staged P and dS and half of dO's and Q's columns, and half of dQ's
    // dS (64 x 64) and K (64 x D).
    const int64_t d = (D + 63) / 64 * 64, e = (E + 63) / 64 * 64;
    const bool wide = values.keys != kHopperAttentionBackwardRows;
    const int64_t elements = wide ? 192 * d + 128 * e + 2 * 64 * 64
                                  : 64 * (5 * d + 3 * e),
                  flops = (wide ? 64 * 32 : 64 * 64) * 2 * (3 * d + 2 * e);
    launch.flopsPerSharedByte = flops / (2 * elements);
  }
};

struct DqConvertModel
    : BackwardPrimitive<AttentionDqConvertOp, DqConvertModel> {
  static constexpr llvm::StringLiteral kGroup = "attention.dq_convert";

  ResultStorage getResultStorage(Operation *op, unsigned) const {
    return sequenceStorage(cast<AttentionDqConvertOp>(op).getDq(), 'T', 'H',
                           "dq");
  }
  std::optional<DimRef> getResultDim(Operation *op, unsigned,
                                     unsigned dim) const {
    return DimRef::of(cast<AttentionDqConvertOp>(op).getDqAccum(), dim);
  }
  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto convert = cast<AttentionDqConvertOp>(op);
    BackwardValues values;
    values.dqAccum = convert.getDqAccum();
    values.dq = convert.getDq();
    values.packed = isPacked(values.dq);
    const int64_t D = lastDim(values.dq);
    if (failed(emitRowKernel(op, builder, values, "dq", "d" + std::to_string(D),
                             "dq from its f32 accumulator",
                             "convert_query_gradients<" +
                                 std::string(cudaType(dtype(values.dq))) +
                                 ", " + std::to_string(D) + ">")))
      return failure();
    // Each row's f32 sum read, dq written.
    SmallVector<DimRef, 4> rows = {DimRef::of('T'), DimRef::of('H')};
    if (!values.packed)
      rows.insert(rows.begin(), DimRef::of('B'));
    builder.launch().memoryBytes = {(4 + elementBytes(values.dq)) * D, rows};
    return success();
  }
};

} // namespace

void ::rudnn::codegen::registerAttentionBackwardPrimitives(
    DialectRegistry &registry) {
  attachPrimitives<Primitive<AttentionRowTermsOp, RowTermsModel>,
                   Primitive<AttentionGradientsOp, GradientsModel>,
                   Primitive<AttentionDqConvertOp, DqConvertModel>>(registry);
}
