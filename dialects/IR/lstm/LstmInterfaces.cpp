//===- LstmInterfaces.cpp - rudnn.lstm and its primitives -----------------===//
//
// rudnn.lstm as an operator op: its contract (which depends on its layers,
// directions and biases), its rules, the persistent recurrence it chooses
// for a target, and the two primitives a layer becomes (the input
// projection and the recurrence); the primitives' verifiers.
//
//===----------------------------------------------------------------------===//

#include "dialects/IR/lstm/LstmInterfaces.h"
#include "dialects/IR/RudnnOps.h"
#include "dialects/IR/ShapeChecker.h"
#include "dialects/IR/lstm/LstmContracts.h"
#include "dialects/IR/lstm/LstmPolicy.h"

#include <cstdint>

using namespace mlir;
using namespace mlir::rudnn;
using namespace mlir::rudnn::lstm;

int64_t mlir::rudnn::lstm::cellGates(StringRef cell) {
  return cell == "gru" ? 3 : 4;
}

int64_t mlir::rudnn::lstm::cellGradientColumns(StringRef cell) {
  return cell == "gru" ? 6 : 4;
}

LogicalResult mlir::rudnn::lstm::checkCell(Operation *op, StringRef cell) {
  if (cell != "lstm" && cell != "gru")
    return op->emitOpError()
           << "'cell' must be \"lstm\" or \"gru\", got \"" << cell << "\"";
  return success();
}

int64_t mlir::rudnn::lstm::lastDimOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape().back();
}

std::pair<int64_t, int64_t> mlir::rudnn::lstm::stepsAndBatch(Value value,
                                                             bool batchFirst) {
  auto shape = cast<RankedTensorType>(value.getType()).getShape();
  return batchFirst ? std::pair{shape[1], shape[0]}
                    : std::pair{shape[0], shape[1]};
}

Operation *
mlir::rudnn::lstm::buildWithWeights(OpBuilder &builder, Location loc,
                                    StringRef name, ArrayRef<Value> operands,
                                    unsigned leading, ArrayRef<Type> results,
                                    ArrayRef<NamedAttribute> attributes) {
  SmallVector<int32_t> groups;
  for (Value operand : operands.take_front(leading))
    groups.push_back(operand ? 1 : 0);
  groups.push_back(static_cast<int32_t>(
      llvm::count_if(operands.drop_front(leading),
                     [](Value weight) { return bool(weight); })));
  return buildWithOperandGroups(builder, loc, name, operands, groups, results,
                                attributes);
}

LogicalResult mlir::rudnn::lstm::checkRecurrence(Operation *op,
                                                 std::optional<uint64_t> units,
                                                 int64_t hidden) {
  // Unsigned: a negative count in the text is a huge one here.
  if (units && (*units < 1 || *units > uint64_t(::rudnn::kLstmMaxHidden) ||
                (hidden >= 1 && *units > uint64_t(hidden))))
    return op->emitOpError() << "'units' must be 1 to the hidden size "
                             << hidden << ", got " << *units;
  return success();
}

::rudnn::LstmForm
mlir::rudnn::lstm::callForm(const ::rudnn::CallDescription &call) {
  int64_t layers = call.integer("num_layers", 1);
  if (layers < 1 || layers > ::rudnn::kLstmMaxLayers)
    layers = 1;
  return {layers, call.integer("bidirectional") != 0,
          call.gives(::rudnn::lstmWeightName(2, 0, 0)),
          call.integer("batch_first") != 0};
}

LogicalResult mlir::rudnn::lstm::checkLengths(Operation *op,
                                              ShapeChecker &shapes,
                                              Value lengths) {
  if (!lengths)
    return success();
  if (failed(shapes.check("lengths", lengths, "B")))
    return failure();
  return checkIntegerElementType(op, "lengths", lengths, 32);
}

LogicalResult mlir::rudnn::lstm::checkWeightCount(Operation *op,
                                                  uint64_t layers,
                                                  int64_t directions,
                                                  size_t weights) {
  if (layers > uint64_t(::rudnn::kLstmMaxLayers))
    return op->emitOpError() << "'num_layers' must be 1 to "
                             << ::rudnn::kLstmMaxLayers << ", got " << layers;
  const int64_t states = int64_t(layers) * directions;
  if (weights != size_t(2 * states) && weights != size_t(4 * states))
    return op->emitOpError()
           << "expects the state_dict's 2 or 4 tensors per layer and "
              "direction ("
           << 2 * states << " or " << 4 * states << " weights), got "
           << weights;
  return success();
}

