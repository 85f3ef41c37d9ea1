//===- LstmPrimitives.cpp - A recurrent layer's primitives as kernels -----===//
//
// The primitive interface of rudnn.rnn_projection and rudnn.rnn_recurrence
// (LSTM and GRU layers, by `cell`): a GEMM kernel per layer writing the
// projected gates (and laying out the initial state), then the recurrence:
// a cooperative grid of one block an SM running every step, or a kernel of
// one step the plan launches T times. The recurrences of a stack share h_n
// and c_n, each writing its slices.
//
//===----------------------------------------------------------------------===//

#include "codegen/Emit/KernelBuilder.h"
#include "codegen/Emit/KernelEmitInterface.h"
#include "codegen/Emit/Primitives.h"
#include "codegen/Emit/lstm/LstmBindings.h"
#include "dialects/IR/RudnnOps.h"
#include "dialects/IR/lstm/LstmInterfaces.h"
#include "dialects/IR/lstm/LstmPolicy.h"

using namespace mlir;
using namespace mlir::rudnn;
using namespace ::rudnn::codegen;
using namespace ::rudnn::codegen::lstm;

namespace {

constexpr llvm::StringLiteral kProjectionGroup = "rnn.projection";
constexpr llvm::StringLiteral kRecurrenceGroup = "rnn.recurrence";
/// lstm::kProjectionCols, kProjectionThreads; tile::WarpgroupGemm's.
constexpr int64_t kProjectionCols = 64, kProjectionThreads = 128;
constexpr int64_t kWgmmaProjectionRows = 128, kWgmmaProjectionCols = 128,
                  kWgmmaProjectionThreads = 256;
/// Steps a projection block accounts for in the grid.
constexpr int64_t kProjectionStepsABlock = 8;

struct ProjectionModel
    : PrimitiveOpInterface::ExternalModel<ProjectionModel, RnnProjectionOp> {
  StringRef getKernelGroup(Operation *) const { return kProjectionGroup; }

  ResultStorage getResultStorage(Operation *op, unsigned index) const {
    auto projection = cast<RnnProjectionOp>(op);
    const int64_t directions = projection.getWeights().size(),
                  hidden = projection.getHidden(),
                  gates = mlir::rudnn::lstm::cellGates(projection.getCell());
    if (index == 0)
      return ResultStorage::own(
          {4 * directions * gates * hidden, {DimRef::of('T'), DimRef::of('B')}},
          "gates");
    // After the states, the recurrence's grid barrier (lstm::StateLayout).
    return ResultStorage::own(
        {4 * (directions * 3 * hidden + 4), {DimRef::of('B')}}, "lstm_state");
  }

  /// gates [D, T, B, G·H], state [D, 3, B, H]: T and B of the input.
  std::optional<DimRef> getResultDim(Operation *op, unsigned index,
                                     unsigned dim) const {
    auto projection = cast<RnnProjectionOp>(op);
    const bool batchFirst = projection.getBatchFirst();
    const unsigned time = batchFirst ? 1 : 0, batch = batchFirst ? 0 : 1;
    if (index == 0 && dim == 1)
      return DimRef::of(projection.getInput(), time);
    if ((index == 0 || index == 1) && dim == 2)
      return DimRef::of(projection.getInput(), batch);
    return std::nullopt;
  }

  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto projection = cast<RnnProjectionOp>(op);
    Value input = projection.getInput();
    const int64_t directions = projection.getWeights().size(),
                  hidden = projection.getHidden(), features = lastDim(input);
    const bool biases = !projection.getBiases().empty();
    const std::string in = cudaType(dtype(input));
    const std::string cell = projection.getCell().str();
    const int64_t gates = mlir::rudnn::lstm::cellGates(cell);
    const bool wgmma = projection.getWgmma();
    const bool tf32 = projection.getTf32() && elementBytes(input) == 4;
    builder.setEntry(cell + "_projection_" +
                     std::string(::rudnn::dtypeName(dtype(input))) + "_i" +
                     std::to_string(features) + "_h" + std::to_string(hidden) +
                     "_d" + std::to_string(directions) +
                     (wgmma ? "_wgmma" : "") + (tf32 ? "_tf32" : ""));
    builder.preamble() << "// " << (cell == "gru" ? "A GRU" : "An LSTM")
                       << " layer's input projection.\n"
                       << "#include \"rudnn/lstm.cuh\"\n\n";
    if (wgmma)
      builder.preamble() << "using Gemm = rudnn::tile::WarpgroupGemm<" << in
                         << ">;\nstatic_assert(Gemm::kRows == "
                         << kWgmmaProjectionRows
                         << " && Gemm::kCols == " << kWgmmaProjectionCols
                         << " && Gemm::kThreads == " << kWgmmaProjectionThreads
                         << " && Gemm::kSharedBytes == "
                         << kLstmWgmmaProjectionSharedBytes << ");\n";
    else
      builder.preamble() << "static_assert(rudnn::lstm::kProjectionCols == "
                         << kProjectionCols
                         << " && rudnn::lstm::kProjectionThreads == "
                         << kProjectionThreads << ");\n";
    builder.pointer(input, "input", in, false);
    const std::string inputAt =
        bindSequence(builder, input, "input", projection.getBatchFirst());
    const std::string weights =
        bindDirections(builder, projection.getWeights(), "weight", in);
    const std::string rows =
        bindRows(builder, projection.getWeights(), "weight");
    SmallVector<Value, 2> biasIh, biasHh;
    for (int64_t d = 0; biases && d < directions; ++d) {
      biasIh.push_back(projection.getBiases()[2 * d]);
      biasHh.push_back(projection.getBiases()[2 * d + 1]);
    }
    const std::string ih = bindDirections(builder, biasIh, "bias_ih", in),
                      hh = bindDirections(builder, biasHh, "bias_hh", in);
    builder.pointer(projection.getH0(), "h0", in, false);
    builder.pointer(projection.getC0(), "c0", in, false);
    const std::string h0At = bindStates(builder, projection.getH0(), "h0"),
                      c0At = bindStates(builder, projection.getC0(), "c0");
    builder.pointer(projection.getGates(), "gates", "float", true);
    builder.pointer(projection.getState(), "state", "float", true);
    builder.dim(DimRef::of('T'), "steps");
    builder.dim(DimRef::of('B'), "batch");
    // A parameter: every layer of one input size runs the same kernel.
    builder.scalar("layer", static_cast<double>(projection.getLayer()));
    if (!builder.conflict().empty())
      return op->emitOpError()
             << "cannot emit its kernel: " << builder.conflict();
    builder.body() << "  const rudnn::lstm::ProjectionParams<" << in
                   << "> p = {\n      input, " << inputAt << ", " << weights
                   << ", " << rows << ",\n      " << ih << ", " << hh
                   << ", h0, c0, " << h0At << ", " << c0At
                   << ",\n      gates, state, steps, batch, "
                      "static_cast<int>(layer)};\n"
                   << "  rudnn::lstm::project_inputs"
                   << (wgmma ? "_wgmma<" : "<") << in << ", " << features
                   << ", " << hidden << ", " << directions << ", "
                   << cellType(cell) << (tf32 && !wgmma ? ", true" : "")
                   << ">(p);\n";
    builder.launch().tf32 = tf32;
    const int64_t cols = wgmma ? kWgmmaProjectionCols : kProjectionCols;
    builder.launch().grid[1] = SizeRef{(gates * hidden + cols - 1) / cols, {}};
    if (wgmma) {
      builder.launch().threads = kWgmmaProjectionThreads;
      builder.launch().sharedBytes = kLstmWgmmaProjectionSharedBytes;
      // ⌈T/16⌉·⌈B/8⌉ blocks, at least the ⌈T·B/128⌉ row tiles: about one
      // each.
      builder.launch().grid[0] = SizeRef{
          1,
          {DimRef::ceilDiv('T', kWgmmaProjectionRows / 8, "step_tiles16"),
           DimRef::ceilDiv('B', 8, "batch_tiles")}};
      builder.setArchSpecific();
      builder.setLaunchBounds(kWgmmaProjectionThreads, 1);
    } else {
      builder.launch().threads = kProjectionThreads;
      // ⌈T/8⌉ blocks take the ⌈T·B/64⌉ row tiles in turn: one each at B = 8.
      builder.launch().grid[0] = SizeRef{
          1, {DimRef::ceilDiv('T', kProjectionStepsABlock, "step_tiles")}};
    }
    builder.launch().grid[2] = SizeRef{directions, {}};
    // Reads the input and weights, writes the gates: T·B·4H·D fp32.
    const int64_t bytes = elementBytes(input);
    builder.launch().memoryBytes =
        SizeRef{directions * (features * bytes + 4 * gates * hidden),
                {DimRef::of('T'), DimRef::of('B')}};
    builder.launch().flops = SizeRef{2 * directions * gates * hidden * features,
                                     {DimRef::of('T'), DimRef::of('B')}};
    // The mma.sync tiles are square.
    modelTileTraffic(builder.launch(), wgmma ? kWgmmaProjectionRows : cols,
                     cols, bytes, wgmma);
    return success();
  }
};

