//===- LstmBackwardInterfaces.cpp - rudnn.lstm_backward and its primitives ===//
//
// The LSTM's backward as an operator op: its contract (by its layers,
// directions, biases and layout), the backward recurrence it chooses for a
// target, and the primitives each layer becomes from the last down (the
// recurrence backwards, the weight gradients, the input gradient, which is
// the output gradient of the layer below); the primitives' verifiers.
//
//===----------------------------------------------------------------------===//

#include "dialects/IR/RudnnOps.h"
#include "dialects/IR/ShapeChecker.h"
#include "dialects/IR/lstm/LstmInterfaces.h"

using namespace mlir;
using namespace mlir::rudnn;
using namespace mlir::rudnn::lstm;

//===----------------------------------------------------------------------===//
// LstmBackwardOp
//===----------------------------------------------------------------------===//

const ::rudnn::OperatorContract &LstmBackwardOp::getContract() {
  return ::rudnn::lstmBackwardContract({});
}

using LstmBackwardOperatorOp =
    LstmOperator<LstmBackwardOp, ::rudnn::kLstmBackwardLeadingOperands>;

const ::rudnn::OperatorContract &LstmBackwardOp::getOperatorContract() {
  return ::rudnn::lstmBackwardContract(LstmBackwardOperatorOp::form(*this));
}

const ::rudnn::OperatorContract &
LstmBackwardOp::getCallContract(const ::rudnn::CallDescription &call) {
  return ::rudnn::lstmBackwardContract(callForm(call));
}

Operation *LstmBackwardOp::buildFromContract(
    OpBuilder &builder, Location loc, const ::rudnn::OperatorContract &,
    ArrayRef<Value> operands, ArrayRef<Type> results,
    ArrayRef<NamedAttribute> attributes) {
  return buildWithWeights(builder, loc, getOperationName(), operands,
                          ::rudnn::kLstmBackwardLeadingOperands, results,
                          attributes);
}

Value LstmBackwardOp::getContractOperand(unsigned index) {
  return LstmBackwardOperatorOp::contractOperand(*this, index);
}

Value LstmBackwardOp::getContractResult(unsigned index) {
  return LstmBackwardOperatorOp::contractResult(*this, index, 3, getDWeights());
}

Value LstmBackwardOp::getWeight(int64_t layer, int64_t direction, int which) {
  return LstmBackwardOperatorOp::weight(*this, layer, direction, which);
}

LogicalResult LstmBackwardOp::verify() {
  return LstmBackwardOperatorOp::verifyBackward(*this);
}

LogicalResult LstmBackwardOp::specialize(TargetAttr target) {
  return LstmBackwardOperatorOp::specializeBackward(*this, target, 4);
}

/// From the last layer down: the recurrence backwards, the layer's weight
/// gradients, and its input gradient (the output gradient of the layer
/// below, f32, or d_x).
LogicalResult LstmBackwardOp::decompose(OpBuilder &builder) {
  if (!getUnits() || !getWeightsOnChipAttr())
    return emitOpError() << "needs its recurrence's units: run "
                            "rudnn-specialize before rudnn-decompose";
  RecurrentBackwardStack stack{"lstm",
                               getX(),
                               getH0(),
                               getC0(),
                               getLengths(),
                               getHidden(),
                               getCells(),
                               getGates(),
                               getDOut(),
                               getDHN(),
                               getDCN(),
                               static_cast<int64_t>(getNumLayers()),
                               getDirections(),
                               lastDimOf(getDH0()),
                               getBatchFirst(),
                               hasBiases(),
                               getAllowTf32().value_or(true),
                               getUnitsAttr(),
                               getWeightsOnChipAttr(),
                               (*this)->getAttrOfType<StringAttr>("policy"),
                               getDX().getType(),
                               getDH0().getType()};
  RecurrentGradients gradients = decomposeBackwardStack(
      builder, getLoc(), stack, [&](int64_t layer, int64_t d, int which) {
        return getWeight(layer, d, which);
      });
  getDX().replaceAllUsesWith(gradients.dX);
  getDH0().replaceAllUsesWith(gradients.dH0);
  getDC0().replaceAllUsesWith(gradients.dC0);
  for (auto [mine, theirs] : llvm::zip_equal(getDWeights(), gradients.dWeights))
    mine.replaceAllUsesWith(theirs);
  return success();
}

