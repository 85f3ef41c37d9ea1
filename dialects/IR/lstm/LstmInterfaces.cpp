//===- LstmInterfaces.cpp - rudnn.lstm and its primitives -----------------===//
//
// rudnn.lstm as an operator op: its contract (which depends on its layers,
// directions and biases), its rules, the persistent recurrence it chooses
// for a target, and the two primitives a layer becomes (the input
// projection and the recurrence); the primitives' verifiers.
//
//===----------------------------------------------------------------------===//

#include "dialects/IR/RudnnOps.h"
#include "dialects/IR/ShapeChecker.h"
#include "dialects/IR/lstm/LstmContracts.h"
#include "dialects/IR/lstm/LstmPolicy.h"

using namespace mlir;
using namespace mlir::rudnn;

namespace {

int64_t lastDimOf(Value value) {
  return cast<RankedTensorType>(value.getType()).getShape().back();
}

/// [T, B] of a sequence `value`, batch first or not.
std::pair<int64_t, int64_t> stepsAndBatch(Value value, bool batchFirst) {
  auto shape = cast<RankedTensorType>(value.getType()).getShape();
  return batchFirst ? std::pair{shape[1], shape[0]}
                    : std::pair{shape[0], shape[1]};
}

/// The recurrence's form: units within H, W_hh on chip only for a
/// persistent grid (one step a launch would load it anew each step).
LogicalResult checkRecurrence(Operation *op, std::optional<uint64_t> units,
                              int64_t hidden, bool weightsOnChip,
                              bool perStep) {
  // Unsigned: a negative count in the text is a huge one here.
  if (units && (*units < 1 || *units > uint64_t(::rudnn::kLstmMaxHidden) ||
                (hidden >= 1 && *units > uint64_t(hidden))))
    return op->emitOpError() << "'units' must be 1 to the hidden size "
                             << hidden << ", got " << *units;
  if (weightsOnChip && perStep)
    return op->emitOpError()
           << "cannot keep W_hh on chip one step a launch: "
              "'weights_on_chip' needs a persistent recurrence";
  return success();
}

} // namespace

//===----------------------------------------------------------------------===//
// LstmOp
//===----------------------------------------------------------------------===//

const ::rudnn::OperatorContract &LstmOp::getContract() {
  return ::rudnn::lstmContract({});
}

const ::rudnn::OperatorContract &LstmOp::getOperatorContract() {
  return ::rudnn::lstmContract({static_cast<int64_t>(getNumLayers()),
                                getBidirectional(), hasBiases(),
                                getBatchFirst()});
}

const ::rudnn::OperatorContract &
LstmOp::getCallContract(const ::rudnn::CallDescription &call) {
  // A layer count the verifier refuses picks the one-layer contract: the
  // call is refused rather than a contract sized for it.
  int64_t layers = call.integer("num_layers", 1);
  if (layers < 1 || layers > ::rudnn::kLstmMaxLayers)
    layers = 1;
  return ::rudnn::lstmContract({layers, call.integer("bidirectional") != 0,
                                call.gives(::rudnn::lstmWeightName(2, 0, 0)),
                                call.integer("batch_first") != 0});
}

/// The leading operands are one group each, the weights given one group.
Operation *LstmOp::buildFromContract(OpBuilder &builder, Location loc,
                                     const ::rudnn::OperatorContract &,
                                     ArrayRef<Value> operands,
                                     ArrayRef<Type> results,
                                     ArrayRef<NamedAttribute> attributes) {
  const ArrayRef<Value> leading =
      operands.take_front(::rudnn::kLstmLeadingOperands);
  SmallVector<int32_t> groups;
  for (Value operand : leading)
    groups.push_back(operand ? 1 : 0);
  groups.push_back(static_cast<int32_t>(
      llvm::count_if(operands.drop_front(leading.size()),
                     [](Value weight) { return bool(weight); })));
  return buildWithOperandGroups(builder, loc, getOperationName(), operands,
                                groups, results, attributes);
}

