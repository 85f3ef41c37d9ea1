//===- KdaContracts.cpp - The contracts of the KDA operators --------------===//

#include "dialects/IR/kda/KdaContracts.h"

using namespace rudnn;

namespace {

std::vector<DimContract>
kdaDims(bool chunks, std::string_view chunkDoc = "chunks, "
                                                 "ceil(T / chunk)") {
  std::vector<DimContract> dims = {
      {'B', "dim", "batch"},
      {'T', "dim", "sequence length"},
      {'H', "dim", "heads"},
      {'K', "feature dim", "key and query features", true, 1,
       kKdaMaxFeatureDim},
      {'V', "feature dim", "value features", true, 1, kKdaMaxFeatureDim}};
  if (chunks) {
    DimContract count{'N', "dim", chunkDoc};
    count.piecesOf = 'T';
    count.perAttribute = "chunk";
    dims.push_back(count);
    // Static: the function's type states it, so its verifier holds it to
    // the chunk and types.
    dims.push_back({'W', "saved tile words",
                    "fp32 words of saved tiles per chunk and head, fixed by "
                    "K, V, chunk and q's type",
                    true});
  }
  return dims;
}

/// An optional dense fp32 state.
TensorContract state(std::string_view name, std::string_view layout,
                     std::string_view doc) {
  TensorContract t =
      contractTensor(name, layout, ElementRule::F32, doc, Sample::HalfNormal);
  t.optional = true;
  t.packing = Packing::Dense;
  return t;
}

/// `c` with grouped value heads (GVA): q and k (and dq, dk) have Q heads,
/// each shared by H / Q value heads; v, g, beta, the output and the states
/// have H.
OperatorContract groupHeads(OperatorContract c) {
  for (DimContract &dim : c.dims)
    if (dim.letter == 'H') {
      dim.doc = "value heads, a multiple of Q";
      dim.multipleOf = 'Q';
    }
  c.dims.push_back({'Q', "key heads",
                    "query and key heads, each shared by H / Q value "
                    "heads"});
  for (auto *tensors : {&c.operands, &c.results})
    for (TensorContract &t : *tensors)
      if (t.name == "q" || t.name == "k" || t.name == "dq" || t.name == "dk")
        t.layout = "BTQK";
  return c;
}

/// The packed forms' dims: the sequences lie along T of one batch entry.
std::vector<DimContract> kdaVarlenDims() {
  std::vector<DimContract> dims =
      kdaDims(true, "chunk slots, ceil(T / chunk) + S + 1 (sequence n's "
                    "chunks after those of the sequences before it)");
  dims[0] = {'B', "dim", "1: the sequences are packed along T", false, 1, 1};
  dims[1] = {'T', "dim", "tokens of every sequence"};
  for (DimContract &dim : dims)
    if (dim.letter == 'N')
      dim.plusOf = 'C'; // each sequence's last chunk may be partial
  dims.push_back({'S', "dim", "sequences"});
  DimContract offsets{'C', "dim", "sequences + 1", false, 2};
  offsets.timesOf = 'S';
  offsets.plus = 1;
  dims.push_back(offsets);
  return dims;
}

/// The forward's inputs, which the backward takes first too.
std::vector<TensorContract> kdaInputs() {
  TensorContract beta =
      contractTensor("beta", "BTH", ElementRule::Float,
                     "update strength in (0, 1), or its logits (beta_logits)",
                     Sample::Probability);
  beta.packing = Packing::AnyStrides;
  return {contractTensor("q", "BTHK", ElementRule::Float, "queries"),
          withElementsOf(
              contractTensor("k", "BTHK", ElementRule::Float,
                             "keys, L2-normalised (by callers or qk_l2norm)",
                             Sample::UnitRows),
              "q"),
          withElementsOf(
              contractTensor("v", "BTHV", ElementRule::Float, "values"), "q"),
          contractTensor(
              "g", "BTHK", ElementRule::Float,
              "log-decay, ≤ 0 (f32 recommended); with a_log the raw gate",
              Sample::LogDecay),
          beta,
          state("initial_state", "BHKV",
                "state before token 0 (zero when absent)")};
}

/// The packed forward's inputs: the batch's, the sequences' offsets after
/// beta, and one initial state a sequence.
std::vector<TensorContract> kdaVarlenInputs() {
  std::vector<TensorContract> inputs = kdaInputs();
  TensorContract offsets =
      contractTensor("cu_seqlens", "C", ElementRule::I32,
                     "sequence n is tokens [cu_seqlens[n], cu_seqlens[n + 1])",
                     Sample::Offsets);
  offsets.packing = Packing::Dense;
  offsets.counts = 'T';
  inputs.back().layout = "SHKV";
  inputs.back().doc = "each sequence's state before its first token";
  inputs.insert(inputs.end() - 1, offsets);
  return inputs;
}

/// The gate's parameters, when the operator forms the gate from raw
/// projections: a_log [H] and dt_bias [H, K], dense f32.
std::vector<TensorContract> gateParameters() {
  TensorContract aLog =
      contractTensor("a_log", "H", ElementRule::F32,
                     "the gate's log rate: g = −exp(a_log[h]) · softplus(…)");
  TensorContract dtBias = contractTensor("dt_bias", "HK", ElementRule::F32,
                                         "added to the raw gate before it");
  for (TensorContract *t : {&aLog, &dtBias}) {
    t->optional = true;
    t->packing = Packing::Dense;
  }
  return {aLog, dtBias};
}

/// Their gradients, results of a backward given them.
std::vector<TensorContract> gateParameterGradients() {
  std::vector<TensorContract> gradients = gateParameters();
  gradients[0].name = "d_a_log";
  gradients[1].name = "d_dt_bias";
  for (TensorContract &t : gradients)
    t.doc = "exactly when the parameter is given";
  return gradients;
}

/// A forward's output and final state, the states laid out as
/// `stateLayout` ("BHKV", or one a packed sequence "SHKV").
std::vector<TensorContract> forwardResults(std::string_view stateLayout,
                                           std::string_view stateDoc) {
  TensorContract finalState =
      contractTensor("final_state", stateLayout, ElementRule::F32, stateDoc,
                     Sample::HalfNormal);
  finalState.packing = Packing::Dense;
  finalState.inPlaceOf = "initial_state";
  return {withElementsOf(contractTensor("output", "BTHV", ElementRule::Float,
                                        "o_t = Sᵀ(scale · q_t)"),
                         "v"),
          finalState};
}

/// What a forward saves of each chunk for its backward.
TensorContract savedTiles(std::string_view doc) {
  TensorContract t = state("tiles", "NBHW", doc);
  t.opaque = true;
  return t;
}

/// The boundary states a forward saves (and its backward takes), in q's
/// type.
TensorContract savedBoundaries(std::string_view doc) {
  return withElementsOf(state("boundaries", "NBHKV", doc), "q");
}

/// A forward's saved results, with save_boundaries (and save_tiles).
std::vector<TensorContract> savedResults(std::string_view boundariesDoc) {
  return {savedBoundaries(boundariesDoc),
          savedTiles("each chunk's tiles for the backward (with "
                     "save_tiles)")};
}

/// A backward's saved operands: the forward's saved results.
std::vector<TensorContract> savedOperands() {
  return {savedBoundaries("the forward's saved boundary states"),
          savedTiles("the forward's saved tiles (with its boundaries)")};
}

/// Appends `tensors` to `to`.
void append(std::vector<TensorContract> &to,
            const std::vector<TensorContract> &tensors) {
  to.insert(to.end(), tensors.begin(), tensors.end());
}

/// The contract of `op`, filled in by `build`, or its grouped-heads form;
/// each made once (every operator's lambda is a type of its own, so its
/// statics are its own).
template <typename Build>
const OperatorContract &madeOnce(bool grouped, const char *op,
                                 const char *summary, Build build) {
  static const OperatorContract contract = [&] {
    OperatorContract c;
    c.op = op;
    c.summary = summary;
    build(c);
    return c;
  }();
  static const OperatorContract groupedContract = groupHeads(contract);
  return grouped ? groupedContract : contract;
}

} // namespace