RecurrentGradients mlir::rudnn::lstm::decomposeBackwardStack(
    OpBuilder &builder, Location loc, const RecurrentBackwardStack &stack,
    llvm::function_ref<Value(int64_t, int64_t, int)> weight) {
  const int64_t layers = stack.layers, directions = stack.directions,
                hidden = stack.hiddenSize;
  const bool gru = stack.cell == "gru";
  const int64_t gates = cellGates(stack.cell);
  auto xType = cast<RankedTensorType>(stack.x.getType());
  Type element = xType.getElementType(), f32 = builder.getF32Type();
  auto [steps, batch] = stepsAndBatch(stack.x, stack.batchFirst);
  const int perDirection = stack.biases ? 4 : 2;
  // The target rudnn-specialize attached: its SMs size the gradients'
  // splits.
  auto module =
      builder.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  auto target =
      module ? module->getAttrOfType<TargetAttr>(RudnnDialect::kTargetAttrName)
             : nullptr;
  const int64_t smCount = target ? target.getSmCount() : 1;
  auto flag = [&](bool set) {
    return set ? builder.getUnitAttr() : UnitAttr();
  };
  StringAttr cell = builder.getStringAttr(stack.cell);
  const bool tf32 = stack.tf32 && element.isF32();

  SmallVector<Value> dWeights(layers * directions * perDirection);
  Value dOut = stack.dOut, dH0, dC0;
  for (int64_t layer = layers - 1; layer >= 0; --layer) {
    SmallVector<Value, 2> inputWeights, recurrentWeights;
    SmallVector<Value, 4> biases;
    SmallVector<Type, 8> gradientTypes;
    for (int64_t d = 0; d < directions; ++d) {
      inputWeights.push_back(weight(layer, d, 0));
      recurrentWeights.push_back(weight(layer, d, 1));
      if (stack.biases)
        biases.append({weight(layer, d, 2), weight(layer, d, 3)});
      for (int which = 0; which < perDirection; ++which)
        gradientTypes.push_back(weight(layer, d, which).getType());
    }
    const bool last = layer == layers - 1, first = layer == 0;
    Value input = first ? stack.x : stack.hidden;
    // Without the forward's gates, this (LSTM) layer's again from its
    // states.
    Value savedGates = stack.gates;
    if (!savedGates)
      savedGates = builder.create<LstmRecomputeGatesOp>(
          loc,
          RankedTensorType::get({directions, steps, batch, 4 * hidden}, f32),
          input, stack.hidden, stack.h0, stack.lengths, inputWeights,
          recurrentWeights, biases, builder.getI64IntegerAttr(layer),
          flag(first && stack.batchFirst), flag(tf32));
    auto recurrence = builder.create<RnnBackwardRecurrenceOp>(
        loc,
        TypeRange{
            RankedTensorType::get({directions, steps, batch,
                                   cellGradientColumns(stack.cell) * hidden},
                                  element),
            RankedTensorType::get({directions, 4 * hidden}, f32),
            stack.statesType, stack.statesType},
        savedGates, dOut, recurrentWeights, gru ? Value() : stack.cells,
        gru ? stack.hidden : Value(), stack.lengths, stack.c0,
        gru ? stack.h0 : Value(), stack.dHN, stack.dCN, dH0, dC0,
        builder.getI64IntegerAttr(layer), stack.units, stack.weightsOnChip,
        flag(last && stack.batchFirst), cell);
    if (stack.policy)
      recurrence->setAttr("policy", stack.policy);
    auto weightGradients = builder.create<RnnWeightGradientOp>(
        loc, gradientTypes, recurrence.getDGates(), input, stack.hidden,
        stack.h0, stack.lengths, recurrence.getDBias(),
        builder.getI64IntegerAttr(layer),
        builder.getI64IntegerAttr(lstmGradientSplits(
            hidden, first ? lastDimOf(stack.x) : directions * hidden,
            directions, smCount, gates)),
        flag(first && stack.batchFirst), cell, flag(tf32));
    for (auto [i, gradient] : llvm::enumerate(weightGradients.getDWeights()))
      dWeights[layer * directions * perDirection + i] = gradient;
    Type dInputType =
        first ? stack.dXType
              : RankedTensorType::get({steps, batch, directions * hidden}, f32);
    dOut = builder
               .create<RnnInputGradientOp>(
                   loc, dInputType, recurrence.getDGates(), inputWeights,
                   flag(first && stack.batchFirst), cell, flag(tf32))
               .getDInput();
    dH0 = recurrence.getDH0();
    if (!gru)
      dC0 = recurrence.getDC0();
  }
  return {dOut, dH0, dC0, dWeights};
}

