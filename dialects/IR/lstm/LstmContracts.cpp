//===- LstmContracts.cpp - The contracts of rudnn.lstm and rudnn.gru ------===//
//
// An LSTM's or GRU's operands are the state_dict's tensors, so how many
// there are and what they are called depend on its layers, directions and
// biases: one contract per form, built on first use and kept. The GRU's
// are the LSTM's without the cell states, with three gates.
//
//===----------------------------------------------------------------------===//

#include "dialects/IR/lstm/LstmContracts.h"

#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>

using namespace rudnn;

namespace {

/// A contract and the strings its views point into.
struct StoredContract {
  std::deque<std::string> names;
  OperatorContract contract;

  std::string_view keep(std::string name) {
    names.push_back(std::move(name));
    return names.back();
  }
};

/// rudnn.lstm or rudnn.gru (or, `backward`, their gradients) of that form.
std::unique_ptr<StoredContract> build(const LstmForm &form, bool backward) {
  auto stored = std::make_unique<StoredContract>();
  OperatorContract &c = stored->contract;
  const int64_t directions = form.directions();
  const bool gru = form.gru;
  const std::string forward = gru ? "rudnn.gru" : "rudnn.lstm";
  c.op = stored->keep(backward ? forward + "_backward" : forward);
  c.summary = stored->keep(
      backward
          ? "The gradients of " + forward + ": backpropagation through time"
          : std::string("A stacked, optionally bidirectional ") +
                (gru ? "GRU as torch.nn.GRU" : "LSTM as torch.nn.LSTM"));
  DimContract gates{
      'G', "gate rows",
      gru ? "3 × H: the gates r, z, n" : "4 × H: the gates i, f, g, o", true};
  gates.timesOf = 'H';
  gates.times = gru ? 3 : 4;
  DimContract stepValues{'V', "saved values",
                         gru ? "4 × H: r, z, n and W_hn h + b_hn"
                             : "4 × H: the gates i, f, g, o",
                         true};
  stepValues.timesOf = 'H';
  stepValues.times = 4;
  DimContract outputs{'E', "output features",
                      "D × H: the directions' hidden "
                      "states side by side",
                      true};
  outputs.timesOf = 'H';
  outputs.times = directions;
  c.dims = {{'T', "dim", "time steps"},
            {'B', "dim", "batch"},
            {'I', "input size", "input features", true, 1, 1 << 16},
            {'H', "hidden size", "hidden features", true, 1, kLstmMaxHidden},
            gates,
            outputs,
            {'N', "states", "L × D: one per layer and direction", true,
             form.layers * directions, form.layers * directions},
            {'L', "layers", "the layers", true, form.layers, form.layers},
            stepValues};
  const std::string_view sequence = form.batchFirst ? "BTI" : "TBI";
  const std::string_view output = form.batchFirst ? "BTE" : "TBE";

  auto likeX = [](TensorContract t) { return withElementsOf(t, "x"); };
  auto state = [&](std::string_view name, std::string_view doc) {
    return likeX(contractTensor(name, "NBH", ElementRule::Float, doc,
                                Sample::HalfNormal));
  };
  // What the forward saves for the backward: its results there.
  auto saved = [&](std::string_view name, std::string_view layout,
                   bool inputType, std::string_view doc) {
    TensorContract t = contractTensor(
        name, layout, inputType ? ElementRule::Float : ElementRule::F32, doc);
    if (inputType)
      t = likeX(t);
    t.packing = Packing::Dense;
    t.optional = !backward || (!gru && name == "gates");
    if (backward)
      t.resultOf = gru ? "rudnn.gru" : "rudnn.lstm";
    return t;
  };
  std::vector<TensorContract> savedTensors = {
      saved("hidden", "LTBE", true,
            "every layer's outputs, time major (with save_states)")};
  if (gru)
    savedTensors.push_back(saved("gates", "NTBV", false,
                                 "r, z, n and W_hn h + b_hn of each step "
                                 "(with save_states)"));
  else
    savedTensors.insert(
        savedTensors.end(),
        {saved("cells", "NTBH", false,
               "each layer's and direction's cell states (with save_states)"),
         saved("gates", "NTBV", false,
               "the gate activations i, f, g, o of each step (with "
               "save_gates; recomputed when absent)")});
  TensorContract h0 = state("h0", "initial hidden states (zero when absent)");
  h0.optional = true;
  TensorContract c0 = state("c0", "initial cell states (zero when absent)");
  c0.optional = true;
  TensorContract lengths = contractTensor(
      "lengths", "B", ElementRule::I32,
      "valid steps of each entry (packed sequences; T when absent)",
      Sample::Lengths);
  lengths.optional = true;
  lengths.packing = Packing::Dense;
  lengths.counts = 'T';
  c.operands = {contractTensor("x", sequence, ElementRule::Float, "the input"),
                h0};
  if (!gru)
    c.operands.push_back(c0);
  c.operands.push_back(lengths);
  if (backward) {
    c.operands.insert(c.operands.end(), savedTensors.begin(),
                      savedTensors.end());
    c.operands.push_back(likeX(contractTensor(
        "d_out", output, ElementRule::Float, "the gradient of out")));
    for (std::string_view name : {"d_h_n", "d_c_n"}) {
      if (gru && name == "d_c_n")
        continue;
      TensorContract t = state(name, "the gradient of the final states "
                                     "(zero when absent)");
      t.optional = true;
      c.operands.push_back(t);
    }
  }
  const char *const docs[] = {
      gru ? "input-to-hidden weights, gates r, z, n"
          : "input-to-hidden weights, gates i, f, g, o",
      gru ? "hidden-to-hidden weights, gates r, z, n"
          : "hidden-to-hidden weights, gates i, f, g, o",
      "input-to-hidden bias",
      gru ? "hidden-to-hidden bias (b_hn inside the reset product)"
          : "hidden-to-hidden bias"};
  std::vector<TensorContract> weights;
  for (int64_t layer = 0; layer < form.layers; ++layer)
    for (int64_t d = 0; d < directions; ++d)
      for (int which = 0; which < (form.biases ? 4 : 2); ++which) {
        const std::string_view layout = which == 0   ? (layer ? "GE" : "GI")
                                        : which == 1 ? "GH"
                                                     : "G";
        weights.push_back(
            likeX(contractTensor(stored->keep(lstmWeightName(which, layer, d)),
                                 layout, ElementRule::Float, docs[which])));
      }
  c.operands.insert(c.operands.end(), weights.begin(), weights.end());
  if (backward) {
    c.results = {
        likeX(contractTensor("d_x", sequence, ElementRule::Float,
                             "the gradient of x (0 past each length)")),
        state("d_h0", "the gradient of h0 (of zeros when absent)")};
    if (!gru)
      c.results.push_back(
          state("d_c0", "the gradient of c0 (of zeros when absent)"));
    for (TensorContract t : weights) {
      t.name = stored->keep("d_" + std::string(t.name));
      t.doc = "its gradient, summed over the steps in a fixed order";
      t.packing = Packing::Dense;
      c.results.push_back(t);
    }
    return stored;
  }
  c.results = {likeX(contractTensor("out", output, ElementRule::Float,
                                    "the last layer's hidden states, both "
                                    "directions side by side (0 past an "
                                    "entry's length)")),
               state("h_n", "each layer's and direction's last hidden state")};
  if (!gru)
    c.results.push_back(
        state("c_n", "each layer's and direction's last cell state"));
  c.results.insert(c.results.end(), savedTensors.begin(), savedTensors.end());
  return stored;
}

/// The contract of that form, built on first use and kept.
const OperatorContract &contractOf(const LstmForm &form, bool backward) {
  static std::mutex mutex;
  static std::map<std::tuple<int64_t, bool, bool, bool, bool, bool>,
                  std::unique_ptr<StoredContract>>
      contracts;
  std::lock_guard<std::mutex> lock(mutex);
  auto &slot = contracts[{form.layers, form.bidirectional, form.biases,
                          form.batchFirst, form.gru, backward}];
  if (!slot)
    slot = build(form, backward);
  return slot->contract;
}

} // namespace

std::string rudnn::lstmWeightName(int which, int64_t layer, int64_t direction) {
  static constexpr const char *kKinds[] = {"weight_ih", "weight_hh", "bias_ih",
                                           "bias_hh"};
  return std::string(kKinds[which]) + "_l" + std::to_string(layer) +
         (direction ? "_reverse" : "");
}

const OperatorContract &rudnn::lstmContract(const LstmForm &form) {
  return contractOf(form, false);
}

const OperatorContract &rudnn::lstmBackwardContract(const LstmForm &form) {
  return contractOf(form, true);
}

const OperatorContract &rudnn::gruContract(LstmForm form) {
  form.gru = true;
  return contractOf(form, false);
}

const OperatorContract &rudnn::gruBackwardContract(LstmForm form) {
  form.gru = true;
  return contractOf(form, true);
}
