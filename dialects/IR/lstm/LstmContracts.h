//===- LstmContracts.h - The LSTM operator's contracts ----------*- C++ -*-===//

#ifndef RUDNN_DIALECTS_IR_LSTM_LSTMCONTRACTS_H
#define RUDNN_DIALECTS_IR_LSTM_LSTMCONTRACTS_H

#include "dialects/IR/OperatorContract.h"

#include <string>

namespace rudnn {

/// Largest hidden size of rudnn.lstm: the recurrence stages eight entries'
/// hidden states (fp32) in shared memory.
inline constexpr int64_t kLstmMaxHidden = 4096;

/// Most layers of rudnn.lstm: far past any model, and small enough that
/// the counts of its weights and states never overflow.
inline constexpr int64_t kLstmMaxLayers = 1024;

/// Operands of rudnn.lstm before the state_dict's tensors: x, h0, c0,
/// lengths. Its results: out, h_n, c_n, then what it saves (hidden, cells,
/// gates).
inline constexpr unsigned kLstmLeadingOperands = 4;

/// What an LSTM's (or a GRU's) operands depend on.
struct LstmForm {
  int64_t layers = 1;
  bool bidirectional = false, biases = true, batchFirst = false;
  bool gru = false; // rudnn.gru's contracts

  int64_t directions() const { return bidirectional ? 2 : 1; }
};

/// The state_dict key of weight `which` (0 weight_ih, 1 weight_hh, 2
/// bias_ih, 3 bias_hh) of layer `layer`, direction `direction`:
/// "weight_ih_l0", "bias_hh_l1_reverse".
std::string lstmWeightName(int which, int64_t layer, int64_t direction);

/// rudnn.lstm of that form: x [T, B, I] (or [B, T, I]), h0 and c0
/// [L·D, B, H], lengths [B], then the state_dict's tensors in its order ->
/// out [T, B, D·H] (or [B, T, D·H]), h_n, c_n [L·D, B, H]. Contracts live
/// as long as the process.
const OperatorContract &lstmContract(const LstmForm &form);

/// Operands of rudnn.lstm_backward before the state_dict's tensors: x, h0,
/// c0, lengths, hidden, cells, gates, d_out, d_h_n, d_c_n.
inline constexpr unsigned kLstmBackwardLeadingOperands = 10;

/// rudnn.lstm_backward of that form: rudnn.lstm's operands, its saved
/// hidden, cells and (optionally) gates, the gradients of its results,
/// then the weights -> d_x, d_h0, d_c0 and each weight's gradient ("d_"
/// and its key), in the state_dict's order.
const OperatorContract &lstmBackwardContract(const LstmForm &form);

/// Operands of rudnn.gru before the state_dict's tensors: x, h0, lengths.
/// Its results: out, h_n, then what it saves (hidden, gates).
inline constexpr unsigned kGruLeadingOperands = 3;

/// rudnn.gru of that form: rudnn.lstm's contract without c0, c_n and the
/// cells, three gates r, z, n a unit; it saves hidden and gates [L·D, T,
/// B, 4H] (r, z, n and W_hn h + b_hn).
const OperatorContract &gruContract(LstmForm form);

/// Operands of rudnn.gru_backward before the state_dict's tensors: x, h0,
/// lengths, hidden, gates, d_out, d_h_n.
inline constexpr unsigned kGruBackwardLeadingOperands = 7;

/// rudnn.gru_backward of that form -> d_x, d_h0 and each weight's gradient.
const OperatorContract &gruBackwardContract(LstmForm form);

} // namespace rudnn

#endif // RUDNN_DIALECTS_IR_LSTM_LSTMCONTRACTS_H
