//===- RecurrentCall.h - What the LSTM's and GRU's calls share --*- C++ -*-===//
//
// The checks of a recurrent call in its own terms: the form and attributes
// from the options and the state_dict's keys, the weights in the
// contract's order, the sizes and lengths, the gradients by key.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_LIB_LSTM_RECURRENTCALL_H
#define RUDNN_LIB_LSTM_RECURRENTCALL_H

#include "runtime/checks/ContractChecks.h"

#include "dialects/IR/lstm/LstmContracts.h"

#include "rudnn/lstm.h"
#include "rudnn/operator.h"

namespace rudnn::recurrent {

/// A call's form and its operator attributes.
struct RecurrentCall {
  LstmForm form;
  OperatorAttributes attributes;
};

/// The form (biases as the state_dict has them) and the attributes of a
/// call with `options`; throws for a layer count outside 1 to 64, and for
/// `perStep` in a `backward` call (its recurrence is always persistent).
RecurrentCall recurrentCall(bool gru,
                            const std::map<std::string, TensorView> &weights,
                            const LstmOptions &options, bool backward = false);

/// The contract's weights from `given`, in its order past `leading`
/// operands; throws for a missing or unknown key.
std::vector<const TensorView *>
weightsInOrder(const OperatorContract &contract,
               const std::map<std::string, TensorView> &given,
               const LstmForm &form, size_t leading);

/// Appends the contract's gradient results past those in `results` from
/// `given` by name (null where absent); throws for an unknown name.
void addGradients(std::vector<const TensorView *> &results,
                  const OperatorContract &contract,
                  const std::map<std::string, TensorView> &given);

/// Checks T, B, the units and (unless told not to) the lengths of a call
/// whose dims are `dims`.
void checkSizes(Context &context, const std::optional<TensorView> &lengths,
                const LstmOptions &options, DimSizes &dims, Stream stream);

} // namespace rudnn::recurrent

#endif // RUDNN_LIB_LSTM_RECURRENTCALL_H
