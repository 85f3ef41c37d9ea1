//===- LstmBackwardPrimitives.cpp - A recurrent layer's backward kernels --===//
//
// The primitive interface of the backward's primitives (LSTM and GRU
// layers, by `cell`): the recurrence backwards (a cooperative grid like the
// forward's, what the cell carries and the grid barrier in zeroed
// scratch), and the weight and input gradients, GEMMs on the tile layer
// over the gate gradients it leaves; the LSTM's gates recomputed where its
// forward saved none.
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
using mlir::rudnn::lstm::cellGates;
using mlir::rudnn::lstm::cellGradientColumns;

namespace {

/// lstm::BlockGemm's tile and block (tile/gemm.cuh).
constexpr int64_t kGemmTile = 64, kGemmThreads = 128;
/// Steps an input-gradient block accounts for in the grid.
constexpr int64_t kStepsABlock = 8;

std::string typeName(Value value) {
  return std::string(::rudnn::dtypeName(dtype(value)));
}

int64_t dimOf(Value value, unsigned dim) {
  return cast<RankedTensorType>(value.getType()).getDimSize(dim);
}

/// The bindings of a layer's input for a GEMM over its rows: `x` (layer 0)
/// or the saved outputs of the layer below (the kernel offsets `hidden`
/// itself). Returns the input's pointer and {time, batch} strides as C++.
std::pair<std::string, std::string>
bindLayerInput(KernelBuilder &builder, Value input, bool stacked,
               bool batchFirst, int64_t width, const std::string &type) {
  if (stacked) {
    builder.body() << "  const " << type
                   << " *layer_input = hidden + static_cast<long long>("
                      "static_cast<int>(layer) - 1) * steps * batch * "
                   << width << ";\n";
    return {"layer_input", "{static_cast<long long>(batch) * " +
                               std::to_string(width) + ", " +
                               std::to_string(width) + "}"};
  }
  builder.pointer(input, "input", type, false);
  return {"input", bindSequence(builder, input, "input", batchFirst)};
}

struct RecomputeGatesModel
    : PrimitiveOpInterface::ExternalModel<RecomputeGatesModel,
                                          LstmRecomputeGatesOp> {
  StringRef getKernelGroup(Operation *) const { return "lstm.recompute"; }

  ResultStorage getResultStorage(Operation *op, unsigned) const {
    Value gates = cast<LstmRecomputeGatesOp>(op).getGates();
    return ResultStorage::own({4 * dimOf(gates, 0) * lastDim(gates),
                               {DimRef::of('T'), DimRef::of('B')}},
                              "gates");
  }

  /// gates [D, T, B, 4H]: T and B of the saved outputs [L, T, B, D·H].
  std::optional<DimRef> getResultDim(Operation *op, unsigned,
                                     unsigned dim) const {
    if (dim == 1 || dim == 2)
      return DimRef::of(cast<LstmRecomputeGatesOp>(op).getHidden(), dim);
    return std::nullopt;
  }

  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto recompute = cast<LstmRecomputeGatesOp>(op);
    Value hidden = recompute.getHidden();
    const int64_t directions = recompute.getWeights().size(),
                  hiddenSize = lastDim(recompute.getRecurrentWeights()[0]);
    const bool stacked = recompute.getLayer() > 0;
    const int64_t width = directions * hiddenSize;
    const int64_t features = stacked ? width : lastDim(recompute.getInput());
    const std::string in = cudaType(dtype(hidden));
    const bool tf32 = recompute.getTf32() && elementBytes(hidden) == 4;
    builder.setEntry("lstm_recompute_gates_" + typeName(hidden) + "_i" +
                     std::to_string(features) + "_h" +
                     std::to_string(hiddenSize) + "_d" +
                     std::to_string(directions) + (stacked ? "_stacked" : "") +
                     (tf32 ? "_tf32" : ""));
    builder.preamble() << "// An LSTM layer's gates again, for its "
                          "backward.\n"
                       << "#include \"rudnn/lstm.cuh\"\n\n";
    builder.pointer(hidden, "hidden", in, false);
    builder.pointer(recompute.getH0(), "h0", in, false);
    const std::string h0At = bindStates(builder, recompute.getH0(), "h0");
    builder.pointer(recompute.getLengths(), "lengths", "int", false);
    const std::string ih =
        bindDirections(builder, recompute.getWeights(), "weight_ih", in);
    const std::string ihRows =
        bindRows(builder, recompute.getWeights(), "weight_ih");
    const std::string hh = bindDirections(
        builder, recompute.getRecurrentWeights(), "weight_hh", in);
    const std::string hhRows =
        bindRows(builder, recompute.getRecurrentWeights(), "weight_hh");
    SmallVector<Value, 2> biasIh, biasHh;
    for (size_t i = 0; i < recompute.getBiases().size(); i += 2) {
      biasIh.push_back(recompute.getBiases()[i]);
      biasHh.push_back(recompute.getBiases()[i + 1]);
    }
    const std::string bih = bindDirections(builder, biasIh, "bias_ih", in),
                      bhh = bindDirections(builder, biasHh, "bias_hh", in);
    builder.pointer(recompute.getGates(), "gates", "float", true);
    builder.dim(DimRef::of('T'), "steps");
    builder.dim(DimRef::of('B'), "batch");
    builder.scalar("layer", static_cast<double>(recompute.getLayer()));
    auto [input, inputAt] =
        bindLayerInput(builder, recompute.getInput(), stacked,
                       recompute.getBatchFirst(), width, in);
    if (!builder.conflict().empty())
      return op->emitOpError()
             << "cannot emit its kernel: " << builder.conflict();
    builder.body()
        << "  const rudnn::lstm::RecomputeParams<" << in << "> p = {\n      "
        << input << ", " << inputAt << ", hidden, h0, " << h0At << ", lengths, "
        << ih << ", " << hh << ",\n      " << ihRows << ", " << hhRows << ", "
        << bih << ", " << bhh
        << ", gates, steps, batch,\n      static_cast<int>(layer)};\n"
        << "  rudnn::lstm::recompute_gates<" << in << ", " << features << ", "
        << hiddenSize << ", " << directions << (tf32 ? ", true" : "")
        << ">(p);\n";
    builder.launch().threads = kGemmThreads;
    builder.launch().tf32 = tf32;
    builder.launch().grid[0] =
        SizeRef{1, {DimRef::ceilDiv('T', kStepsABlock, "step_tiles")}};
    builder.launch().grid[1] =
        SizeRef{(4 * hiddenSize + kGemmTile - 1) / kGemmTile, {}};
    builder.launch().grid[2] = SizeRef{directions, {}};
    // What must cross memory at least: the operands once, the gates
    // written (the blocks' re-reads of shared operand tiles meet in L2).
    const int64_t bytes = elementBytes(hidden);
    builder.launch().memoryBytes =
        SizeRef{(features + hiddenSize) * bytes + directions * 16 * hiddenSize,
                {DimRef::of('T'), DimRef::of('B')}};
    builder.launch().flops =
        SizeRef{2 * directions * 4 * hiddenSize * (features + hiddenSize),
                {DimRef::of('T'), DimRef::of('B')}};
    modelTileTraffic(builder.launch(), kGemmTile, kGemmTile, bytes);
    return success();
  }
};