struct RecurrenceModel
    : PrimitiveOpInterface::ExternalModel<RecurrenceModel, RnnRecurrenceOp> {
  StringRef getKernelGroup(Operation *) const { return kRecurrenceGroup; }

  ResultStorage getResultStorage(Operation *op, unsigned index) const {
    auto recurrence = cast<RnnRecurrenceOp>(op);
    const int64_t bytes = elementBytes(recurrence.getOut());
    if (index == 0)
      return ResultStorage::own({bytes * lastDim(recurrence.getOut()),
                                 {DimRef::of('T'), DimRef::of('B')}},
                                "layer_out");
    // The stack's h_n, c_n and saved tensors: the first layer's, each
    // later one's slices written into the same memory.
    if (index >= 3) {
      const unsigned which = index - 3;
      if (!recurrence.getSavedIn().empty())
        return ResultStorage::sharedWith(recurrence.getSavedIn()[which]);
      auto type =
          cast<RankedTensorType>(recurrence.getSaved()[which].getType());
      const int64_t width =
          type.getDimSize(0) * type.getDimSize(3) * (which == 0 ? bytes : 4);
      return ResultStorage::own({width, {DimRef::of('T'), DimRef::of('B')}},
                                which == 0   ? "saved_hidden"
                                : which == 1 ? "saved_cells"
                                             : "saved_gates");
    }
    if (Value previous =
            index == 1 ? recurrence.getHNIn() : recurrence.getCNIn())
      return ResultStorage::sharedWith(previous);
    auto states = cast<RankedTensorType>(recurrence.getHN().getType());
    return ResultStorage::own(
               {bytes * states.getDimSize(0) * states.getDimSize(2),
                {DimRef::of('B')}},
               index == 1 ? "h_n" : "c_n")
        .orNull();
  }

  /// out [T, B, E] (or [B, T, E]), h_n and c_n [L·D, B, H]: T and B of the
  /// gates [D, T, B, 4H].
  std::optional<DimRef> getResultDim(Operation *op, unsigned index,
                                     unsigned dim) const {
    auto recurrence = cast<RnnRecurrenceOp>(op);
    Value gates = recurrence.getGates();
    const bool batchFirst = recurrence.getBatchFirst();
    if (index == 0 && dim < 2)
      return DimRef::of(gates, (dim == 0) != batchFirst ? 1 : 2);
    if (index >= 3 && (dim == 1 || dim == 2)) // saved [·, T, B, ·]
      return DimRef::of(gates, dim);
    if (index > 0 && index < 3 && dim == 1)
      return DimRef::of(gates, 2);
    return std::nullopt;
  }

  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto recurrence = cast<RnnRecurrenceOp>(op);
    Value out = recurrence.getOut();
    const int64_t directions = recurrence.getWeights().size(),
                  hidden = lastDim(recurrence.getState()),
                  units = recurrence.getUnits();
    const bool onChip = recurrence.getWeightsOnChip(),
               perStep = recurrence.getPerStep(),
               // Only rows on chip meet the states on tensor cores.
        tf32 = recurrence.getTf32() && elementBytes(out) == 4 && onChip;
    const std::string in = cudaType(dtype(out));
    const std::string cell = recurrence.getCell().str();
    const int64_t gates = mlir::rudnn::lstm::cellGates(cell);
    const int64_t shared = lstmRecurrenceSharedBytes(
        hidden, units, elementBytes(out), onChip, gates, tf32);
    builder.setEntry(
        cell + "_recurrence_" + std::string(::rudnn::dtypeName(dtype(out))) +
        "_h" + std::to_string(hidden) + "_d" + std::to_string(directions) +
        "_u" + std::to_string(units) + (perStep ? "_step" : "") +
        (onChip ? "_onchip" : "_streamed") + (tf32 ? "_tf32" : ""));
    const char *layer = cell == "gru" ? "a GRU" : "an LSTM";
    builder.preamble() << (perStep ? "// One step of " : "// ") << layer
                       << " layer's recurrence"
                       << (perStep ? "" : ", persistent") << ".\n";
    if (auto policy = recurrence->getAttrOfType<StringAttr>("policy"))
      builder.preamble() << "// " << policy.getValue().str() << ".\n";
    builder.preamble() << "#include \"rudnn/lstm.cuh\"\n\n"
                       << "// The host sizes the shared memory alike.\n"
                       << "static_assert(rudnn::lstm::RecurrenceShared<" << in
                       << ", " << hidden << ", " << units << ", "
                       << (onChip ? "true" : "false") << ", " << cellType(cell)
                       << (tf32 ? ", true" : "") << ">::kBytes == " << shared
                       << ");\n"
                       << "static_assert(rudnn::lstm::kRecurrenceThreads == "
                       << kLstmRecurrenceThreads << ");\n";
    builder.pointer(recurrence.getGates(), "gates", "float", false);
    const std::string weights =
        bindDirections(builder, recurrence.getWeights(), "weight", in);
    const std::string rows =
        bindRows(builder, recurrence.getWeights(), "weight");
    const std::string biases =
        bindDirections(builder, recurrence.getBiases(), "bias_hh", in);
    builder.pointer(recurrence.getLengths(), "lengths", "int", false);
    builder.pointer(recurrence.getState(), "state", "float", true);
    builder.pointer(out, "out", in, true);
    const std::string outAt =
        bindSequence(builder, out, "out", recurrence.getBatchFirst());
    builder.pointer(recurrence.getHN(), "h_n", in, true);
    builder.pointer(recurrence.getCN(), "c_n", in, true);
    const std::string hNAt = bindStates(builder, recurrence.getHN(), "h_n"),
                      cNAt = bindStates(builder, recurrence.getCN(), "c_n");
    auto saved = [&](unsigned which) {
      return which < recurrence.getSaved().size() ? recurrence.getSaved()[which]
                                                  : Value();
    };
    // The LSTM saves hidden, cells (and gates); the GRU hidden and gates.
    const bool gru = cell == "gru";
    builder.pointer(saved(0), "saved_hidden", in, true);
    builder.pointer(gru ? Value() : saved(1), "saved_cells", "float", true);
    builder.pointer(saved(gru ? 1 : 2), "saved_gates", "float", true);
    builder.dim(DimRef::of('T'), "steps");
    builder.dim(DimRef::of('B'), "batch");
    // A parameter: every layer runs the same kernel.
    builder.scalar("layer", static_cast<double>(recurrence.getLayer()));
    if (!builder.conflict().empty())
      return op->emitOpError()
             << "cannot emit its kernel: " << builder.conflict();
    builder.body() << "  const rudnn::lstm::RecurrenceParams<" << in
                   << "> p = {\n      gates, " << weights << ", " << rows
                   << ", " << biases << ", lengths, state,\n      out, "
                   << outAt << ", h_n, c_n, " << hNAt << ", " << cNAt
                   << ",\n      saved_hidden, saved_cells, saved_gates, steps, "
                      "batch,\n      static_cast<int>(layer)};\n";
    builder.launch().threads = kLstmRecurrenceThreads;
    builder.launch().sharedBytes = shared;
    builder.launch().tf32 = tf32;
    // Reads the projected gates (fp32), writes the outputs; the products
    // W_hh·h of every step and entry. (W_hh itself and the hidden states
    // exchanged through L2 are left out: a lower bound. The steps'
    // barriers or launches, which no roofline sees, bound small batches.)
    SmallVector<DimRef, 4> perLaunch = {DimRef::of('B')};
    if (perStep) {
      const std::string step = builder.repeatOver(DimRef::of('T'), "step");
      builder.body() << "  rudnn::lstm::recur_step<" << in << ", " << hidden
                     << ", " << directions << ", " << units << ", "
                     << (onChip ? "true" : "false") << ", " << cellType(cell)
                     << (tf32 ? ", true" : "") << ">(p, " << step << ");\n";
    } else {
      builder.body() << "  rudnn::lstm::recur<" << in << ", " << hidden << ", "
                     << directions << ", " << units << ", "
                     << (onChip ? "true" : "false") << ", " << cellType(cell)
                     << (tf32 ? ", true" : "") << ">(p);\n";
      builder.launch().cooperative = true;
      perLaunch.push_back(DimRef::of('T'));
    }
    builder.launch().memoryBytes = SizeRef{
        directions * hidden * (4 * gates + elementBytes(out)), perLaunch};
    builder.launch().flops =
        SizeRef{2 * directions * gates * hidden * hidden, perLaunch};
    // The serial bound: each step a block stages every entry's previous
    // hidden state from L2 (16-bit weights on chip: the layer's outputs,
    // in its type; else the fp32 state), reads its gates and writes its
    // states, and reads its W_hh rows: off chip once each pass of entries
    // (⌈B / 8⌉ passes, a whole pass's rows however few entries it holds),
    // on chip once a launch (a step with `per_step`, else never again).
    const int64_t bytes = elementBytes(out);
    const int64_t stagedBytes = onChip && bytes == 2 ? 2 : 4;
    const int64_t rowBytes = gates * units * hidden * bytes;
    builder.launch().serialSteps =
        perStep ? SizeRef{1, {}} : SizeRef{1, {DimRef::of('T')}};
    builder.launch().stepBytes =
        SizeRef{stagedBytes * hidden + units * (4 * gates + 12 + bytes),
                {DimRef::of('B')}};
    if (!onChip)
      builder.launch().stepFixedBytes =
          SizeRef{rowBytes,
                  {DimRef::ceilDiv('B', lstmRecurrenceBatch(bytes, false),
                                   "recurrence_passes")}};
    else if (perStep)
      builder.launch().stepFixedBytes = SizeRef{rowBytes, {}};
    builder.launch().stepFlops =
        SizeRef{2 * gates * units * hidden, {DimRef::of('B')}};
    builder.launch().grid[0] =
        SizeRef{directions * ((hidden + units - 1) / units), {}};
    builder.launch().grid[1] = SizeRef{1, {}};
    builder.launch().grid[2] = SizeRef{1, {}};
    return success();
  }
};

} // namespace

void ::rudnn::codegen::registerLstmPrimitives(DialectRegistry &registry) {
  attachPrimitives<Primitive<RnnProjectionOp, ProjectionModel>,
                   Primitive<RnnRecurrenceOp, RecurrenceModel>>(registry);
  attachBackwardPrimitives(registry);
}