Value LstmOp::getContractOperand(unsigned index) {
  if (index < ::rudnn::kLstmLeadingOperands) {
    auto group = getODSOperands(index);
    return group.empty() ? Value() : group.front();
  }
  const unsigned weight = index - ::rudnn::kLstmLeadingOperands;
  return weight < getWeights().size() ? getWeights()[weight] : Value();
}

Value LstmOp::getWeight(int64_t layer, int64_t direction, int which) {
  const int64_t perDirection = hasBiases() ? 4 : 2;
  if (which >= perDirection)
    return {};
  return getWeights()[(layer * getDirections() + direction) * perDirection +
                      which];
}

LogicalResult LstmOp::verify() {
  // Bounded first: the counts below multiply it.
  if (getNumLayers() > uint64_t(::rudnn::kLstmMaxLayers))
    return emitOpError() << "'num_layers' must be 1 to "
                         << ::rudnn::kLstmMaxLayers << ", got "
                         << getNumLayers();
  const int64_t states = int64_t(getNumLayers()) * getDirections();
  const size_t weights = getWeights().size();
  if (weights != size_t(2 * states) && weights != size_t(4 * states))
    return emitOpError() << "expects the state_dict's 2 or 4 tensors per "
                            "layer and direction ("
                         << 2 * states << " or " << 4 * states
                         << " weights), got " << weights;
  ShapeChecker shapes(*this, "IHGEN");
  if (failed(verifyOperatorContract(*this, shapes)))
    return failure();
  return checkRecurrence(*this, getUnits(), lastDimOf(getHN()),
                         getWeightsOnChip().value_or(false),
                         getPerStep().value_or(false));
}

LogicalResult LstmOp::specialize(TargetAttr target) {
  const int64_t hidden = lastDimOf(getHN());
  const int64_t bytes =
      cast<RankedTensorType>(getX().getType()).getElementTypeBitWidth() / 8;
  std::optional<LstmRecurrencePolicy> policy = chooseLstmRecurrence(
      hidden, getDirections(), bytes, target.getSmemPerBlock(),
      target.getSmCount(),
      getUnits() ? std::optional<int64_t>(*getUnits()) : std::nullopt,
      getWeightsOnChip(), getPerStep());
  if (!policy)
    return emitOpError() << "no recurrence of H = " << hidden
                         << (getUnits() ? " in the given units" : "")
                         << " fits " << target.getSmCount()
                         << " SMs of smem_per_block = "
                         << target.getSmemPerBlock() << " bytes";
  Builder builder(getContext());
  setUnitsAttr(builder.getI64IntegerAttr(policy->units));
  setWeightsOnChipAttr(builder.getBoolAttr(policy->weightsOnChip));
  setPerStepAttr(builder.getBoolAttr(policy->perStep));
  (*this)->setAttr("policy", builder.getStringAttr(policy->reason));
  return success();
}