LogicalResult mlir::rudnn::lstm::applyPolicy(
    Operation *op, const std::optional<LstmRecurrencePolicy> &policy,
    int64_t hidden, bool unitsGiven, TargetAttr target) {
  if (!policy)
    return op->emitOpError()
           << "no recurrence of H = " << hidden
           << (unitsGiven ? " in the given units" : "") << " fits "
           << target.getSmCount()
           << " SMs of smem_per_block = " << target.getSmemPerBlock()
           << " bytes";
  Builder builder(op->getContext());
  op->setAttr("units", builder.getI64IntegerAttr(policy->units));
  op->setAttr("weights_on_chip", builder.getBoolAttr(policy->weightsOnChip));
  op->setAttr("policy", builder.getStringAttr(policy->reason));
  return success();
}

RecurrentResults mlir::rudnn::lstm::decomposeStack(
    OpBuilder &builder, Location loc, const RecurrentStack &stack,
    llvm::function_ref<Value(int64_t, int64_t, int)> weight) {
  const int64_t directions = stack.directions, hidden = stack.hidden;
  const bool gru = stack.cell == "gru";
  auto xType = cast<RankedTensorType>(stack.x.getType());
  Type element = xType.getElementType(), f32 = builder.getF32Type();
  auto [steps, batch] = stepsAndBatch(stack.x, stack.batchFirst);
  StringAttr cell = builder.getStringAttr(stack.cell);
  auto flag = [&](bool set) {
    return set ? builder.getUnitAttr() : UnitAttr();
  };
  const bool biases = static_cast<bool>(weight(0, 0, 2));
  const bool tf32 = stack.tf32 && element.isF32();
  // The recurrence takes TF32 where its policy kept TF32's tiles on chip.
  auto module =
      builder.getInsertionBlock()->getParentOp()->getParentOfType<ModuleOp>();
  auto target =
      module ? module->getAttrOfType<TargetAttr>(RudnnDialect::kTargetAttrName)
             : nullptr;
  const bool recurrenceTf32 = lstmRecurrenceTf32(
      hidden, stack.units.getInt(), element.getIntOrFloatBitWidth() / 8,
      stack.weightsOnChip.getValue(), cellGates(stack.cell), tf32,
      target ? target.getSmemPerBlock() : INT64_MAX);
  Value input = stack.x, hN, cN;
  SmallVector<Value, 3> saved;
  for (int64_t layer = 0; layer < stack.layers; ++layer) {
    SmallVector<Value, 2> inputWeights, recurrentWeights, cellBiases;
    SmallVector<Value, 4> layerBiases;
    for (int64_t d = 0; d < directions; ++d) {
      inputWeights.push_back(weight(layer, d, 0));
      recurrentWeights.push_back(weight(layer, d, 1));
      if (biases)
        layerBiases.append({weight(layer, d, 2), weight(layer, d, 3)});
      // The GRU's b_hn stays inside the reset product: its recurrence adds
      // it.
      if (biases && gru)
        cellBiases.push_back(weight(layer, d, 3));
    }
    const bool first = layer == 0, last = layer == stack.layers - 1;
    auto gatesType = RankedTensorType::get(
        {directions, steps, batch, cellGates(stack.cell) * hidden}, f32);
    auto stateType = RankedTensorType::get({directions, 3, batch, hidden}, f32);
    auto projection = builder.create<RnnProjectionOp>(
        loc, TypeRange{gatesType, stateType}, input, inputWeights, layerBiases,
        stack.h0, stack.c0, builder.getI64IntegerAttr(layer),
        builder.getI64IntegerAttr(hidden), flag(first && stack.batchFirst),
        cell, flag(stack.wgmmaProjection), flag(tf32));
    SmallVector<Type> resultTypes(stack.resultTypes.begin(),
                                  stack.resultTypes.end());
    if (!last)
      resultTypes[0] =
          RankedTensorType::get({steps, batch, directions * hidden}, element);
    llvm::append_range(resultTypes, stack.savedTypes);
    auto recurrence = builder.create<RnnRecurrenceOp>(
        loc, resultTypes, projection.getGates(), projection.getState(),
        recurrentWeights, cellBiases, stack.lengths, hN, cN, saved,
        builder.getI64IntegerAttr(layer), stack.units, stack.weightsOnChip,
        flag(stack.perStep), flag(last && stack.batchFirst), cell,
        flag(recurrenceTf32));
    if (stack.policy)
      recurrence->setAttr("policy", stack.policy);
    input = recurrence.getOut();
    hN = recurrence.getHN();
    if (!gru)
      cN = recurrence.getCN();
    saved.assign(recurrence.getSaved().begin(), recurrence.getSaved().end());
  }
  return {input, hN, cN, saved};
}

