//===- LstmInterfaces.h - What the LSTM's op sources share ------*- C++ -*-===//

#ifndef RUDNN_DIALECTS_IR_LSTM_LSTMINTERFACES_H
#define RUDNN_DIALECTS_IR_LSTM_LSTMINTERFACES_H

#include "dialects/IR/RudnnOps.h"

#include <optional>

namespace mlir::rudnn::lstm {

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

/// The recurrence's form: units within H, W_hh on chip only for a
/// persistent grid.
LogicalResult checkRecurrence(Operation *op, std::optional<uint64_t> units,
                              int64_t hidden, bool weightsOnChip, bool perStep);

} // namespace mlir::rudnn::lstm

#endif // RUDNN_DIALECTS_IR_LSTM_LSTMINTERFACES_H