/// Per layer: projection → recurrence, the recurrences chained through
/// h_n and c_n (each writes its own slices).
LogicalResult LstmOp::decompose(OpBuilder &builder) {
  if (!getUnits() || !getWeightsOnChipAttr())
    return emitOpError() << "needs its recurrence's units: run "
                            "rudnn-specialize before rudnn-decompose";
  const int64_t layers = getNumLayers(), directions = getDirections();
  const int64_t hidden = lastDimOf(getHN());
  auto xType = cast<RankedTensorType>(getX().getType());
  Type element = xType.getElementType(), f32 = builder.getF32Type();
  auto [steps, batch] = stepsAndBatch(getX(), getBatchFirst());
  Location loc = getLoc();
  auto policy = (*this)->getAttrOfType<StringAttr>("policy");

  Value input = getX(), hN, cN;
  for (int64_t layer = 0; layer < layers; ++layer) {
    SmallVector<Value, 2> inputWeights, recurrentWeights;
    SmallVector<Value, 4> biases;
    for (int64_t d = 0; d < directions; ++d) {
      inputWeights.push_back(getWeight(layer, d, 0));
      recurrentWeights.push_back(getWeight(layer, d, 1));
      if (hasBiases())
        biases.append({getWeight(layer, d, 2), getWeight(layer, d, 3)});
    }
    const bool first = layer == 0, last = layer == layers - 1;
    auto gatesType =
        RankedTensorType::get({directions, steps, batch, 4 * hidden}, f32);
    auto stateType = RankedTensorType::get({directions, 3, batch, hidden}, f32);
    auto projection = builder.create<LstmProjectionOp>(
        loc, TypeRange{gatesType, stateType}, input, inputWeights, biases,
        getH0(), getC0(), builder.getI64IntegerAttr(layer),
        builder.getI64IntegerAttr(hidden),
        first && getBatchFirst() ? builder.getUnitAttr() : UnitAttr());
    Type outType = last ? getOut().getType()
                        : RankedTensorType::get(
                              {steps, batch, directions * hidden}, element);
    auto recurrence = builder.create<LstmRecurrenceOp>(
        loc, TypeRange{outType, getHN().getType(), getCN().getType()},
        projection.getGates(), projection.getState(), recurrentWeights,
        getLengths(), hN, cN, builder.getI64IntegerAttr(layer), getUnitsAttr(),
        getWeightsOnChipAttr(),
        getPerStep().value_or(false) ? builder.getUnitAttr() : UnitAttr(),
        last && getBatchFirst() ? builder.getUnitAttr() : UnitAttr());
    if (policy)
      recurrence->setAttr("policy", policy);
    input = recurrence.getOut();
    hN = recurrence.getHN();
    cN = recurrence.getCN();
  }
  getOut().replaceAllUsesWith(input);
  getHN().replaceAllUsesWith(hN);
  getCN().replaceAllUsesWith(cN);
  return success();
}

//===----------------------------------------------------------------------===//
// The LSTM primitives
//===----------------------------------------------------------------------===//

LogicalResult LstmProjectionOp::verify() {
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
  shapes.expect('G', 4 * getHidden(), "4 × 'hidden'");
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

LogicalResult LstmRecurrenceOp::verify() {
  const int64_t directions = getWeights().size();
  if (directions != 1 && directions != 2)
    return emitOpError() << "expects one recurrent weight per direction (1 "
                            "or 2), got "
                         << directions;
  if (static_cast<bool>(getHNIn()) != static_cast<bool>(getCNIn()))
    return emitOpError() << "takes both 'h_n_in' and 'c_n_in' or neither";
  const int64_t hidden = lastDimOf(getState());
  ShapeChecker shapes(*this, "HGDEN");
  shapes.expect('D', directions, "the weights");
  shapes.expect('E', directions * hidden, "D × the hidden size");
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
  if (shapes.lookup('G') && *shapes.lookup('G') != 4 * hidden)
    return emitOpError() << "'gates' has " << *shapes.lookup('G')
                         << " gate columns, expected 4 × " << hidden;
  for (Value weight : getWeights())
    if (!floats("weight_hh", weight, "GH"))
      return failure();
  if (!floats("out", getOut(), getBatchFirst() ? "BTE" : "TBE") ||
      !floats("h_n", getHN(), "NBH") || !floats("c_n", getCN(), "NBH") ||
      (getHNIn() && !floats("h_n_in", getHNIn(), "NBH")) ||
      (getCNIn() && !floats("c_n_in", getCNIn(), "NBH")))
    return failure();
  if (getLengths() &&
      (failed(shapes.check("lengths", getLengths(), "B")) ||
       failed(checkIntegerElementType(*this, "lengths", getLengths(), 32))))
    return failure();
  const int64_t states =
      cast<RankedTensorType>(getHN().getType()).getDimSize(0);
  // Unsigned: a negative layer in the text is a huge one here.
  if (states < directions || getLayer() >= uint64_t(states / directions))
    return emitOpError() << "layer " << getLayer() << " has no slice of the "
                         << states << " states";
  return checkRecurrence(*this, getUnits(), hidden, getWeightsOnChip(),
                         getPerStep());
}

//===----------------------------------------------------------------------===//
// The generated op classes
//===----------------------------------------------------------------------===//

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define GET_OP_CLASSES
#include "dialects/IR/lstm/RudnnLstmOps.cpp.inc"
#pragma GCC diagnostic pop