//===----------------------------------------------------------------------===//
// The backward primitives
//===----------------------------------------------------------------------===//

namespace {

/// One weight per direction (1 or 2).
LogicalResult checkDirections(Operation *op, size_t directions,
                              StringRef what) {
  if (directions != 1 && directions != 2)
    return op->emitOpError() << "expects one " << what
                             << " per direction (1 or 2), got " << directions;
  return success();
}

} // namespace

LogicalResult LstmRecomputeGatesOp::verify() {
  const int64_t directions = getWeights().size();
  if (failed(checkDirections(*this, directions, "input weight")) ||
      getRecurrentWeights().size() != size_t(directions))
    return emitOpError() << "expects one input and one recurrent weight per "
                            "direction (1 or 2 each)";
  if (!getBiases().empty() && getBiases().size() != size_t(2 * directions))
    return emitOpError() << "expects bias_ih and bias_hh per direction or no "
                            "biases, got "
                         << getBiases().size();
  const int64_t hidden = lastDimOf(getRecurrentWeights().front());
  ShapeChecker shapes(*this, "DHGEFL");
  shapes.expect('D', directions, "the weights");
  shapes.expect('H', hidden, "'weight_hh'");
  shapes.expect('G', 4 * hidden, "4 × the hidden size");
  shapes.expect('E', directions * hidden, "D × the hidden size");
  auto like = [&](StringRef name, Value value, StringRef layout) {
    return succeeded(shapes.check(name, value, layout)) &&
           succeeded(checkFloatElementType(*this, name, value)) &&
           succeeded(
               checkSameElementType(*this, name, value, "hidden", getHidden()));
  };
  const bool fromHidden = getLayer() > 0;
  if (!like("hidden", getHidden(), "LTBE") ||
      !like("input", getInput(),
            fromHidden        ? "LTBE"
            : getBatchFirst() ? "BTF"
                              : "TBF") ||
      (getH0() && !like("h0", getH0(), "NBH")) ||
      failed(shapes.check("gates", getGates(), "DTBG")) ||
      failed(checkF32ElementType(*this, "gates", getGates())))
    return failure();
  for (Value weight : getWeights())
    if (!like("weight_ih", weight, "GF"))
      return failure();
  for (Value weight : getRecurrentWeights())
    if (!like("weight_hh", weight, "GH"))
      return failure();
  for (Value bias : getBiases())
    if (!like("bias", bias, "G"))
      return failure();
  if (fromHidden && getInput() != getHidden())
    return emitOpError() << "reads a layer past the first's input from "
                            "'hidden'";
  if (getLayer() >= uint64_t(*shapes.lookup('L')))
    return emitOpError() << "layer " << getLayer() << " is not in 'hidden'";
  if (failed(checkLengths(*this, shapes, getLengths())))
    return failure();
  return success();
}

