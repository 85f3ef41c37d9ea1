//===- AttentionContracts.cpp - The contracts of the attention ops --------===//

#include "dialects/IR/attention/AttentionContracts.h"

using namespace rudnn;

/// H, grouped over the key heads G (MHA, GQA, MQA).
static DimContract groupedHeads() {
  DimContract heads{'H', "query heads", "query heads, a multiple of G"};
  heads.multipleOf = 'G';
  return heads;
}

/// The padded forms' dims.
static std::vector<DimContract> paddedDims() {
  return {{'B', "dim", "batch"},
          {'T', "dim", "query length"},
          {'S', "dim", "key length"},
          groupedHeads(),
          {'G', "key heads", "key and value heads"},
          {'D', "head dim", "query and key features", true, 1,
           kAttentionMaxHeadDim},
          {'E', "head dim", "value features", true, 1, kAttentionMaxHeadDim}};
}

/// The optional ALiBi slopes: [B, H] padded, [H] packed.
static TensorContract alibiSlopes(std::string_view dims) {
  TensorContract slopes =
      contractTensor("alibi_slopes", dims, ElementRule::F32,
                     "ALiBi: an allowed score gains −slope · |i + L − T − j|");
  slopes.optional = true;
  return slopes;
}

/// q, k, v and the optional key_lengths, key_mask and ALiBi slopes of the
/// padded forms.
static std::vector<TensorContract> paddedOperands() {
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
  return {contractTensor("q", "BTHD", ElementRule::Float, "queries"),
          withElementsOf(
              contractTensor("k", "BSGD", ElementRule::Float, "keys"), "q"),
          withElementsOf(
              contractTensor("v", "BSGE", ElementRule::Float, "values"), "q"),
          keyLengths,
          keyMask,
          alibiSlopes("BH")};
}

/// The forward's lse [B, H, T].
static TensorContract paddedLse() {
  TensorContract lse = contractTensor("lse", "BHT", ElementRule::F32,
                                      "log-sum-exp of the allowed scores "
                                      "(natural log; −inf for a row with "
                                      "no allowed key)");
  lse.packing = Packing::Dense;
  return lse;
}

const OperatorContract &rudnn::attentionContract() {
  static const OperatorContract contract = [] {
    OperatorContract c;
    c.op = "rudnn.attention";
    c.summary = "Exact attention, tile by tile with an online softmax";
    c.dims = paddedDims();
    c.operands = paddedOperands();
    const TensorContract lse = paddedLse();
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

/// The packed forms' dims.
static std::vector<DimContract> packedDims() {
  return {{'T', "dim", "queries of every entry"},
          {'S', "dim", "keys of every entry"},
          {'C', "dim", "entries + 1"},
          groupedHeads(),
          {'G', "key heads", "key and value heads"},
          {'D', "head dim", "query and key features", true, 1,
           kAttentionMaxHeadDim},
          {'E', "head dim", "value features", true, 1, kAttentionMaxHeadDim}};
}

/// q, k, v, the entries' offsets and the optional ALiBi slopes of the
/// packed forms.
static std::vector<TensorContract> packedOperands() {
  auto offsets = [](std::string_view name, char counts, std::string_view doc) {
    TensorContract t =
        contractTensor(name, "C", ElementRule::I32, doc, Sample::Offsets);
    t.packing = Packing::Dense;
    t.counts = counts;
    return t;
  };
  return {
      contractTensor("q", "THD", ElementRule::Float, "packed queries"),
      withElementsOf(
          contractTensor("k", "SGD", ElementRule::Float, "packed keys"), "q"),
      withElementsOf(
          contractTensor("v", "SGE", ElementRule::Float, "packed values"), "q"),
      offsets("cu_seqlens_q", 'T',
              "entry b's queries are rows [cu_seqlens_q[b], "
              "cu_seqlens_q[b + 1])"),
      offsets("cu_seqlens_k", 'S', "entry b's keys, likewise"),
      alibiSlopes("H")};
}

/// The packed forward's lse [H, T].
static TensorContract packedLse() {
  TensorContract lse = contractTensor(
      "lse", "HT", ElementRule::F32,
      "log-sum-exp of each query's allowed scores (−inf for none)");
  lse.packing = Packing::Dense;
  return lse;
}

/// The backward's operands after the forward's (o and lse, results of
/// `forward`, then d_output) and its results (dq, dk, dv), in `layouts`'
/// letters: q, k, v, o.
static void addBackward(OperatorContract &c, std::string_view forward,
                        TensorContract lse, const char *const (&layouts)[4]) {
  TensorContract o = withElementsOf(
      contractTensor("o", layouts[3], ElementRule::Float, "the forward's o"),
      "q");
  o.resultOf = lse.resultOf = forward;
  c.operands.push_back(o);
  c.operands.push_back(std::move(lse));
  c.operands.push_back(withElementsOf(
      contractTensor("d_output", layouts[3], ElementRule::Float,
                     "the gradient of the loss with respect to o"),
      "q"));
  c.results = {
      withElementsOf(contractTensor("dq", layouts[0], ElementRule::Float,
                                    "gradient with respect to q"),
                     "q"),
      withElementsOf(contractTensor("dk", layouts[1], ElementRule::Float,
                                    "gradient with respect to k (summed "
                                    "over each group's query heads)"),
                     "q"),
      withElementsOf(contractTensor("dv", layouts[2], ElementRule::Float,
                                    "gradient with respect to v (likewise)"),
                     "q")};
}

const OperatorContract &rudnn::attentionVarlenContract() {
  static const OperatorContract contract = [] {
    OperatorContract c;
    c.op = "rudnn.attention_varlen";
    c.summary = "Attention over packed variable-length batches";
    c.dims = packedDims();
    c.operands = packedOperands();
    c.results = {withElementsOf(contractTensor("o", "THE", ElementRule::Float,
                                               "each query's attention"),
                                "q"),
                 packedLse()};
    return c;
  }();
  return contract;
}

const OperatorContract &rudnn::attentionBackwardContract() {
  static const OperatorContract contract = [] {
    OperatorContract c;
    c.op = "rudnn.attention_backward";
    c.summary = "Gradients of attention with respect to q, k and v";
    c.dims = paddedDims();
    c.operands = paddedOperands();
    addBackward(c, "rudnn.attention", paddedLse(),
                {"BTHD", "BSGD", "BSGE", "BTHE"});
    return c;
  }();
  return contract;
}

const OperatorContract &rudnn::attentionVarlenBackwardContract() {
  static const OperatorContract contract = [] {
    OperatorContract c;
    c.op = "rudnn.attention_varlen_backward";
    c.summary = "Gradients of packed variable-length attention";
    c.dims = packedDims();
    c.operands = packedOperands();
    addBackward(c, "rudnn.attention_varlen", packedLse(),
                {"THD", "SGD", "SGE", "THE"});
    return c;
  }();
  return contract;
}