//===----------------------------------------------------------------------===//
// LstmOp
//===----------------------------------------------------------------------===//

using LstmOperatorOp = LstmOperator<LstmOp, ::rudnn::kLstmLeadingOperands>;

const ::rudnn::OperatorContract &LstmOp::getContract() {
  return ::rudnn::lstmContract({});
}

const ::rudnn::OperatorContract &LstmOp::getOperatorContract() {
  return ::rudnn::lstmContract(LstmOperatorOp::form(*this));
}

const ::rudnn::OperatorContract &
LstmOp::getCallContract(const ::rudnn::CallDescription &call) {
  return ::rudnn::lstmContract(callForm(call));
}

/// The leading operands are one group each, the weights given one group;
/// out, h_n, c_n, then the saved results the save flags ask for.
Operation *LstmOp::buildFromContract(OpBuilder &builder, Location loc,
                                     const ::rudnn::OperatorContract &,
                                     ArrayRef<Value> operands,
                                     ArrayRef<Type> results,
                                     ArrayRef<NamedAttribute> attributes) {
  auto sets = [&](StringRef flag) {
    return llvm::any_of(attributes, [&](NamedAttribute a) {
      return a.getName() == flag && isa<UnitAttr>(a.getValue());
    });
  };
  SmallVector<Type> kept(results.take_front(3));
  if (sets("save_states"))
    kept.append(results.begin() + 3,
                results.begin() + std::min<size_t>(results.size(), 5));
  if (sets("save_gates") && results.size() > 5)
    kept.push_back(results[5]);
  return buildWithWeights(builder, loc, getOperationName(), operands,
                          ::rudnn::kLstmLeadingOperands, kept, attributes);
}

Value LstmOp::getContractResult(unsigned index) {
  return LstmOperatorOp::contractResult(*this, index, 3, getSaved());
}

Value LstmOp::getContractOperand(unsigned index) {
  return LstmOperatorOp::contractOperand(*this, index);
}

Value LstmOp::getWeight(int64_t layer, int64_t direction, int which) {
  return LstmOperatorOp::weight(*this, layer, direction, which);
}

LogicalResult LstmOp::verify() {
  if (failed(checkWeightCount(*this, getNumLayers(), getDirections(),
                              getWeights().size())))
    return failure();
  const size_t saved = (getSaveStates() ? 2 : 0) + (getSaveGates() ? 1 : 0);
  if (getSaveGates() && !getSaveStates())
    return emitOpError() << "'save_gates' needs 'save_states': the backward "
                            "reads the saved cells beside the gates";
  if (getSaved().size() != saved)
    return emitOpError() << "returns " << getSaved().size()
                         << " saved tensors, expected " << saved
                         << " (hidden and cells with 'save_states', gates "
                            "with 'save_gates')";
  ShapeChecker shapes(*this, "IHGENL");
  if (failed(verifyOperatorContract(*this, shapes)))
    return failure();
  return checkRecurrence(*this, getUnits(), lastDimOf(getHN()));
}

LogicalResult LstmOp::specialize(TargetAttr target) {
  return LstmOperatorOp::specializeForward(*this, target, 4);
}