LogicalResult RnnBackwardRecurrenceOp::verify() {
  if (failed(checkCell(*this, getCell())))
    return failure();
  const bool gru = getCell() == "gru";
  const int64_t directions = getWeights().size();
  if (failed(checkDirections(*this, directions, "recurrent weight")))
    return failure();
  if (!gru && static_cast<bool>(getDH0In()) != static_cast<bool>(getDC0In()))
    return emitOpError() << "takes both 'd_h0_in' and 'd_c0_in' or neither";
  if (gru ? !getHidden() || getCells() || getC0() || getDCN() || getDC0In()
          : !getCells() || getHidden() || getH0())
    return emitOpError() << (gru ? "a GRU's takes 'hidden' (and 'h0'), no cell "
                                   "states"
                                 : "an LSTM's takes 'cells' (and 'c0'), not "
                                   "'hidden'");
  const int64_t hidden = lastDimOf(getWeights().front());
  ShapeChecker shapes(*this, "HGDENVC");
  shapes.expect('D', directions, "the weights");
  shapes.expect('H', hidden, "'weight_hh'");
  shapes.expect('G', cellGates(getCell()) * hidden, "the gates × H");
  shapes.expect('V', 4 * hidden, "the 4 values a step saves per unit");
  shapes.expect('C', cellGradientColumns(getCell()) * hidden,
                "the gate-gradient columns");
  shapes.expect('E', directions * hidden, "D × the hidden size");
  Value weight = getWeights().front();
  auto like = [&](StringRef name, Value value, StringRef layout) {
    return succeeded(shapes.check(name, value, layout)) &&
           succeeded(checkFloatElementType(*this, name, value)) &&
           succeeded(
               checkSameElementType(*this, name, value, "weight_hh", weight));
  };
  auto f32 = [&](StringRef name, Value value, StringRef layout) {
    return succeeded(shapes.check(name, value, layout)) &&
           succeeded(checkF32ElementType(*this, name, value));
  };
  for (Value w : getWeights())
    if (!like("weight_hh", w, "GH"))
      return failure();
  if (!f32("gates", getGates(), "XTBV") ||
      (getCells() && !f32("cells", getCells(), "NTBH")) ||
      (getHidden() && !like("hidden", getHidden(), "LTBE")) ||
      failed(
          shapes.check("d_out", getDOut(), getBatchFirst() ? "BTE" : "TBE")) ||
      failed(checkFloatElementType(*this, "d_out", getDOut())))
    return failure();
  if ((getC0() && !like("c0", getC0(), "NBH")) ||
      (getH0() && !like("h0", getH0(), "NBH")) ||
      (getDHN() && !like("d_h_n", getDHN(), "NBH")) ||
      (getDCN() && !like("d_c_n", getDCN(), "NBH")) ||
      (getDH0In() && !like("d_h0_in", getDH0In(), "NBH")) ||
      (getDC0In() && !like("d_c0_in", getDC0In(), "NBH")) ||
      !like("d_gates", getDGates(), "DTBC") ||
      !f32("d_bias", getDBias(), "DV") || !like("d_h0", getDH0(), "NBH") ||
      !like("d_c0", getDC0(), "NBH"))
    return failure();
  const int64_t states = *shapes.lookup('N');
  if (auto slices = shapes.lookup('X');
      slices && *slices != directions && *slices != states)
    return emitOpError() << "'gates' has " << *slices
                         << " slices: one per direction or per state ("
                         << directions << " or " << states << ")";
  if (failed(checkLengths(*this, shapes, getLengths())))
    return failure();
  if (states < directions || getLayer() >= uint64_t(states / directions))
    return emitOpError() << "layer " << getLayer() << " has no slice of the "
                         << states << " states";
  return checkRecurrence(*this, getUnits(), hidden);
}

