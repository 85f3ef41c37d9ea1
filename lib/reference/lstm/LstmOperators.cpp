//===- LstmOperators.cpp - The LSTM's reference by name -------------------===//
//
// The adapters from contract names to the typed float64 reference, and
// their registration.
//
//===----------------------------------------------------------------------===//

#include "lib/reference/lstm/LstmCall.h"

using namespace rudnn;
using namespace rudnn::reference;

std::vector<double>
rudnn::reference::optionalOperand(const NamedValues &operands,
                                  const std::string &name) {
  auto it = operands.find(name);
  return it == operands.end() ? std::vector<double>() : it->second.data;
}

std::pair<LstmShape, LstmInputs>
rudnn::reference::lstmCall(const NamedValues &operands,
                           const std::map<std::string, double> &attributes) {
  LstmShape s;
  s.layers = static_cast<int64_t>(attribute(attributes, "num_layers"));
  s.directions = attributeOr(attributes, "bidirectional", 0) != 0 ? 2 : 1;
  s.batchFirst = attributeOr(attributes, "batch_first", 0) != 0;
  const Values &x = operand(operands, "x");
  s.steps = x.shape[s.batchFirst ? 1 : 0];
  s.batch = x.shape[s.batchFirst ? 0 : 1];
  s.inputSize = x.shape[2];
  s.hiddenSize = operand(operands, "weight_hh_l0").shape[1];
  LstmInputs in{x.data,
                optionalOperand(operands, "h0"),
                optionalOperand(operands, "c0"),
                optionalOperand(operands, "lengths"),
                {}};
  for (int64_t layer = 0; layer < s.layers; ++layer)
    for (int64_t d = 0; d < s.directions; ++d) {
      const std::string suffix =
          "_l" + std::to_string(layer) + (d ? "_reverse" : "");
      in.weights.push_back({operand(operands, "weight_ih" + suffix).data,
                            operand(operands, "weight_hh" + suffix).data,
                            optionalOperand(operands, "bias_ih" + suffix),
                            optionalOperand(operands, "bias_hh" + suffix)});
    }
  return {s, in};
}

std::vector<int64_t> rudnn::reference::sequenceShape(const LstmShape &s,
                                                     int64_t width) {
  return s.batchFirst ? std::vector<int64_t>{s.batch, s.steps, width}
                      : std::vector<int64_t>{s.steps, s.batch, width};
}

void rudnn::reference::addWeightGradients(
    NamedValues &result, const LstmShape &s,
    const std::vector<LstmWeights> &gradients, int64_t gates) {
  for (int64_t layer = 0; layer < s.layers; ++layer)
    for (int64_t d = 0; d < s.directions; ++d) {
      const std::string suffix =
          "_l" + std::to_string(layer) + (d ? "_reverse" : "");
      const LstmWeights &w = gradients[layer * s.directions + d];
      const int64_t rows = gates * s.hiddenSize,
                    width = layer ? s.directions * s.hiddenSize : s.inputSize;
      result["d_weight_ih" + suffix] = {{rows, width}, w.weightIh};
      result["d_weight_hh" + suffix] = {{rows, s.hiddenSize}, w.weightHh};
      if (!w.biasIh.empty()) {
        result["d_bias_ih" + suffix] = {{rows}, w.biasIh};
        result["d_bias_hh" + suffix] = {{rows}, w.biasHh};
      }
    }
}

namespace {

NamedValues lstm(const NamedValues &operands,
                 const std::map<std::string, double> &attributes) {
  auto [s, in] = lstmCall(operands, attributes);
  LstmOutputs out = lstmForward(s, in);
  const int64_t width = s.directions * s.hiddenSize,
                states = s.layers * s.directions;
  return {{"out", {sequenceShape(s, width), out.out}},
          {"h_n", {{states, s.batch, s.hiddenSize}, out.hN}},
          {"c_n", {{states, s.batch, s.hiddenSize}, out.cN}},
          {"hidden", {{s.layers, s.steps, s.batch, width}, out.hidden}},
          {"cells", {{states, s.steps, s.batch, s.hiddenSize}, out.cells}},
          {"gates", {{states, s.steps, s.batch, 4 * s.hiddenSize}, out.gates}}};
}

/// The gradients, named as the contract names them: d_x, d_h0, d_c0 and
/// "d_" and each weight's key.
NamedValues lstmBackwardCall(const NamedValues &operands,
                             const std::map<std::string, double> &attributes) {
  auto [s, in] = lstmCall(operands, attributes);
  LstmOutputGradients given{operand(operands, "d_out").data,
                            optionalOperand(operands, "d_h_n"),
                            optionalOperand(operands, "d_c_n")};
  LstmGradients grads = lstmBackward(s, in, given);
  const int64_t states = s.layers * s.directions;
  NamedValues result = {{"d_x", {sequenceShape(s, s.inputSize), grads.x}},
                        {"d_h0", {{states, s.batch, s.hiddenSize}, grads.h0}},
                        {"d_c0", {{states, s.batch, s.hiddenSize}, grads.c0}}};
  addWeightGradients(result, s, grads.weights, 4);
  return result;
}

} // namespace

void rudnn::reference::registerLstmReferences(ReferenceRegistry &registry) {
  registry.add("rudnn.lstm", lstm);
  registry.add("rudnn.lstm_backward", lstmBackwardCall);
}
