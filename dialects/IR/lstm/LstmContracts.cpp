//===- LstmContracts.cpp - The contracts of rudnn.lstm --------------------===//
//
// An LSTM's operands are the state_dict's tensors, so how many there are
// and what they are called depend on its layers, directions and biases:
// one contract per form, built on first use and kept.
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

std::unique_ptr<StoredContract> build(const LstmForm &form) {
  auto stored = std::make_unique<StoredContract>();
  OperatorContract &c = stored->contract;
  const int64_t directions = form.directions();
  c.op = "rudnn.lstm";
  c.summary = "A stacked, optionally bidirectional LSTM as torch.nn.LSTM";
  DimContract gates{'G', "gate rows", "4 × H: the gates i, f, g, o", true};
  gates.timesOf = 'H';
  gates.times = 4;
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
             form.layers * directions, form.layers * directions}};
  const std::string_view sequence = form.batchFirst ? "BTI" : "TBI";
  const std::string_view output = form.batchFirst ? "BTE" : "TBE";

  auto state = [](std::string_view name, std::string_view doc) {
    return withElementsOf(contractTensor(name, "NBH", ElementRule::Float, doc,
                                         Sample::HalfNormal),
                          "x");
  };
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
                h0, c0, lengths};
  static constexpr const char *kDocs[] = {
      "input-to-hidden weights, gates i, f, g, o",
      "hidden-to-hidden weights, gates i, f, g, o", "input-to-hidden bias",
      "hidden-to-hidden bias"};
  for (int64_t layer = 0; layer < form.layers; ++layer)
    for (int64_t d = 0; d < directions; ++d)
      for (int which = 0; which < (form.biases ? 4 : 2); ++which) {
        const std::string_view layout = which == 0   ? (layer ? "GE" : "GI")
                                        : which == 1 ? "GH"
                                                     : "G";
        c.operands.push_back(withElementsOf(
            contractTensor(stored->keep(lstmWeightName(which, layer, d)),
                           layout, ElementRule::Float, kDocs[which]),
            "x"));
      }
  c.results = {
      withElementsOf(contractTensor("out", output, ElementRule::Float,
                                    "the last layer's hidden states, both "
                                    "directions side by side (0 past an "
                                    "entry's length)"),
                     "x"),
      state("h_n", "each layer's and direction's last hidden state"),
      state("c_n", "each layer's and direction's last cell state")};
  return stored;
}

} // namespace

std::string rudnn::lstmWeightName(int which, int64_t layer, int64_t direction) {
  static constexpr const char *kKinds[] = {"weight_ih", "weight_hh", "bias_ih",
                                           "bias_hh"};
  return std::string(kKinds[which]) + "_l" + std::to_string(layer) +
         (direction ? "_reverse" : "");
}

const OperatorContract &rudnn::lstmContract(const LstmForm &form) {
  static std::mutex mutex;
  static std::map<std::tuple<int64_t, bool, bool, bool>,
                  std::unique_ptr<StoredContract>>
      contracts;
  std::lock_guard<std::mutex> lock(mutex);
  auto &slot = contracts[{form.layers, form.bidirectional, form.biases,
                          form.batchFirst}];
  if (!slot)
    slot = build(form);
  return slot->contract;
}