LogicalResult RnnWeightGradientOp::verify() {
  if (failed(checkCell(*this, getCell())))
    return failure();
  const int64_t gates = cellGates(getCell());
  auto dGates = cast<RankedTensorType>(getDGates().getType());
  if (dGates.getRank() != 4)
    return emitOpError() << "'d_gates' must be [D, T, B, C]";
  const int64_t directions = dGates.getDimSize(0);
  const size_t count = getDWeights().size();
  if (ShapedType::isDynamic(directions) ||
      (count != size_t(2 * directions) && count != size_t(4 * directions)) ||
      failed(checkDirections(*this, directions, "direction's gradients")))
    return emitOpError() << "returns 2 or 4 gradients per direction of "
                            "'d_gates', got "
                         << count;
  const int64_t hidden = lastDimOf(getHidden()) / directions;
  ShapeChecker shapes(*this, "DHGEFLVC");
  shapes.expect('D', directions, "'d_gates'");
  shapes.expect('H', hidden, "'hidden'");
  shapes.expect('G', gates * hidden, "the gates × H");
  shapes.expect('V', 4 * hidden, "the 4 bias sums per unit");
  shapes.expect('C', cellGradientColumns(getCell()) * hidden,
                "the gate-gradient columns");
  shapes.expect('E', directions * hidden, "D × the hidden size");
  auto like = [&](StringRef name, Value value, StringRef layout) {
    return succeeded(shapes.check(name, value, layout)) &&
           succeeded(checkFloatElementType(*this, name, value)) &&
           succeeded(checkSameElementType(*this, name, value, "d_gates",
                                          getDGates()));
  };
  const bool fromHidden = getLayer() > 0;
  if (!like("d_gates", getDGates(), "DTBC") ||
      !like("hidden", getHidden(), "LTBE") ||
      !like("input", getInput(),
            fromHidden        ? "LTBE"
            : getBatchFirst() ? "BTF"
                              : "TBF") ||
      failed(shapes.check("d_bias", getDBias(), "DV")) ||
      failed(checkF32ElementType(*this, "d_bias", getDBias())) ||
      (getH0() && !like("h0", getH0(), "NBH")))
    return failure();
  if (fromHidden && getInput() != getHidden())
    return emitOpError() << "reads a layer past the first's input from "
                            "'hidden'";
  if (getLayer() >= uint64_t(*shapes.lookup('L')))
    return emitOpError() << "layer " << getLayer() << " is not in 'hidden'";
  if (getSplits() < 1 || getSplits() > kLstmMaxGradientSplits)
    return emitOpError() << "'splits' must be 1 to " << kLstmMaxGradientSplits
                         << ", got " << getSplits();
  const int64_t features =
      fromHidden ? directions * hidden : lastDimOf(getInput());
  const int perDirection = count / directions;
  for (auto [i, gradient] : llvm::enumerate(getDWeights())) {
    const int which = i % perDirection;
    SmallVector<int64_t> shape = {gates * hidden};
    if (which < 2)
      shape.push_back(which == 0 ? features : hidden);
    auto type = cast<RankedTensorType>(gradient.getType());
    if (type.getShape() != ArrayRef<int64_t>(shape) ||
        type.getElementType() != dGates.getElementType())
      return emitOpError() << "gradient " << i << " must be "
                           << RankedTensorType::get(shape,
                                                    dGates.getElementType());
  }
  if (failed(checkLengths(*this, shapes, getLengths())))
    return failure();
  return success();
}

LogicalResult RnnInputGradientOp::verify() {
  if (failed(checkCell(*this, getCell())))
    return failure();
  const int64_t directions = getWeights().size();
  if (failed(checkDirections(*this, directions, "input weight")))
    return failure();
  Value weight = getWeights().front();
  const int64_t gateRows =
      cast<RankedTensorType>(weight.getType()).getDimSize(0);
  ShapeChecker shapes(*this, "DGFC");
  shapes.expect('D', directions, "the weights");
  if (!ShapedType::isDynamic(gateRows))
    shapes.expect(
        'C', gateRows / cellGates(getCell()) * cellGradientColumns(getCell()),
        "the gate-gradient columns");
  if (failed(shapes.check("d_gates", getDGates(), "DTBC")) ||
      failed(checkSameElementType(*this, "d_gates", getDGates(), "weight_ih",
                                  weight)) ||
      failed(shapes.check("d_input", getDInput(),
                          getBatchFirst() ? "BTF" : "TBF")) ||
      failed(checkFloatElementType(*this, "d_input", getDInput())))
    return failure();
  for (Value w : getWeights())
    if (failed(shapes.check("weight_ih", w, "GF")) ||
        failed(checkSameElementType(*this, "weight_ih", w, "d_gates",
                                    getDGates())))
      return failure();
  auto element = cast<RankedTensorType>(getDInput().getType()).getElementType();
  if (!element.isF32() &&
      element != cast<RankedTensorType>(weight.getType()).getElementType())
    return emitOpError() << "'d_input' must be f32 or of the weights' type";
  return success();
}
