//===- LstmCall.h - Recurrent calls' operands by name -----------*- C++ -*-===//
//
// What the LSTM's and the GRU's adapters from contract names share: the
// shape and state_dict tensors of a call, and the gradients by name.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_LIB_REFERENCE_LSTM_LSTMCALL_H
#define RUDNN_LIB_REFERENCE_LSTM_LSTMCALL_H

#include "lib/reference/OperatorReferences.h"
#include "lib/reference/lstm/LstmReference.h"

namespace rudnn::reference {

/// The values of operand `name`, empty when the call has none.
std::vector<double> optionalOperand(const NamedValues &operands,
                                    const std::string &name);

/// The shape and inputs of a recurrent call: x, h0, c0 (the LSTM's),
/// lengths and the state_dict's tensors by their keys ("weight_ih_l0", …,
/// "bias_hh_l1_reverse", biases when present).
std::pair<LstmShape, LstmInputs>
lstmCall(const NamedValues &operands,
         const std::map<std::string, double> &attributes);

/// [T, B, width], or [B, T, width] batch first.
std::vector<int64_t> sequenceShape(const LstmShape &s, int64_t width);

/// Adds "d_" and each weight's key: `gates` rows a hidden unit.
void addWeightGradients(NamedValues &result, const LstmShape &s,
                        const std::vector<LstmWeights> &gradients,
                        int64_t gates);

} // namespace rudnn::reference

#endif // RUDNN_LIB_REFERENCE_LSTM_LSTMCALL_H