struct BackwardRecurrenceModel
    : PrimitiveOpInterface::ExternalModel<BackwardRecurrenceModel,
                                          RnnBackwardRecurrenceOp> {
  StringRef getKernelGroup(Operation *) const {
    return "rnn.backward_recurrence";
  }

  ResultStorage getResultStorage(Operation *op, unsigned index) const {
    auto recurrence = cast<RnnBackwardRecurrenceOp>(op);
    const int64_t directions = recurrence.getWeights().size(),
                  hidden = lastDim(recurrence.getWeights()[0]),
                  bytes = elementBytes(recurrence.getDGates());
    if (index == 0)
      return ResultStorage::own(
          {bytes * directions * lastDim(recurrence.getDGates()),
           {DimRef::of('T'), DimRef::of('B')}},
          "d_gates");
    if (index == 1)
      return ResultStorage::own({4 * directions * 4 * hidden, {}}, "d_bias");
    if (Value previous =
            index == 2 ? recurrence.getDH0In() : recurrence.getDC0In())
      return ResultStorage::sharedWith(previous);
    return ResultStorage::own({bytes * dimOf(recurrence.getDH0(), 0) * hidden,
                               {DimRef::of('B')}},
                              index == 2 ? "d_h0" : "d_c0")
        .orNull();
  }

  /// d_gates [D, T, B, C], d_h0 and d_c0 [L·D, B, H]: T and B of the
  /// saved gates [·, T, B, 4H].
  std::optional<DimRef> getResultDim(Operation *op, unsigned index,
                                     unsigned dim) const {
    Value gates = cast<RnnBackwardRecurrenceOp>(op).getGates();
    if (index == 0 && (dim == 1 || dim == 2))
      return DimRef::of(gates, dim);
    if ((index == 2 || index == 3) && dim == 1)
      return DimRef::of(gates, 2);
    return std::nullopt;
  }

  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto recurrence = cast<RnnBackwardRecurrenceOp>(op);
    const std::string cell = recurrence.getCell().str();
    const int64_t directions = recurrence.getWeights().size(),
                  hidden = lastDim(recurrence.getWeights()[0]),
                  units = recurrence.getUnits(),
                  states = dimOf(recurrence.getDH0(), 0),
                  gates = cellGates(cell);
    const bool onChip = recurrence.getWeightsOnChip();
    Value dGates = recurrence.getDGates(), dOut = recurrence.getDOut();
    const std::string in = cudaType(dtype(dGates)),
                      gradient = cudaType(dtype(dOut));
    const int64_t shared = lstmBackwardSharedBytes(
        hidden, units, elementBytes(dGates), onChip, gates);
    builder.setEntry(
        cell + "_backward_" + typeName(dGates) + "_h" + std::to_string(hidden) +
        "_d" + std::to_string(directions) + "_u" + std::to_string(units) +
        (onChip ? "_onchip" : "_streamed") + "_from_" + typeName(dOut));
    builder.preamble() << "// " << (cell == "gru" ? "A GRU" : "An LSTM")
                       << " layer's recurrence backwards, persistent.\n";
    if (auto policy = recurrence->getAttrOfType<StringAttr>("policy"))
      builder.preamble() << "// " << policy.getValue().str() << ".\n";
    builder.preamble() << "#include \"rudnn/lstm.cuh\"\n\n"
                       << "// The host sizes the shared memory alike.\n"
                       << "static_assert(rudnn::lstm::BackwardShared<" << in
                       << ", " << hidden << ", " << units << ", "
                       << (onChip ? "true" : "false") << ", " << cellType(cell)
                       << ">::kBytes == " << shared << ");\n";
    builder.pointer(recurrence.getGates(), "gates", "float", false);
    builder.pointer(recurrence.getCells(), "cells", "float", false);
    builder.pointer(recurrence.getC0(), "c0", in, false);
    const std::string c0At = bindStates(builder, recurrence.getC0(), "c0");
    builder.pointer(recurrence.getHidden(), "hidden", in, false);
    builder.pointer(recurrence.getH0(), "h0", in, false);
    const std::string h0At = bindStates(builder, recurrence.getH0(), "h0");
    builder.pointer(dOut, "d_out", gradient, false);
    const std::string dOutAt =
        bindSequence(builder, dOut, "d_out", recurrence.getBatchFirst());
    builder.pointer(recurrence.getDHN(), "d_h_n", in, false);
    builder.pointer(recurrence.getDCN(), "d_c_n", in, false);
    const std::string dHNAt = bindStates(builder, recurrence.getDHN(), "d_h_n"),
                      dCNAt = bindStates(builder, recurrence.getDCN(), "d_c_n");
    const std::string weights =
        bindDirections(builder, recurrence.getWeights(), "weight", in);
    const std::string rows =
        bindRows(builder, recurrence.getWeights(), "weight");
    builder.pointer(recurrence.getLengths(), "lengths", "int", false);
    const std::string scratch = builder.zeroedScratch(
        "carried", "float",
        SizeRef{4 * (directions * hidden + 4), {DimRef::of('B')}});
    builder.pointer(dGates, "d_gates", in, true);
    builder.pointer(recurrence.getDBias(), "d_bias", "float", true);
    builder.pointer(recurrence.getDH0(), "d_h0", in, true);
    builder.pointer(recurrence.getDC0(), "d_c0", in, true);
    const std::string dH0At = bindStates(builder, recurrence.getDH0(), "d_h0"),
                      dC0At = bindStates(builder, recurrence.getDC0(), "d_c0");
    builder.dim(DimRef::of('T'), "steps");
    builder.dim(DimRef::of('B'), "batch");
    builder.scalar("layer", static_cast<double>(recurrence.getLayer()));
    if (!builder.conflict().empty())
      return op->emitOpError()
             << "cannot emit its kernel: " << builder.conflict();
    // The forward's saved gates hold every layer's; recomputed ones this
    // layer's alone.
    const std::string gatesFirst =
        dimOf(recurrence.getGates(), 0) == states && states != directions
            ? "static_cast<long long>(layer) * " + std::to_string(directions)
            : "0";
    builder.body() << "  const rudnn::lstm::BackwardParams<" << in << ", "
                   << gradient << "> p = {\n      gates, " << gatesFirst
                   << ", cells, c0, " << c0At << ", hidden, h0, " << h0At
                   << ",\n      d_out, " << dOutAt << ",\n      d_h_n, d_c_n, "
                   << dHNAt << ", " << dCNAt << ", " << weights << ", " << rows
                   << ",\n      lengths, " << scratch
                   << ", d_gates, d_bias, d_h0, d_c0, " << dH0At << ", "
                   << dC0At
                   << ",\n      steps, batch, static_cast<int>(layer)};\n"
                   << "  rudnn::lstm::recur_backward<" << in << ", " << gradient
                   << ", " << hidden << ", " << directions << ", " << units
                   << ", " << (onChip ? "true" : "false") << ", "
                   << cellType(cell) << ">(p);\n";
    builder.launch().threads = kLstmRecurrenceThreads;
    builder.launch().sharedBytes = shared;
    builder.launch().cooperative = true;
    builder.launch().grid[0] =
        SizeRef{directions * ((hidden + units - 1) / units), {}};
    builder.launch().grid[1] = SizeRef{1, {}};
    builder.launch().grid[2] = SizeRef{1, {}};
    // Per step and entry: the saved gates and cells (fp32), the output's
    // gradient, the gate gradients written and read back by every block
    // (the broadcast through L2 is left out: a lower bound); W_hhᵀ times
    // them.
    const int64_t bytes = elementBytes(dGates),
                  columns = cellGradientColumns(cell);
    builder.launch().memoryBytes = SizeRef{
        directions * hidden * (16 + 4 + elementBytes(dOut) + columns * bytes),
        {DimRef::of('T'), DimRef::of('B')}};
    builder.launch().flops = SizeRef{2 * directions * gates * hidden * hidden,
                                     {DimRef::of('T'), DimRef::of('B')}};
    // The serial bound (T of its T + 1 steps): each step a block stages
    // every entry's gate gradients of the step before (from L2), reads its
    // units' saved gates, cells and output gradients, writes its gate
    // gradients and carries its cell gradients; off chip, its W_hh columns
    // once each pass of entries (⌈B / 8⌉ passes).
    builder.launch().serialSteps = SizeRef{1, {DimRef::of('T')}};
    builder.launch().stepBytes =
        SizeRef{gates * hidden * bytes +
                    units * (16 + 8 + elementBytes(dOut) + columns * bytes + 8),
                {DimRef::of('B')}};
    if (!onChip)
      builder.launch().stepFixedBytes =
          SizeRef{units * gates * hidden * bytes,
                  {DimRef::ceilDiv('B', lstmRecurrenceBatch(bytes, false),
                                   "recurrence_passes")}};
    builder.launch().stepFlops =
        SizeRef{2 * units * gates * hidden, {DimRef::of('B')}};
    return success();
  }
};