const OperatorContract &rudnn::kdaContract(bool grouped) {
  return madeOnce(
      grouped, "rudnn.kda",
      "Kimi Delta Attention forward (chunked gated delta rule)",
      [](OperatorContract &c) {
        c.dims = kdaDims(true);
        c.operands = kdaInputs();
        append(c.operands, gateParameters());
        c.results = forwardResults("BHKV", "state after the last token");
        append(c.results,
               savedResults(
                   "state before token c · chunk (with save_boundaries)"));
      });
}

const OperatorContract &rudnn::kdaBackwardContract(bool grouped) {
  return madeOnce(
      grouped, "rudnn.kda_backward",
      "Kimi Delta Attention backward: the six input gradients",
      [](OperatorContract &c) {
        c.dims = kdaDims(true);
        c.operands = kdaInputs();
        append(c.operands, savedOperands());
        c.operands.push_back(withElementsOf(
            contractTensor("d_output", "BTHV", ElementRule::Float,
                           "gradient of the output"),
            "v"));
        c.operands.push_back(state("d_final_state", "BHKV",
                                   "gradient of the final state (zero when "
                                   "absent)"));
        append(c.operands, gateParameters());
        TensorContract dbeta = withElementsOf(
            contractTensor("dbeta", "BTH", ElementRule::Float, {}), "beta");
        dbeta.packing = Packing::AnyStrides;
        c.results = {
            withElementsOf(contractTensor("dq", "BTHK", ElementRule::Float, {}),
                           "q"),
            withElementsOf(contractTensor("dk", "BTHK", ElementRule::Float, {}),
                           "k"),
            withElementsOf(contractTensor("dv", "BTHV", ElementRule::Float, {}),
                           "v"),
            contractTensor("dg", "BTHK", ElementRule::F32, {}),
            dbeta,
            state("d_initial_state", "BHKV",
                  "exactly when initial_state is given")};
        append(c.results, gateParameterGradients());
      });
}

