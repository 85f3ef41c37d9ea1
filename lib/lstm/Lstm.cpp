//===- Lstm.cpp - torch.nn.LSTM's forward through the JIT -----------------===//
//
// The typed entry point over callOperator: matches the weights given by
// state_dict key to the contract of the LSTM's form and validates the call
// (and, unless told not to, the lengths) with messages in its own terms. T,
// B and the strides are read from the views.
//
//===----------------------------------------------------------------------===//

#include "runtime/checks/ContractChecks.h"

#include "dialects/IR/lstm/LstmContracts.h"

#include "rudnn/errors.h"
#include "rudnn/lstm.h"
#include "rudnn/operator.h"

using namespace rudnn;

namespace {

/// The contract's weights from `given`, in its order; throws for a missing
/// or unknown key.
std::vector<const TensorView *>
weightsInOrder(const OperatorContract &contract,
               const std::map<std::string, TensorView> &given,
               const LstmForm &form) {
  std::vector<const TensorView *> ordered;
  for (size_t k = kLstmLeadingOperands; k < contract.operands.size(); ++k) {
    auto it = given.find(std::string(contract.operands[k].name));
    if (it == given.end())
      throw InvalidArgument(
          "'" + std::string(contract.operands[k].name) + "' is missing: a " +
          std::to_string(form.layers) + "-layer " +
          (form.bidirectional ? "bidirectional " : "") + "LSTM" +
          (form.biases ? " with biases" : "") + " takes " +
          std::to_string(contract.operands.size() - kLstmLeadingOperands) +
          " weights");
    ordered.push_back(&it->second);
  }
  if (given.size() != ordered.size())
    for (const auto &[name, view] : given)
      if (contract.operandIndex(name) < int(kLstmLeadingOperands))
        throw InvalidArgument("unknown weight '" + name + "' for a " +
                              std::to_string(form.layers) + "-layer " +
                              (form.bidirectional ? "bidirectional " : "") +
                              "LSTM");
  return ordered;
}

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

void rudnn::lstmForward(Context &context, const LstmInputs &in,
                        const LstmOutputs &out, const LstmOptions &options,
                        Stream stream) {
  if (options.numLayers < 1 || options.numLayers > 64)
    throw InvalidArgument("'numLayers' must be 1 to 64, got " +
                          std::to_string(options.numLayers));
  // Biases or not: as the state_dict has them.
  LstmForm form{options.numLayers, options.bidirectional,
                in.weights.count("bias_ih_l0") > 0, options.batchFirst};
  const OperatorContract &contract = lstmContract(form);
  std::vector<const TensorView *> operands = {
      &in.x, viewOf(in.h0), viewOf(in.c0), viewOf(in.lengths)};
  for (const TensorView *weight : weightsInOrder(contract, in.weights, form))
    operands.push_back(weight);
  DimSizes dims =
      checkCall(contract, operands, {&out.out, viewOf(out.hN), viewOf(out.cN)});
  for (char letter : {'T', 'B'})
    if (dims[letter] > INT32_MAX / 2)
      throw InvalidArgument(std::string("dim ") + letter +
                            " must be below 2^30");
  if (options.units < 0 || options.units > dims['H'])
    throw InvalidArgument("'units' must be 0 (the target's choice) or 1 to "
                          "the hidden size " +
                          std::to_string(dims['H']) + ", got " +
                          std::to_string(options.units));
  if (in.lengths && options.checkLengths)
    checkLengths(context, *in.lengths, dims['T'], stream);

  OperatorAttributes attributes = {{"num_layers", options.numLayers},
                                   {"bidirectional", options.bidirectional},
                                   {"batch_first", options.batchFirst}};
  if (options.units)
    attributes.emplace_back("units", options.units);
  if (options.weightsOnChip)
    attributes.emplace_back("weights_on_chip", *options.weightsOnChip);
  if (options.perStep)
    attributes.emplace_back("per_step", *options.perStep);
  NamedTensors tensors = {{"x", in.x}, {"out", out.out}};
  addIfGiven(tensors, "h0", in.h0);
  addIfGiven(tensors, "c0", in.c0);
  addIfGiven(tensors, "lengths", in.lengths);
  addIfGiven(tensors, "h_n", out.hN);
  addIfGiven(tensors, "c_n", out.cN);
  for (const auto &[name, weight] : in.weights)
    tensors.emplace_back(name, weight);
  callOperator(context, "rudnn.lstm", attributes, tensors, stream);
}