struct WeightGradientModel
    : PrimitiveOpInterface::ExternalModel<WeightGradientModel,
                                          RnnWeightGradientOp> {
  StringRef getKernelGroup(Operation *) const { return "rnn.weight_gradient"; }

  ResultStorage getResultStorage(Operation *op, unsigned index) const {
    Value gradient = cast<RnnWeightGradientOp>(op).getDWeights()[index];
    auto type = cast<RankedTensorType>(gradient.getType());
    return ResultStorage::own(
        {elementBytes(gradient) * type.getNumElements(), {}}, "d_weight");
  }

  std::optional<DimRef> getResultDim(Operation *, unsigned, unsigned) const {
    return std::nullopt; // every gradient is static
  }

  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto gradients = cast<RnnWeightGradientOp>(op);
    const std::string cell = gradients.getCell().str();
    Value dGates = gradients.getDGates(), hidden = gradients.getHidden();
    const int64_t directions = dimOf(dGates, 0),
                  hiddenSize = lastDim(dGates) / cellGradientColumns(cell),
                  gates = cellGates(cell) * hiddenSize;
    const bool stacked = gradients.getLayer() > 0;
    const int64_t features =
        stacked ? directions * hiddenSize : lastDim(gradients.getInput());
    const std::string in = cudaType(dtype(dGates));
    const int64_t splits = gradients.getSplits();
    const bool tf32 = gradients.getTf32() && elementBytes(dGates) == 4;
    builder.setEntry(cell + "_weight_gradient_" + typeName(dGates) + "_i" +
                     std::to_string(features) + "_h" +
                     std::to_string(hiddenSize) + "_d" +
                     std::to_string(directions) + (stacked ? "_stacked" : "") +
                     (splits > 1 ? "_s" + std::to_string(splits) : "") +
                     (tf32 ? "_tf32" : ""));
    builder.preamble() << "// " << (cell == "gru" ? "A GRU" : "An LSTM")
                       << " layer's weight and bias gradients.\n"
                       << "#include \"rudnn/lstm.cuh\"\n\n";
    builder.pointer(dGates, "d_gates", in, false);
    builder.pointer(hidden, "hidden", in, false);
    builder.pointer(gradients.getH0(), "h0", in, false);
    const std::string h0At = bindStates(builder, gradients.getH0(), "h0");
    builder.pointer(gradients.getLengths(), "lengths", "int", false);
    builder.pointer(gradients.getDBias(), "d_bias", "float", false);
    const int64_t tiles =
        (gates + kGemmTile - 1) / kGemmTile *
        ((std::max(features, hiddenSize) + kGemmTile - 1) / kGemmTile) * 2 *
        directions;
    // Each split's partial tiles (each written whole before it is read),
    // and a counter a tile (zeroed each call).
    const std::string partials =
        splits > 1
            ? builder.scratch(
                  "partials", "float",
                  SizeRef{4 * kGemmTile * kGemmTile * tiles * splits, {}})
            : "nullptr";
    const std::string arrivals =
        splits > 1
            ? builder.zeroedScratch("arrivals", "int", SizeRef{4 * tiles, {}})
            : "nullptr";
    const int perDirection = gradients.getDWeights().size() / directions;
    std::string lists[4];
    static const char *kNames[] = {"d_weight_ih", "d_weight_hh", "d_bias_ih",
                                   "d_bias_hh"};
    for (int which = 0; which < 4; ++which) {
      SmallVector<Value, 2> values;
      for (int64_t d = 0; which < perDirection && d < directions; ++d)
        values.push_back(gradients.getDWeights()[d * perDirection + which]);
      lists[which] = bindDirections(builder, values, kNames[which], in, true);
    }
    builder.dim(DimRef::of('T'), "steps");
    builder.dim(DimRef::of('B'), "batch");
    builder.scalar("layer", static_cast<double>(gradients.getLayer()));
    auto [input, inputAt] =
        bindLayerInput(builder, gradients.getInput(), stacked,
                       gradients.getBatchFirst(), directions * hiddenSize, in);
    if (!builder.conflict().empty())
      return op->emitOpError()
             << "cannot emit its kernel: " << builder.conflict();
    builder.body() << "  const rudnn::lstm::WeightGradientParams<" << in
                   << "> p = {\n      d_gates, " << input << ", " << inputAt
                   << ", hidden, h0, " << h0At << ",\n      lengths, d_bias, "
                   << lists[0] << ", " << lists[1] << ", " << lists[2] << ", "
                   << lists[3] << ", " << partials << ", " << arrivals
                   << ",\n      steps, batch, static_cast<int>(layer)};\n"
                   << "  rudnn::lstm::weight_gradients<" << in << ", "
                   << features << ", " << hiddenSize << ", " << directions
                   << ", " << splits << ", " << cellType(cell)
                   << (tf32 ? ", true" : "") << ">(p);\n";
    builder.launch().threads = kGemmThreads;
    builder.launch().tf32 = tf32;
    builder.launch().grid[0] = SizeRef{(gates + kGemmTile - 1) / kGemmTile, {}};
    builder.launch().grid[1] = SizeRef{
        (std::max(features, hiddenSize) + kGemmTile - 1) / kGemmTile, {}};
    builder.launch().grid[2] = SizeRef{2 * directions * splits, {}};
    // What must cross memory at least: the gate gradients, the input and
    // the hidden states once a row (the blocks' re-reads meet in L2; the
    // gradients written are per call, not per row, and left out).
    const int64_t bytes = elementBytes(dGates);
    builder.launch().memoryBytes =
        SizeRef{bytes * (directions * lastDim(dGates) + features + hiddenSize),
                {DimRef::of('T'), DimRef::of('B')}};
    builder.launch().flops =
        SizeRef{2 * directions * gates * (features + hiddenSize),
                {DimRef::of('T'), DimRef::of('B')}};
    modelTileTraffic(builder.launch(), kGemmTile, kGemmTile, bytes);
    return success();
  }
};

