//===- LstmOperators.cpp - The LSTM's reference by name -------------------===//
//
// The adapters from contract names to the typed float64 reference, and
// their registration.
//
//===----------------------------------------------------------------------===//

#include "lib/reference/OperatorReferences.h"
#include "lib/reference/lstm/LstmReference.h"

using namespace rudnn;
using namespace rudnn::reference;

namespace {

/// The state_dict's tensors by their keys: "weight_ih_l0", ...,
/// "bias_hh_l1_reverse" (biases when present).
NamedValues lstm(const NamedValues &operands,
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
  auto optional = [&](const std::string &name) {
    auto it = operands.find(name);
    return it == operands.end() ? std::vector<double>() : it->second.data;
  };
  LstmInputs in{
      x.data, optional("h0"), optional("c0"), optional("lengths"), {}};
  for (int64_t layer = 0; layer < s.layers; ++layer)
    for (int64_t d = 0; d < s.directions; ++d) {
      const std::string suffix =
          "_l" + std::to_string(layer) + (d ? "_reverse" : "");
      in.weights.push_back({operand(operands, "weight_ih" + suffix).data,
                            operand(operands, "weight_hh" + suffix).data,
                            optional("bias_ih" + suffix),
                            optional("bias_hh" + suffix)});
    }
  LstmOutputs out = lstmForward(s, in);
  const int64_t width = s.directions * s.hiddenSize,
                states = s.layers * s.directions;
  std::vector<int64_t> outShape = {s.steps, s.batch, width};
  if (s.batchFirst)
    std::swap(outShape[0], outShape[1]);
  return {{"out", {outShape, out.out}},
          {"h_n", {{states, s.batch, s.hiddenSize}, out.hN}},
          {"c_n", {{states, s.batch, s.hiddenSize}, out.cN}}};
}

} // namespace

void rudnn::reference::registerLstmReferences(ReferenceRegistry &registry) {
  registry.add("rudnn.lstm", lstm);
}
