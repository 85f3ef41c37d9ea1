//===- Lstm.cpp - torch.nn.LSTM through the JIT ---------------------------===//
//
// The typed entry points over callOperator: match the weights given by
// state_dict key to the contract of the LSTM's form and validate the call
// (and, unless told not to, the lengths) with messages in its own terms. T,
// B and the strides are read from the views. The GRU's (lib/gru) share
// the checks.
//
//===----------------------------------------------------------------------===//

#include "lib/lstm/RecurrentCall.h"

#include "rudnn/errors.h"
#include "rudnn/lstm.h"
#include "rudnn/operator.h"

using namespace rudnn;
using namespace rudnn::recurrent;

namespace {

/// "a 2-layer bidirectional LSTM with biases".
std::string describe(const LstmForm &form, bool withBiases) {
  return "a " + std::to_string(form.layers) + "-layer " +
         (form.bidirectional ? "bidirectional " : "") +
         (form.gru ? "GRU" : "LSTM") +
         (withBiases && form.biases ? " with biases" : "");
}

} // namespace

std::vector<const TensorView *>
rudnn::recurrent::weightsInOrder(const OperatorContract &contract,
                                 const std::map<std::string, TensorView> &given,
                                 const LstmForm &form, size_t leading) {
  std::vector<const TensorView *> ordered;
  for (size_t k = leading; k < contract.operands.size(); ++k) {
    auto it = given.find(std::string(contract.operands[k].name));
    if (it == given.end())
      throw InvalidArgument(
          "'" + std::string(contract.operands[k].name) +
          "' is missing: " + describe(form, true) + " takes " +
          std::to_string(contract.operands.size() - leading) + " weights");
    ordered.push_back(&it->second);
  }
  if (given.size() != ordered.size())
    for (const auto &[name, view] : given)
      if (contract.operandIndex(name) < int(leading))
        throw InvalidArgument("unknown weight '" + name + "' for " +
                              describe(form, false));
  return ordered;
}

namespace {

/// Throws for a length outside [0, T]: a synchronising read.
void checkLengths(Context &context, const TensorView &lengths, int64_t steps,
                  Stream stream) {
  std::vector<int32_t> values(lengths.shape.at(0));
  if (values.empty())
    return;
  context.copyToHost(values.data(), lengths.data,
                     values.size() * sizeof(int32_t), stream);
  context.synchronize(stream);
  for (size_t b = 0; b < values.size(); ++b)
    if (values[b] < 0 || values[b] > steps)
      throw InvalidArgument("'lengths'[" + std::to_string(b) + "] is " +
                            std::to_string(values[b]) +
                            ", expected 0 to T = " + std::to_string(steps));
}

} // namespace

RecurrentCall rudnn::recurrent::recurrentCall(
    bool gru, const std::map<std::string, TensorView> &weights,
    const LstmOptions &options, bool backward) {
  if (backward && options.perStep.value_or(false))
    throw InvalidArgument("'perStep': the backward recurrence runs on one "
                          "persistent grid");
  if (options.numLayers < 1 || options.numLayers > 64)
    throw InvalidArgument("'numLayers' must be 1 to 64, got " +
                          std::to_string(options.numLayers));
  // Biases or not: as the state_dict has them.
  RecurrentCall call{{options.numLayers, options.bidirectional,
                      weights.count("bias_ih_l0") > 0, options.batchFirst, gru},
                     {{"num_layers", options.numLayers},
                      {"bidirectional", options.bidirectional},
                      {"batch_first", options.batchFirst}}};
  if (options.units)
    call.attributes.emplace_back("units", options.units);
  if (options.weightsOnChip)
    call.attributes.emplace_back("weights_on_chip", *options.weightsOnChip);
  if (options.allowTf32)
    call.attributes.emplace_back("allow_tf32", *options.allowTf32);
  return call;
}

void rudnn::recurrent::checkSizes(Context &context,
                                  const std::optional<TensorView> &lengths,
                                  const LstmOptions &options, DimSizes &dims,
                                  Stream stream) {
  for (char letter : {'T', 'B'})
    if (dims[letter] > INT32_MAX / 2)
      throw InvalidArgument(std::string("dim ") + letter +
                            " must be below 2^30");
  if (options.units < 0 || options.units > dims['H'])
    throw InvalidArgument("'units' must be 0 (the target's choice) or 1 to "
                          "the hidden size " +
                          std::to_string(dims['H']) + ", got " +
                          std::to_string(options.units));
  if (lengths && options.checkLengths)
    checkLengths(context, *lengths, dims['T'], stream);
}

