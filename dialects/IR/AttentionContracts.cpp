//===- AttentionContracts.cpp - The contracts of the attention ops --------===//

#include "dialects/IR/AttentionContracts.h"

using namespace rudnn;

const OperatorContract &rudnn::attentionContract() {
  static const OperatorContract contract = [] {
    OperatorContract c;
    c.op = "rudnn.attention";
    c.summary = "Exact attention, tile by tile with an online softmax";
    c.dims = {
        {'B', "dim", "batch"},
        {'T', "dim", "query length"},
        {'S', "dim", "key length"},
        {'H', "dim", "query heads, a multiple of G"},
        {'G', "dim", "key and value heads"},
        {'D', "head dim", "query and key features", true, 1,
         kAttentionMaxHeadDim},
        {'E', "head dim", "value features", true, 1, kAttentionMaxHeadDim}};
    TensorContract keyLengths = contractTensor(
        "key_lengths", "B", ElementRule::I32,
        "keys of each batch entry (0 to S): later keys are masked");
    keyLengths.optional = true;
    keyLengths.packing = Packing::Dense;
    keyLengths.sample = Sample::Lengths;
    keyLengths.counts = 'S';
    TensorContract keyMask = contractTensor("key_mask", "BS", ElementRule::Bool,
                                            "false masks the key out");
    keyMask.optional = true;
    keyMask.sample = Sample::Mask;
    TensorContract lse =
        contractTensor("lse", "BHT", ElementRule::F32,
                       "log-sum-exp of the allowed scores (natural "
                       "log; −inf for a row with no allowed key)");
    lse.packing = Packing::Dense;
    c.operands = {
        contractTensor("q", "BTHD", ElementRule::Float, "queries"),
        withElementsOf(contractTensor("k", "BSGD", ElementRule::Float, "keys"),
                       "q"),
        withElementsOf(
            contractTensor("v", "BSGE", ElementRule::Float, "values"), "q"),
        keyLengths, keyMask};
    c.results = {
        withElementsOf(
            contractTensor("o", "BTHE", ElementRule::Float,
                           "softmax of the allowed scores times v (0 for "
                           "a row with no allowed key)"),
            "q"),
        lse};
    return c;
  }();
  return contract;
}
