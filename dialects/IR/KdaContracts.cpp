//===- KdaContracts.cpp - The contracts of the KDA operators --------------===//

#include "dialects/IR/KdaContracts.h"

using namespace rudnn;

namespace {

std::vector<DimContract> kdaDims(bool chunks) {
  std::vector<DimContract> dims = {
      {'B', "dim", "batch"},
      {'T', "dim", "sequence length"},
      {'H', "dim", "heads"},
      {'K', "feature dim", "key and query features", true, 1,
       kKdaMaxFeatureDim},
      {'V', "feature dim", "value features", true, 1, kKdaMaxFeatureDim}};
  if (chunks)
    dims.push_back({'N', "dim", "chunks, ceil(T / chunk)"});
  return dims;
}

/// The forward's inputs, which the backward takes first too.
std::vector<TensorContract> kdaInputs() {
  return {{"q",
           "BTHK",
           ElementRule::Float,
           {},
           false,
           Packing::InnerContiguous,
           {},
           "queries"},
          {"k",
           "BTHK",
           ElementRule::SameAs,
           "q",
           false,
           Packing::InnerContiguous,
           {},
           "keys, L2-normalised by callers"},
          {"v",
           "BTHV",
           ElementRule::SameAs,
           "q",
           false,
           Packing::InnerContiguous,
           {},
           "values"},
          {"g",
           "BTHK",
           ElementRule::Float,
           {},
           false,
           Packing::InnerContiguous,
           {},
           "log-decay, ≤ 0 (f32 recommended)"},
          {"beta",
           "BTH",
           ElementRule::Float,
           {},
           false,
           Packing::AnyStrides,
           {},
           "update strength in (0, 1)"},
          {"initial_state",
           "BHKV",
           ElementRule::F32,
           {},
           true,
           Packing::Dense,
           {},
           "state before token 0 (zero when absent)"}};
}

} // namespace

const OperatorContract &rudnn::kdaContract() {
  static const OperatorContract contract = [] {
    OperatorContract c;
    c.op = "rudnn.kda";
    c.summary = "Kimi Delta Attention forward (chunked gated delta rule)";
    c.dims = kdaDims(true);
    c.operands = kdaInputs();
    c.results = {{"output",
                  "BTHV",
                  ElementRule::SameAs,
                  "v",
                  false,
                  Packing::InnerContiguous,
                  {},
                  "o_t = Sᵀ(scale · q_t)"},
                 {"final_state",
                  "BHKV",
                  ElementRule::F32,
                  {},
                  false,
                  Packing::Dense,
                  "initial_state",
                  "state after the last token"},
                 {"boundaries",
                  "NBHKV",
                  ElementRule::F32,
                  {},
                  true,
                  Packing::Dense,
                  {},
                  "state before token c · chunk (with save_boundaries)"}};
    return c;
  }();
  return contract;
}

const OperatorContract &rudnn::kdaBackwardContract() {
  static const OperatorContract contract = [] {
    OperatorContract c;
    c.op = "rudnn.kda_backward";
    c.summary = "Kimi Delta Attention backward: the six input gradients";
    c.dims = kdaDims(true);
    c.operands = kdaInputs();
    c.operands.push_back({"boundaries",
                          "NBHKV",
                          ElementRule::F32,
                          {},
                          true,
                          Packing::Dense,
                          {},
                          "the forward's saved boundary states"});
    c.operands.push_back({"d_output",
                          "BTHV",
                          ElementRule::SameAs,
                          "v",
                          false,
                          Packing::InnerContiguous,
                          {},
                          "gradient of the output"});
    c.operands.push_back({"d_final_state",
                          "BHKV",
                          ElementRule::F32,
                          {},
                          true,
                          Packing::Dense,
                          {},
                          "gradient of the final state (zero when absent)"});
    c.results = {{"dq", "BTHK", ElementRule::SameAs, "q"},
                 {"dk", "BTHK", ElementRule::SameAs, "k"},
                 {"dv", "BTHV", ElementRule::SameAs, "v"},
                 {"dg", "BTHK", ElementRule::F32},
                 {"dbeta", "BTH", ElementRule::SameAs, "beta", false,
                  Packing::AnyStrides},
                 {"d_initial_state",
                  "BHKV",
                  ElementRule::F32,
                  {},
                  true,
                  Packing::Dense,
                  {},
                  "exactly when initial_state is given"}};
    return c;
  }();
  return contract;
}