/// Per layer: projection → recurrence, the recurrences chained through
/// h_n and c_n (each writes its own slices).
LogicalResult LstmOp::decompose(OpBuilder &builder) {
  if (!getUnits() || !getWeightsOnChipAttr())
    return emitOpError() << "needs its recurrence's units: run "
                            "rudnn-specialize before rudnn-decompose";
  RecurrentStack stack{
      "lstm",
      getX(),
      getH0(),
      getC0(),
      getLengths(),
      static_cast<int64_t>(getNumLayers()),
      getDirections(),
      lastDimOf(getHN()),
      getBatchFirst(),
      getPerStep().value_or(false),
      getWgmmaProjection().value_or(false),
      getAllowTf32().value_or(true),
      getUnitsAttr(),
      getWeightsOnChipAttr(),
      (*this)->getAttrOfType<StringAttr>("policy"),
      {getOut().getType(), getHN().getType(), getCN().getType()},
      getSaved().getTypes()};
  RecurrentResults results = decomposeStack(
      builder, getLoc(), stack, [&](int64_t layer, int64_t d, int which) {
        return getWeight(layer, d, which);
      });
  getOut().replaceAllUsesWith(results.out);
  getHN().replaceAllUsesWith(results.hN);
  getCN().replaceAllUsesWith(results.cN);
  for (auto [mine, theirs] : llvm::zip_equal(getSaved(), results.saved))
    mine.replaceAllUsesWith(theirs);
  return success();
}

//===----------------------------------------------------------------------===//
// The LSTM primitives
//===----------------------------------------------------------------------===//

LogicalResult RnnProjectionOp::verify() {
  if (failed(checkCell(*this, getCell())))
    return failure();
  const int64_t directions = getWeights().size();
  if (directions != 1 && directions != 2)
    return emitOpError() << "expects one input weight per direction (1 or "
                            "2), got "
                         << directions;
  if (!getBiases().empty() && getBiases().size() != size_t(2 * directions))
    return emitOpError() << "expects bias_ih and bias_hh per direction or no "
                            "biases, got "
                         << getBiases().size();
  ShapeChecker shapes(*this, "FHGDN");
  shapes.expect('D', directions, "the weights");
  shapes.expect('H', getHidden(), "'hidden'");
  const int64_t gates = cellGates(getCell());
  // The checker keeps a reference to the source's text.
  shapes.expect('G', gates * getHidden(),
                gates == 3 ? "3 × 'hidden'" : "4 × 'hidden'");
  shapes.expect('S', 3, "the states a direction keeps");
  auto floats = [&](StringRef name, Value value, StringRef layout) {
    return succeeded(shapes.check(name, value, layout)) &&
           succeeded(checkFloatElementType(*this, name, value)) &&
           succeeded(
               checkSameElementType(*this, name, value, "input", getInput()));
  };
  auto f32 = [&](StringRef name, Value value, StringRef layout) {
    return succeeded(shapes.check(name, value, layout)) &&
           succeeded(checkF32ElementType(*this, name, value));
  };
  if (!floats("input", getInput(), getBatchFirst() ? "BTF" : "TBF"))
    return failure();
  if (getWgmma() &&
      cast<RankedTensorType>(getInput().getType()).getElementTypeBitWidth() !=
          16 &&
      !getTf32())
    return emitOpError() << "runs on wgmma with 16-bit inputs, or f32 ones "
                            "in TF32 ('tf32'), only";
  for (Value weight : getWeights())
    if (!floats("weight_ih", weight, "GF"))
      return failure();
  for (Value bias : getBiases())
    if (!floats("bias", bias, "G"))
      return failure();
  if ((getH0() && !floats("h0", getH0(), "NBH")) ||
      (getC0() && !floats("c0", getC0(), "NBH")) ||
      !f32("gates", getGates(), "DTBG") || !f32("state", getState(), "DSBH"))
    return failure();
  return success();
}