void rudnn::recurrent::addGradients(
    std::vector<const TensorView *> &results, const OperatorContract &contract,
    const std::map<std::string, TensorView> &given) {
  const size_t leading = results.size();
  for (size_t k = leading; k < contract.results.size(); ++k) {
    auto it = given.find(std::string(contract.results[k].name));
    results.push_back(it == given.end() ? nullptr : &it->second);
  }
  for (const auto &[name, view] : given)
    if (contract.resultIndex(name) < int(leading))
      throw InvalidArgument("unknown gradient '" + name +
                            "': expected \"d_\" "
                            "and a weight's key, e.g. \"d_weight_ih_l0\"");
}

namespace {

/// x, h0, c0, lengths and the weights under their names.
NamedTensors inputTensors(const LstmInputs &in) {
  NamedTensors tensors = {{"x", in.x}};
  addIfGiven(tensors, "h0", in.h0);
  addIfGiven(tensors, "c0", in.c0);
  addIfGiven(tensors, "lengths", in.lengths);
  for (const auto &[name, weight] : in.weights)
    tensors.emplace_back(name, weight);
  return tensors;
}

void addSaved(NamedTensors &tensors, const LstmSaved &saved) {
  tensors.emplace_back("hidden", saved.hidden);
  tensors.emplace_back("cells", saved.cells);
  addIfGiven(tensors, "gates", saved.gates);
}

} // namespace

void rudnn::lstmForward(Context &context, const LstmInputs &in,
                        const LstmOutputs &out, const LstmOptions &options,
                        Stream stream) {
  RecurrentCall call = recurrentCall(false, in.weights, options);
  const OperatorContract &contract = lstmContract(call.form);
  std::vector<const TensorView *> operands = {
      &in.x, viewOf(in.h0), viewOf(in.c0), viewOf(in.lengths)};
  for (const TensorView *weight :
       weightsInOrder(contract, in.weights, call.form, kLstmLeadingOperands))
    operands.push_back(weight);
  const LstmSaved *saved = out.saved ? &*out.saved : nullptr;
  DimSizes dims = checkCall(contract, operands,
                            {&out.out, viewOf(out.hN), viewOf(out.cN),
                             saved ? &saved->hidden : nullptr,
                             saved ? &saved->cells : nullptr,
                             saved ? viewOf(saved->gates) : nullptr});
  checkSizes(context, in.lengths, options, dims, stream);
  if (options.perStep)
    call.attributes.emplace_back("per_step", *options.perStep);
  NamedTensors tensors = inputTensors(in);
  tensors.emplace_back("out", out.out);
  addIfGiven(tensors, "h_n", out.hN);
  addIfGiven(tensors, "c_n", out.cN);
  if (saved) {
    call.attributes.emplace_back("save_states", true);
    if (saved->gates)
      call.attributes.emplace_back("save_gates", true);
    addSaved(tensors, *saved);
  }
  callOperator(context, "rudnn.lstm", call.attributes, tensors, stream);
}

void rudnn::lstmBackward(Context &context, const LstmInputs &in,
                         const LstmSaved &saved,
                         const LstmResultGradients &gradients,
                         const LstmGradients &out, const LstmOptions &options,
                         Stream stream) {
  RecurrentCall call = recurrentCall(false, in.weights, options, true);
  const OperatorContract &contract = lstmBackwardContract(call.form);
  std::vector<const TensorView *> operands = {&in.x,
                                              viewOf(in.h0),
                                              viewOf(in.c0),
                                              viewOf(in.lengths),
                                              &saved.hidden,
                                              &saved.cells,
                                              viewOf(saved.gates),
                                              &gradients.dOut,
                                              viewOf(gradients.dHN),
                                              viewOf(gradients.dCN)};
  for (const TensorView *weight : weightsInOrder(
           contract, in.weights, call.form, kLstmBackwardLeadingOperands))
    operands.push_back(weight);
  std::vector<const TensorView *> results = {&out.dX, viewOf(out.dH0),
                                             viewOf(out.dC0)};
  addGradients(results, contract, out.dWeights);
  DimSizes dims = checkCall(contract, operands, results);
  checkSizes(context, in.lengths, options, dims, stream);
  NamedTensors tensors = inputTensors(in);
  addSaved(tensors, saved);
  tensors.emplace_back("d_out", gradients.dOut);
  addIfGiven(tensors, "d_h_n", gradients.dHN);
  addIfGiven(tensors, "d_c_n", gradients.dCN);
  tensors.emplace_back("d_x", out.dX);
  addIfGiven(tensors, "d_h0", out.dH0);
  addIfGiven(tensors, "d_c0", out.dC0);
  for (const auto &[name, view] : out.dWeights)
    tensors.emplace_back(name, view);
  callOperator(context, "rudnn.lstm_backward", call.attributes, tensors,
               stream);
}
