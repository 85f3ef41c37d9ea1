//===- GruInterfaces.cpp - rudnn.gru and rudnn.gru_backward ---------------===//
//
// The GRU as operator ops: their contracts (rudnn.lstm's without the cell
// states, three gates a unit), the recurrences they choose for a target,
// and their decompositions into the recurrent family's primitives with
// `cell "gru"` (dialects/IR/lstm).
//
//===----------------------------------------------------------------------===//

#include "dialects/IR/RudnnOps.h"
#include "dialects/IR/ShapeChecker.h"
#include "dialects/IR/lstm/LstmInterfaces.h"

using namespace mlir;
using namespace mlir::rudnn;
using namespace mlir::rudnn::lstm;

namespace {

constexpr int64_t kGruGates = 3;

using GruOperatorOp = LstmOperator<GruOp, ::rudnn::kGruLeadingOperands, true>;
using GruBackwardOperatorOp =
    LstmOperator<GruBackwardOp, ::rudnn::kGruBackwardLeadingOperands, true>;

/// A call's form, as a GRU's.
::rudnn::LstmForm gruForm(const ::rudnn::CallDescription &call) {
  ::rudnn::LstmForm form = callForm(call);
  form.gru = true;
  return form;
}

} // namespace

//===----------------------------------------------------------------------===//
// GruOp
//===----------------------------------------------------------------------===//

const ::rudnn::OperatorContract &GruOp::getContract() {
  return ::rudnn::gruContract({});
}

const ::rudnn::OperatorContract &GruOp::getOperatorContract() {
  return ::rudnn::gruContract(GruOperatorOp::form(*this));
}

const ::rudnn::OperatorContract &
GruOp::getCallContract(const ::rudnn::CallDescription &call) {
  return ::rudnn::gruContract(gruForm(call));
}

/// out, h_n, then hidden and gates with `save_states`.
Operation *GruOp::buildFromContract(OpBuilder &builder, Location loc,
                                    const ::rudnn::OperatorContract &,
                                    ArrayRef<Value> operands,
                                    ArrayRef<Type> results,
                                    ArrayRef<NamedAttribute> attributes) {
  const bool save = llvm::any_of(attributes, [](NamedAttribute a) {
    return a.getName() == "save_states" && isa<UnitAttr>(a.getValue());
  });
  return buildWithWeights(
      builder, loc, getOperationName(), operands, ::rudnn::kGruLeadingOperands,
      save ? results : results.take_front(std::min<size_t>(results.size(), 2)),
      attributes);
}

Value GruOp::getContractOperand(unsigned index) {
  return GruOperatorOp::contractOperand(*this, index);
}

Value GruOp::getContractResult(unsigned index) {
  return GruOperatorOp::contractResult(*this, index, 2, getSaved());
}

Value GruOp::getWeight(int64_t layer, int64_t direction, int which) {
  return GruOperatorOp::weight(*this, layer, direction, which);
}

LogicalResult GruOp::verify() {
  if (failed(checkWeightCount(*this, getNumLayers(), getDirections(),
                              getWeights().size())))
    return failure();
  const size_t saved = getSaveStates() ? 2 : 0;
  if (getSaved().size() != saved)
    return emitOpError() << "returns " << getSaved().size()
                         << " saved tensors, expected " << saved
                         << " (hidden and gates with 'save_states')";
  ShapeChecker shapes(*this, "IHGENLV");
  if (failed(verifyOperatorContract(*this, shapes)))
    return failure();
  return checkRecurrence(*this, getUnits(), lastDimOf(getHN()));
}

LogicalResult GruOp::specialize(TargetAttr target) {
  return GruOperatorOp::specializeForward(*this, target, kGruGates);
}

/// The recurrent family's layers with `cell "gru"`; the recurrences' c_n,
/// which a GRU never writes, go unused.
LogicalResult GruOp::decompose(OpBuilder &builder) {
  if (!getUnits() || !getWeightsOnChipAttr())
    return emitOpError() << "needs its recurrence's units: run "
                            "rudnn-specialize before rudnn-decompose";
  RecurrentStack stack{
      "gru",
      getX(),
      getH0(),
      Value(),
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
      {getOut().getType(), getHN().getType(), getHN().getType()},
      getSaved().getTypes()};
  RecurrentResults results = decomposeStack(
      builder, getLoc(), stack, [&](int64_t layer, int64_t d, int which) {
        return getWeight(layer, d, which);
      });
  getOut().replaceAllUsesWith(results.out);
  getHN().replaceAllUsesWith(results.hN);
  for (auto [mine, theirs] : llvm::zip_equal(getSaved(), results.saved))
    mine.replaceAllUsesWith(theirs);
  return success();
}

//===----------------------------------------------------------------------===//
// GruBackwardOp
//===----------------------------------------------------------------------===//

const ::rudnn::OperatorContract &GruBackwardOp::getContract() {
  return ::rudnn::gruBackwardContract({});
}

const ::rudnn::OperatorContract &GruBackwardOp::getOperatorContract() {
  return ::rudnn::gruBackwardContract(GruBackwardOperatorOp::form(*this));
}

const ::rudnn::OperatorContract &
GruBackwardOp::getCallContract(const ::rudnn::CallDescription &call) {
  return ::rudnn::gruBackwardContract(gruForm(call));
}

Operation *GruBackwardOp::buildFromContract(
    OpBuilder &builder, Location loc, const ::rudnn::OperatorContract &,
    ArrayRef<Value> operands, ArrayRef<Type> results,
    ArrayRef<NamedAttribute> attributes) {
  return buildWithWeights(builder, loc, getOperationName(), operands,
                          ::rudnn::kGruBackwardLeadingOperands, results,
                          attributes);
}

Value GruBackwardOp::getContractOperand(unsigned index) {
  return GruBackwardOperatorOp::contractOperand(*this, index);
}

Value GruBackwardOp::getContractResult(unsigned index) {
  return GruBackwardOperatorOp::contractResult(*this, index, 2, getDWeights());
}

Value GruBackwardOp::getWeight(int64_t layer, int64_t direction, int which) {
  return GruBackwardOperatorOp::weight(*this, layer, direction, which);
}

LogicalResult GruBackwardOp::verify() {
  return GruBackwardOperatorOp::verifyBackward(*this);
}

LogicalResult GruBackwardOp::specialize(TargetAttr target) {
  return GruBackwardOperatorOp::specializeBackward(*this, target, kGruGates);
}

LogicalResult GruBackwardOp::decompose(OpBuilder &builder) {
  if (!getUnits() || !getWeightsOnChipAttr())
    return emitOpError() << "needs its recurrence's units: run "
                            "rudnn-specialize before rudnn-decompose";
  RecurrentBackwardStack stack{"gru",
                               getX(),
                               getH0(),
                               Value(),
                               getLengths(),
                               getHidden(),
                               Value(),
                               getGates(),
                               getDOut(),
                               getDHN(),
                               Value(),
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
  for (auto [mine, theirs] : llvm::zip_equal(getDWeights(), gradients.dWeights))
    mine.replaceAllUsesWith(theirs);
  return success();
}

//===----------------------------------------------------------------------===//
// The generated op classes
//===----------------------------------------------------------------------===//

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define GET_OP_CLASSES
#include "dialects/IR/gru/RudnnGruOps.cpp.inc"
#pragma GCC diagnostic pop