LogicalResult RnnRecurrenceOp::verify() {
  if (failed(checkCell(*this, getCell())))
    return failure();
  const bool gru = getCell() == "gru";
  const int64_t directions = getWeights().size(), gates = cellGates(getCell());
  if (directions != 1 && directions != 2)
    return emitOpError() << "expects one recurrent weight per direction (1 "
                            "or 2), got "
                         << directions;
  if (!gru && static_cast<bool>(getHNIn()) != static_cast<bool>(getCNIn()))
    return emitOpError() << "takes both 'h_n_in' and 'c_n_in' or neither";
  if (gru && getCNIn())
    return emitOpError() << "a GRU has no cell state: takes no 'c_n_in'";
  if (!getBiases().empty() &&
      (!gru || getBiases().size() != size_t(directions)))
    return emitOpError() << "takes b_hh per direction for a GRU's b_hn, no "
                            "other biases; got "
                         << getBiases().size();
  const int64_t hidden = lastDimOf(getState());
  ShapeChecker shapes(*this, "HGDENV");
  shapes.expect('D', directions, "the weights");
  shapes.expect('E', directions * hidden, "D × the hidden size");
  shapes.expect('V', 4 * hidden, "the 4 values a step saves per unit");
  shapes.expect('S', 3, "the states a direction keeps");
  auto floats = [&](StringRef name, Value value, StringRef layout) {
    return succeeded(shapes.check(name, value, layout)) &&
           succeeded(checkFloatElementType(*this, name, value)) &&
           succeeded(checkSameElementType(*this, name, value, "out", getOut()));
  };
  if (failed(shapes.check("state", getState(), "DSBH")) ||
      failed(checkF32ElementType(*this, "state", getState())) ||
      failed(shapes.check("gates", getGates(), "DTBG")) ||
      failed(checkF32ElementType(*this, "gates", getGates())))
    return failure();
  if (shapes.lookup('G') && *shapes.lookup('G') != gates * hidden)
    return emitOpError() << "'gates' has " << *shapes.lookup('G')
                         << " gate columns, expected " << gates << " × "
                         << hidden;
  for (Value weight : getWeights())
    if (!floats("weight_hh", weight, "GH"))
      return failure();
  for (Value bias : getBiases())
    if (!floats("bias_hh", bias, "G"))
      return failure();
  if (!floats("out", getOut(), getBatchFirst() ? "BTE" : "TBE") ||
      !floats("h_n", getHN(), "NBH") || !floats("c_n", getCN(), "NBH") ||
      (getHNIn() && !floats("h_n_in", getHNIn(), "NBH")) ||
      (getCNIn() && !floats("c_n_in", getCNIn(), "NBH")))
    return failure();
  if (failed(checkLengths(*this, shapes, getLengths())))
    return failure();
  const size_t saved = getSaved().size();
  if ((gru ? saved != 0 && saved != 2
           : saved != 0 && saved != 2 && saved != 3) ||
      (!getSavedIn().empty() && getSavedIn().size() != saved))
    return emitOpError() << (gru ? "saves hidden and gates or nothing"
                                 : "saves hidden and cells (and gates) or "
                                   "nothing")
                         << ", each given by the layer before or by none; got "
                         << saved << " saved and " << getSavedIn().size()
                         << " given";
  if (saved && gru) {
    if (failed(shapes.check("hidden", getSaved()[0], "LTBE")) ||
        failed(checkSameElementType(*this, "hidden", getSaved()[0], "out",
                                    getOut())) ||
        failed(shapes.check("saved gates", getSaved()[1], "NTBV")) ||
        failed(checkF32ElementType(*this, "saved gates", getSaved()[1])))
      return failure();
  } else if (saved) {
    if (failed(shapes.check("hidden", getSaved()[0], "LTBE")) ||
        failed(checkSameElementType(*this, "hidden", getSaved()[0], "out",
                                    getOut())) ||
        failed(shapes.check("cells", getSaved()[1], "NTBH")) ||
        failed(checkF32ElementType(*this, "cells", getSaved()[1])) ||
        (saved == 3 &&
         (failed(shapes.check("saved gates", getSaved()[2], "NTBV")) ||
          failed(checkF32ElementType(*this, "saved gates", getSaved()[2])))))
      return failure();
  }
  for (auto [in, out] : llvm::zip(getSavedIn(), getSaved()))
    if (in.getType() != out.getType())
      return emitOpError() << "saved tensors given by the layer before "
                              "must have the types of those returned";
  const int64_t states =
      cast<RankedTensorType>(getHN().getType()).getDimSize(0);
  // Unsigned: a negative layer in the text is a huge one here.
  if (states < directions || getLayer() >= uint64_t(states / directions))
    return emitOpError() << "layer " << getLayer() << " has no slice of the "
                         << states << " states";
  return checkRecurrence(*this, getUnits(), hidden);
}

//===----------------------------------------------------------------------===//
// The generated op classes
//===----------------------------------------------------------------------===//

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define GET_OP_CLASSES
#include "dialects/IR/lstm/RudnnLstmOps.cpp.inc"
#pragma GCC diagnostic pop
