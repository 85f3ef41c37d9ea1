//===- LstmInterfaces.h - What the LSTM's op sources share ------*- C++ -*-===//

#ifndef RUDNN_DIALECTS_IR_LSTM_LSTMINTERFACES_H
#define RUDNN_DIALECTS_IR_LSTM_LSTMINTERFACES_H

#include "dialects/IR/RudnnOps.h"
#include "dialects/IR/ShapeChecker.h"
#include "dialects/IR/lstm/LstmContracts.h"
#include "dialects/IR/lstm/LstmPolicy.h"

#include <optional>

namespace mlir::rudnn::lstm {

/// The gates of a primitive's `cell`: 4 for "lstm", 3 for "gru".
int64_t cellGates(StringRef cell);

/// The gate-gradient columns of a backward row, in hidden sizes: the
/// LSTM's 4 serve both weights, the GRU's input side and recurrent side
/// are 3 each.
int64_t cellGradientColumns(StringRef cell);

/// A primitive's `cell` is "lstm" or "gru".
LogicalResult checkCell(Operation *op, StringRef cell);

/// The innermost dim of a ranked tensor value.
int64_t lastDimOf(Value value);

/// [T, B] of a sequence `value`, batch first or not.
std::pair<int64_t, int64_t> stepsAndBatch(Value value, bool batchFirst);

/// Builds op `name` from a contract whose first `leading` operands are one
/// ODS group each (null: an empty group) and whose weights that follow are
/// one group.
Operation *buildWithWeights(OpBuilder &builder, Location loc, StringRef name,
                            ArrayRef<Value> operands, unsigned leading,
                            ArrayRef<Type> results,
                            ArrayRef<NamedAttribute> attributes);

/// The recurrence's form: units within H.
LogicalResult checkRecurrence(Operation *op, std::optional<uint64_t> units,
                              int64_t hidden);

/// The form of a call of an LSTM operator, before any IR exists (a layer
/// count the verifier refuses picks one layer: the call is refused rather
/// than a contract sized for it).
::rudnn::LstmForm callForm(const ::rudnn::CallDescription &call);

/// Optional packed lengths: [B] i32.
LogicalResult checkLengths(Operation *op, ShapeChecker &shapes, Value lengths);

/// The layer count bounded first (the weight count multiplies it), then
/// the state_dict's 2 or 4 tensors per layer and direction.
LogicalResult checkWeightCount(Operation *op, uint64_t layers,
                               int64_t directions, size_t weights);

/// Applies a recurrence policy (units, weights_on_chip, the reason as
/// `policy`) or says why there is none.
LogicalResult applyPolicy(Operation *op,
                          const std::optional<LstmRecurrencePolicy> &policy,
                          int64_t hidden, bool unitsGiven, TargetAttr target);

/// What decomposing a stack of recurrent layers needs of its operator op.
struct RecurrentStack {
  StringRef cell; // "lstm" or "gru"
  Value x, h0, c0, lengths;
  int64_t layers, directions, hidden;
  bool batchFirst, perStep, wgmmaProjection;
  bool tf32; // f32 products may round their operands to TF32
  IntegerAttr units;
  BoolAttr weightsOnChip;
  StringAttr policy;
  SmallVector<Type, 3> resultTypes; // out, h_n, c_n (h_n's type for a GRU)
  TypeRange savedTypes;
};

/// The values a decomposed stack's last recurrence leaves (cN null for a
/// GRU).
struct RecurrentResults {
  Value out, hN, cN;
  SmallVector<Value, 3> saved;
};

/// Per layer: rudnn.rnn_projection → rudnn.rnn_recurrence, the recurrences
/// chained through h_n, c_n and the saved tensors (each writes its
/// slices). `weight(layer, direction, which)` as LstmOperator::weight.
RecurrentResults
decomposeStack(OpBuilder &builder, Location loc, const RecurrentStack &stack,
               llvm::function_ref<Value(int64_t, int64_t, int)> weight);

/// What decomposing the backward of a stack needs of its operator op.
struct RecurrentBackwardStack {
  StringRef cell;
  Value x, h0, c0, lengths;
  Value hidden, cells, gates; // what the forward saved (cells: LSTM only)
  Value dOut, dHN, dCN;
  int64_t layers, directions, hiddenSize;
  bool batchFirst, biases;
  bool tf32; // the GEMMs' f32 products may round their operands to TF32
  IntegerAttr units;
  BoolAttr weightsOnChip;
  StringAttr policy;
  Type dXType, statesType; // d_x's, and d_h0's (and d_c0's)
};

/// The gradients a decomposed backward leaves (dC0 null for a GRU).
struct RecurrentGradients {
  Value dX, dH0, dC0;
  SmallVector<Value> dWeights;
};

/// From the last layer down: the recurrence backwards (its gates
/// recomputed first where an LSTM saved none), the weight gradients and
/// the input gradient, the layer below's output gradient.
RecurrentGradients
decomposeBackwardStack(OpBuilder &builder, Location loc,
                       const RecurrentBackwardStack &stack,
                       llvm::function_ref<Value(int64_t, int64_t, int)> weight);

/// The pieces a recurrent operator op (rudnn.lstm, rudnn.gru and their
/// backwards) shares:
/// its form, and its operands past the `Leading` ones being the
/// state_dict's tensors in order.
template <typename Op, unsigned Leading, bool Gru = false> struct LstmOperator {
  static ::rudnn::LstmForm form(Op op) {
    return {static_cast<int64_t>(op.getNumLayers()), op.getBidirectional(),
            op.hasBiases(), op.getBatchFirst(), Gru};
  }

  /// The contract operand `index`: a leading group, or a weight.
  static Value contractOperand(Op op, unsigned index) {
    if (index < Leading) {
      auto group = op.getODSOperands(index);
      return group.empty() ? Value() : group.front();
    }
    return index - Leading < op.getWeights().size()
               ? op.getWeights()[index - Leading]
               : Value();
  }

  /// Weight `which` (0 weight_ih, 1 weight_hh, 2 bias_ih, 3 bias_hh) of a
  /// layer and direction; null for an absent bias.
  static Value weight(Op op, int64_t layer, int64_t direction, int which) {
    const int64_t perDirection = op.hasBiases() ? 4 : 2;
    if (which >= perDirection)
      return {};
    return op
        .getWeights()[(layer * op.getDirections() + direction) * perDirection +
                      which];
  }

  /// The contract result `index`: one of the first `fixed` results, or one
  /// of `rest` after them.
  static Value contractResult(Op op, unsigned index, unsigned fixed,
                              ValueRange rest) {
    if (index < fixed)
      return op->getResult(index);
    return index - fixed < rest.size() ? rest[index - fixed] : Value();
  }

  /// The element size of x, in bytes.
  static int64_t elementBytes(Op op) {
    return cast<RankedTensorType>(op.getX().getType())
               .getElementTypeBitWidth() /
           8;
  }

  /// Whether f32 products may round their operands to TF32: as given, else
  /// PyTorch's cuDNN default (true); never for 16-bit inputs.
  static bool allowTf32(Op op) {
    return elementBytes(op) == 4 && op.getAllowTf32().value_or(true);
  }

  /// A forward's persistent recurrence or one launch a step, for a target
  /// (`gates` rows a unit), as chooseLstmRecurrence says.
  static LogicalResult specializeForward(Op op, TargetAttr target,
                                         int64_t gates) {
    const int64_t hidden = lastDimOf(op.getHN());
    const bool tf32 = allowTf32(op);
    std::optional<LstmRecurrencePolicy> policy = chooseLstmRecurrence(
        hidden, op.getDirections(), elementBytes(op), target.getSmemPerBlock(),
        target.getSmCount(),
        op.getUnits() ? std::optional<int64_t>(*op.getUnits()) : std::nullopt,
        op.getWeightsOnChip(), op.getPerStep(), gates, tf32);
    if (failed(
            applyPolicy(op, policy, hidden, op.getUnits().has_value(), target)))
      return failure();
    Builder builder(op.getContext());
    op.setPerStepAttr(builder.getBoolAttr(policy->perStep));
    if (elementBytes(op) == 4)
      op.setAllowTf32Attr(builder.getBoolAttr(tf32));
    std::optional<LstmProjectionPolicy> projection = chooseLstmProjection(
        elementBytes(op), target.getComputeCapability(),
        target.getSmemPerBlock(), op.getWgmmaProjection(), tf32);
    if (!projection)
      return op.emitOpError()
             << "'wgmma_projection' needs 16-bit inputs (or f32 with "
                "'allow_tf32') on an sm_90 target with "
             << kLstmWgmmaProjectionSharedBytes
             << " bytes of shared memory a block";
    op.setWgmmaProjectionAttr(builder.getBoolAttr(projection->wgmma));
    op->setAttr("policy", builder.getStringAttr(policy->reason + "; " +
                                                projection->reason));
    return success();
  }

  /// A backward's persistent recurrence, as chooseLstmBackwardRecurrence
  /// says.
  static LogicalResult specializeBackward(Op op, TargetAttr target,
                                          int64_t gates) {
    const int64_t hidden = lastDimOf(op.getDH0());
    std::optional<LstmRecurrencePolicy> policy = chooseLstmBackwardRecurrence(
        hidden, op.getDirections(), elementBytes(op), target.getSmemPerBlock(),
        target.getSmCount(),
        op.getUnits() ? std::optional<int64_t>(*op.getUnits()) : std::nullopt,
        op.getWeightsOnChip(), gates);
    if (elementBytes(op) == 4)
      op.setAllowTf32Attr(Builder(op.getContext()).getBoolAttr(allowTf32(op)));
    return applyPolicy(op, policy, hidden, op.getUnits().has_value(), target);
  }

  /// A backward's rules: the state_dict's count, one gradient a weight,
  /// its contract and its recurrence's form.
  static LogicalResult verifyBackward(Op op) {
    const size_t weights = op.getWeights().size();
    if (failed(checkWeightCount(op, op.getNumLayers(), op.getDirections(),
                                weights)))
      return failure();
    if (op.getDWeights().size() != weights)
      return op.emitOpError()
             << "returns " << op.getDWeights().size()
             << " weight gradients for " << weights << " weights";
    ShapeChecker shapes(op, "IHGENLV");
    if (failed(verifyOperatorContract(op, shapes)))
      return failure();
    return checkRecurrence(op, op.getUnits(), lastDimOf(op.getDH0()));
  }
};

} // namespace mlir::rudnn::lstm

#endif // RUDNN_DIALECTS_IR_LSTM_LSTMINTERFACES_H
