//===- GruOperators.cpp - The GRU's reference by name ---------------------===//
//
// The adapters from contract names to the typed float64 reference, and
// their registration.
//
//===----------------------------------------------------------------------===//

#include "lib/reference/gru/GruReference.h"
#include "lib/reference/lstm/LstmCall.h"

using namespace rudnn;
using namespace rudnn::reference;

namespace {

std::pair<LstmShape, GruInputs>
gruCall(const NamedValues &operands,
        const std::map<std::string, double> &attributes) {
  auto [s, in] = lstmCall(operands, attributes);
  return {s, GruInputs{in.x, in.h0, in.lengths, in.weights}};
}

NamedValues gru(const NamedValues &operands,
                const std::map<std::string, double> &attributes) {
  auto [s, in] = gruCall(operands, attributes);
  GruOutputs out = gruForward(s, in);
  const int64_t width = s.directions * s.hiddenSize,
                states = s.layers * s.directions;
  return {{"out", {sequenceShape(s, width), out.out}},
          {"h_n", {{states, s.batch, s.hiddenSize}, out.hN}},
          {"hidden", {{s.layers, s.steps, s.batch, width}, out.hidden}},
          {"gates", {{states, s.steps, s.batch, 4 * s.hiddenSize}, out.gates}}};
}

NamedValues gruBackwardCall(const NamedValues &operands,
                            const std::map<std::string, double> &attributes) {
  auto [s, in] = gruCall(operands, attributes);
  GruGradients grads = gruBackward(
      s, in,
      {operand(operands, "d_out").data, optionalOperand(operands, "d_h_n")});
  NamedValues result = {
      {"d_x", {sequenceShape(s, s.inputSize), grads.x}},
      {"d_h0", {{s.layers * s.directions, s.batch, s.hiddenSize}, grads.h0}}};
  addWeightGradients(result, s, grads.weights, 3);
  return result;
}

} // namespace

void rudnn::reference::registerGruReferences(ReferenceRegistry &registry) {
  registry.add("rudnn.gru", gru);
  registry.add("rudnn.gru_backward", gruBackwardCall);
}
