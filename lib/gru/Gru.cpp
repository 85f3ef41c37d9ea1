//===- Gru.cpp - torch.nn.GRU through the JIT -----------------------------===//
//
// The typed entry points over callOperator, with the LSTM's checks
// (lib/lstm/RecurrentCall.h) on the GRU's contracts.
//
//===----------------------------------------------------------------------===//

#include "lib/lstm/RecurrentCall.h"

#include "rudnn/errors.h"
#include "rudnn/gru.h"

using namespace rudnn;
using namespace rudnn::recurrent;

namespace {

/// x, h0, lengths and the weights under their names.
NamedTensors inputTensors(const GruInputs &in) {
  NamedTensors tensors = {{"x", in.x}};
  addIfGiven(tensors, "h0", in.h0);
  addIfGiven(tensors, "lengths", in.lengths);
  for (const auto &[name, weight] : in.weights)
    tensors.emplace_back(name, weight);
  return tensors;
}

} // namespace

void rudnn::gruForward(Context &context, const GruInputs &in,
                       const GruOutputs &out, const GruOptions &options,
                       Stream stream) {
  RecurrentCall call = recurrentCall(true, in.weights, options);
  const OperatorContract &contract = gruContract(call.form);
  std::vector<const TensorView *> operands = {&in.x, viewOf(in.h0),
                                              viewOf(in.lengths)};
  for (const TensorView *weight :
       weightsInOrder(contract, in.weights, call.form, kGruLeadingOperands))
    operands.push_back(weight);
  const GruSaved *saved = out.saved ? &*out.saved : nullptr;
  DimSizes dims =
      checkCall(contract, operands,
                {&out.out, viewOf(out.hN), saved ? &saved->hidden : nullptr,
                 saved ? &saved->gates : nullptr});
  checkSizes(context, in.lengths, options, dims, stream);
  if (options.perStep)
    call.attributes.emplace_back("per_step", *options.perStep);
  NamedTensors tensors = inputTensors(in);
  tensors.emplace_back("out", out.out);
  addIfGiven(tensors, "h_n", out.hN);
  if (saved) {
    call.attributes.emplace_back("save_states", true);
    tensors.emplace_back("hidden", saved->hidden);
    tensors.emplace_back("gates", saved->gates);
  }
  callOperator(context, "rudnn.gru", call.attributes, tensors, stream);
}

void rudnn::gruBackward(Context &context, const GruInputs &in,
                        const GruSaved &saved,
                        const GruResultGradients &gradients,
                        const GruGradients &out, const GruOptions &options,
                        Stream stream) {
  RecurrentCall call = recurrentCall(true, in.weights, options, true);
  const OperatorContract &contract = gruBackwardContract(call.form);
  std::vector<const TensorView *> operands = {
      &in.x,        viewOf(in.h0),   viewOf(in.lengths),   &saved.hidden,
      &saved.gates, &gradients.dOut, viewOf(gradients.dHN)};
  for (const TensorView *weight : weightsInOrder(
           contract, in.weights, call.form, kGruBackwardLeadingOperands))
    operands.push_back(weight);
  std::vector<const TensorView *> results = {&out.dX, viewOf(out.dH0)};
  addGradients(results, contract, out.dWeights);
  DimSizes dims = checkCall(contract, operands, results);
  checkSizes(context, in.lengths, options, dims, stream);
  NamedTensors tensors = inputTensors(in);
  tensors.emplace_back("hidden", saved.hidden);
  tensors.emplace_back("gates", saved.gates);
  tensors.emplace_back("d_out", gradients.dOut);
  addIfGiven(tensors, "d_h_n", gradients.dHN);
  tensors.emplace_back("d_x", out.dX);
  addIfGiven(tensors, "d_h0", out.dH0);
  for (const auto &[name, view] : out.dWeights)
    tensors.emplace_back(name, view);
  callOperator(context, "rudnn.gru_backward", call.attributes, tensors, stream);
}
