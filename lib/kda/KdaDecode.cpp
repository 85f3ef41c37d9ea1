//===- KdaDecode.cpp - KDA decoding over a state pool through the JIT -----===//
//
// The typed entry point over callOperator: validates a decoding step (and,
// without a status tensor, its slots on the host) and calls
// rudnn.kda_decode with the pool as both an operand and the result updated
// in place.
//
//===----------------------------------------------------------------------===//

#include "lib/kda/KdaChecks.h"
#include "runtime/checks/ContractChecks.h"

#include "dialects/IR/kda/KdaContracts.h"

#include "rudnn/errors.h"
#include "rudnn/kda.h"
#include "rudnn/operator.h"

#include <cmath>
#include <cstdint>
#include <map>
#include <vector>

using namespace rudnn;

namespace {

/// Without a status tensor the slots are checked on the host: each in
/// [0, P) and used by one entry only.
void checkSlotsOnHost(Context &context, const TensorView &slots,
                      int64_t poolSize, Stream stream) {
  std::vector<int32_t> host(static_cast<size_t>(slots.shape[0]));
  context.copyToHost(host.data(), slots.data, host.size() * sizeof(int32_t),
                     stream);
  context.synchronize(stream);
  std::map<int32_t, size_t> first;
  for (size_t b = 0; b < host.size(); ++b) {
    if (host[b] < 0 || host[b] >= poolSize)
      throw InvalidArgument("'slots' entry " + std::to_string(b) + " is " +
                            std::to_string(host[b]) + ", outside the pool's " +
                            std::to_string(poolSize) + " states");
    auto [it, inserted] = first.emplace(host[b], b);
    if (!inserted)
      throw InvalidArgument("'slots' entries " + std::to_string(it->second) +
                            " and " + std::to_string(b) + " share slot " +
                            std::to_string(host[b]) +
                            ": one state a request (give 'status' to have "
                            "such entries refused on the device instead)");
  }
}

} // namespace

void rudnn::kdaDecode(Context &context, const KdaDecodeInputs &in,
                      const KdaDecodeOutputs &out, const KdaOptions &options,
                      Stream stream) {
  // Validation: every fault named before anything runs. The pool is its
  // own result.
  const bool grouped = groupedHeads(in.q, in.v);
  // Without a scale, rudnn-specialize chooses K^-0.5; the verifier checks
  // a given one.
  const OperatorAttributes attributes = kdaAttributes(
      in.q, in.v,
      inputTransformsOf(in.aLog.has_value(), in.dtBias.has_value(), options),
      options, /*chunked=*/false);
  DimSizes dims =
      checkCall(kdaDecodeContract(grouped),
                {&in.q, &in.k, &in.v, &in.g, &in.beta, &in.statePool, &in.slots,
                 viewOf(in.aLog), viewOf(in.dtBias)},
                {&out.output, &in.statePool, viewOf(out.status)});
  for (char letter : {'B', 'T', 'H', 'P'})
    if (dims[letter] > INT32_MAX / 2)
      throw InvalidArgument(std::string("dim ") + letter +
                            " must be below 2^30");
  if (dims['B'] * dims['H'] > INT32_MAX)
    throw Unsupported("B·H exceeds the grid's first dimension");
  if (!out.status)
    checkSlotsOnHost(context, in.slots, dims['P'], stream);

  // The pool is an operand, and the result updated in place.
  NamedTensors tensors = {{"q", in.q},         {"k", in.k},
                          {"v", in.v},         {"g", in.g},
                          {"beta", in.beta},   {"state_pool", in.statePool},
                          {"slots", in.slots}, {"output", out.output}};
  addIfGiven(tensors, "a_log", in.aLog);
  addIfGiven(tensors, "dt_bias", in.dtBias);
  addIfGiven(tensors, "status", out.status);
  callOperator(context, "rudnn.kda_decode", attributes, tensors, stream);
}