struct InputGradientModel
    : PrimitiveOpInterface::ExternalModel<InputGradientModel,
                                          RnnInputGradientOp> {
  StringRef getKernelGroup(Operation *) const { return "rnn.input_gradient"; }

  ResultStorage getResultStorage(Operation *op, unsigned) const {
    Value dInput = cast<RnnInputGradientOp>(op).getDInput();
    return ResultStorage::own({elementBytes(dInput) * lastDim(dInput),
                               {DimRef::of('T'), DimRef::of('B')}},
                              "d_input");
  }

  /// d_input [T, B, F] (or [B, T, F]): T and B of d_gates [D, T, B, C].
  std::optional<DimRef> getResultDim(Operation *op, unsigned,
                                     unsigned dim) const {
    auto gradient = cast<RnnInputGradientOp>(op);
    if (dim < 2)
      return DimRef::of(gradient.getDGates(),
                        (dim == 0) != gradient.getBatchFirst() ? 1 : 2);
    return std::nullopt;
  }

  LogicalResult emitKernel(Operation *op, KernelBuilder &builder) const {
    auto gradient = cast<RnnInputGradientOp>(op);
    const std::string cell = gradient.getCell().str();
    Value dGates = gradient.getDGates(), dInput = gradient.getDInput();
    const int64_t directions = gradient.getWeights().size(),
                  hidden = lastDim(dGates) / cellGradientColumns(cell),
                  gates = cellGates(cell), features = lastDim(dInput);
    const std::string in = cudaType(dtype(dGates)),
                      out = cudaType(dtype(dInput));
    const bool tf32 = gradient.getTf32() && elementBytes(dGates) == 4;
    builder.setEntry(cell + "_input_gradient_" + typeName(dGates) + "_to_" +
                     typeName(dInput) + "_i" + std::to_string(features) + "_h" +
                     std::to_string(hidden) + "_d" +
                     std::to_string(directions) + (tf32 ? "_tf32" : ""));
    builder.preamble() << "// " << (cell == "gru" ? "A GRU" : "An LSTM")
                       << " layer's input gradient.\n"
                       << "#include \"rudnn/lstm.cuh\"\n\n";
    builder.pointer(dGates, "d_gates", in, false);
    const std::string weights =
        bindDirections(builder, gradient.getWeights(), "weight", in);
    const std::string rows = bindRows(builder, gradient.getWeights(), "weight");
    builder.pointer(dInput, "d_input", out, true);
    const std::string dInputAt =
        bindSequence(builder, dInput, "d_input", gradient.getBatchFirst());
    builder.dim(DimRef::of('T'), "steps");
    builder.dim(DimRef::of('B'), "batch");
    if (!builder.conflict().empty())
      return op->emitOpError()
             << "cannot emit its kernel: " << builder.conflict();
    builder.body() << "  const rudnn::lstm::InputGradientParams<" << in << ", "
                   << out << "> p = {\n      d_gates, " << weights << ", "
                   << rows << ", d_input, " << dInputAt << ", steps, batch};\n"
                   << "  rudnn::lstm::input_gradient<" << in << ", " << out
                   << ", " << features << ", " << hidden << ", " << directions
                   << ", " << cellType(cell) << (tf32 ? ", true" : "")
                   << ">(p);\n";
    builder.launch().threads = kGemmThreads;
    builder.launch().tf32 = tf32;
    builder.launch().grid[0] =
        SizeRef{1, {DimRef::ceilDiv('T', kStepsABlock, "step_tiles")}};
    builder.launch().grid[1] =
        SizeRef{(features + kGemmTile - 1) / kGemmTile, {}};
    builder.launch().grid[2] = SizeRef{1, {}};
    // The gate gradients read and the input gradient written once a row.
    builder.launch().memoryBytes =
        SizeRef{directions * gates * hidden * elementBytes(dGates) +
                    features * elementBytes(dInput),
                {DimRef::of('T'), DimRef::of('B')}};
    builder.launch().flops = SizeRef{2 * directions * gates * hidden * features,
                                     {DimRef::of('T'), DimRef::of('B')}};
    modelTileTraffic(builder.launch(), kGemmTile, kGemmTile,
                     elementBytes(dGates));
    return success();
  }
};

} // namespace

void ::rudnn::codegen::lstm::attachBackwardPrimitives(
    DialectRegistry &registry) {
  attachPrimitives<Primitive<LstmRecomputeGatesOp, RecomputeGatesModel>,
                   Primitive<RnnBackwardRecurrenceOp, BackwardRecurrenceModel>,
                   Primitive<RnnWeightGradientOp, WeightGradientModel>,
                   Primitive<RnnInputGradientOp, InputGradientModel>>(registry);
}