const OperatorContract &rudnn::kdaVarlenContract(bool grouped) {
  return madeOnce(
      grouped, "rudnn.kda_varlen",
      "Kimi Delta Attention forward over packed sequences",
      [](OperatorContract &c) {
        c.dims = kdaVarlenDims();
        c.operands = kdaVarlenInputs();
        append(c.operands, gateParameters());
        c.results = forwardResults(
            "SHKV", "each sequence's state after its last token");
        append(
            c.results,
            savedResults(
                "state before each chunk (with save_boundaries): sequence n's "
                "chunk j in slot Σ_{i<n} ceil(len_i / chunk) + j"));
      });
}

const OperatorContract &rudnn::kdaVarlenBackwardContract(bool grouped) {
  return madeOnce(grouped, "rudnn.kda_varlen_backward",
                  "Kimi Delta Attention backward over packed sequences",
                  [](OperatorContract &c) {
                    c.dims = kdaVarlenDims();
                    c.operands = kdaVarlenInputs();
                    append(c.operands, savedOperands());
                    c.operands.push_back(withElementsOf(
                        contractTensor("d_output", "BTHV", ElementRule::Float,
                                       "gradient of the output"),
                        "v"));
                    c.operands.push_back(
                        state("d_final_state", "SHKV",
                              "gradient of each sequence's final state "
                              "(zero when absent)"));
                    append(c.operands, gateParameters());
                    c.results = kdaBackwardContract().results;
                    c.results[c.resultIndex("d_initial_state")].layout = "SHKV";
                  });
}

const OperatorContract &rudnn::kdaDecodeContract(bool grouped) {
  return madeOnce(
      grouped, "rudnn.kda_decode",
      "KDA decoding step over a pool of per-request states",
      [](OperatorContract &c) {
        c.dims = kdaDims(false);
        c.dims[1] = {'T', "dim", "new tokens of each entry"};
        c.dims.push_back({'P', "dim", "states in the pool"});
        c.operands = kdaInputs();
        c.operands.pop_back(); // the states live in the pool
        TensorContract pool = contractTensor(
            "state_pool", "PHKV", ElementRule::Float,
            "one state a request (f32, f16 or bf16), updated in place",
            Sample::HalfNormal);
        pool.packing = Packing::Dense;
        TensorContract slots =
            contractTensor("slots", "B", ElementRule::I32,
                           "each entry's state: pool[slots[b]]", Sample::Pages);
        slots.packing = Packing::Dense;
        slots.counts = 'P';
        c.operands.push_back(pool);
        c.operands.push_back(slots);
        append(c.operands, gateParameters());
        TensorContract updated = pool;
        updated.name = "state_pool_out";
        updated.doc = "the pool's memory, each entry's state advanced";
        updated.updates = "state_pool";
        TensorContract status = refusalStatus(
            "0: done; 1: refused (a slot outside the pool or shared with "
            "another entry): state untouched, output 0");
        c.results = {
            withElementsOf(contractTensor("output", "BTHV", ElementRule::Float,
                                          "o_t = Sᵀ(scale · q_t)"),
                           "v"),
            updated, status};
      });
}
