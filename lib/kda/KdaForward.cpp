//===- KdaForward.cpp - Kimi Delta Attention forward through the JIT ------===//
//
// Validates a call, finds (or builds once) the plan for its signature, binds
// the tensors and runs it. The plan holds both the chunked kernels and the
// recurrent decode kernel, guarded by T, so a call changing only B, T, H or
// strides never compiles.
//
//===----------------------------------------------------------------------===//

#include "lib/ContextImpl.h"
#include "lib/kda/KdaChecks.h"
#include "lib/kda/KdaKernels.h"
#include "runtime/ViewChecks.h"

#include "dialects/IR/KdaContracts.h"
#include "dialects/IR/KdaPolicy.h"

#include "rudnn/kda.h"

using namespace rudnn;
using namespace rudnn::runtime;

void rudnn::kdaForward(Context &context, const KdaForwardInputs &in,
                       const KdaForwardOutputs &out, const KdaOptions &options,
                       Stream stream) {
  // --- Validation: every fault named before anything runs. -----------------
  const KdaCallShape s = checkKdaForwardCall(in, out, options);
  const int64_t K = s.K, V = s.V;

  // --- The function of this signature, compiled at its first call. ------
  KdaKernelSpec spec{in.q.dtype, in.g.dtype, in.beta.dtype, K, V, s.chunk};
  // Views whose rows are 16-byte aligned get kernels without an
  // element-wise path (a plan of their own).
  spec.alignedViews = hasAlignedRows(in.q, 16) && hasAlignedRows(in.k, 16) &&
                      hasAlignedRows(in.v, 16);
  spec.packed = in.cuSeqlens.has_value();
  KdaPlanFlags flags{in.initialState.has_value(), out.finalState.has_value(),
                     out.boundaries.has_value(),  static_cast<float>(s.scale),
                     out.tiles.has_value(),       groupedHeads(in.q, in.v)};
  std::vector<TensorView> arguments = {in.q, in.k, in.v, in.g, in.beta};
  if (in.cuSeqlens)
    arguments.push_back(*in.cuSeqlens);
  if (in.initialState)
    arguments.push_back(*in.initialState);
  flags.transforms = inputTransformsOf(in, options);
  for (const std::optional<TensorView> &parameter : {in.aLog, in.dtBias})
    if (parameter)
      arguments.push_back(*parameter);
  std::vector<TensorView> results = {out.output};
  if (out.finalState)
    results.push_back(*out.finalState);
  if (out.boundaries)
    results.push_back(*out.boundaries);
  if (out.tiles)
    results.push_back(*out.tiles);
  Function function = kdaForwardFunction(context, spec, flags);
  checkKdaSavedSizes(in, out, chunkOf(function));
  function.call(arguments, results, stream);
}

KdaSavedShapes rudnn::kdaSavedShapes(int64_t batch, int64_t length,
                                     int64_t heads, int64_t featureK,
                                     int64_t featureV, DType input,
                                     const KdaOptions &options,
                                     int64_t sequences) {
  for (int64_t dim : {batch, length, heads})
    if (dim < 1)
      throw InvalidArgument("B, T and H must be positive");
  if (sequences < 0 || (sequences > 0 && batch != 1))
    throw InvalidArgument("packed sequences ('sequences' > 0) have batch 1");
  for (int64_t dim : {featureK, featureV})
    if (dim < 1 || dim > kKdaMaxFeatureDim)
      throw InvalidArgument("K and V must be 1 to " +
                            std::to_string(kKdaMaxFeatureDim));
  if (input != DType::F32 && input != DType::F16 && input != DType::BF16)
    throw InvalidArgument("q's dtype must be f32, f16 or bf16");
  const int64_t chunk = resolveKdaChunk(featureK, featureV, input, options);
  const int64_t chunks =
      (length + chunk - 1) / chunk + (sequences ? sequences + 1 : 0);
  return {
      static_cast<int>(chunk),
      {chunks, batch, heads, featureK, featureV},
      {chunks, batch, heads,
       mlir::rudnn::kdaSavedTileWords(chunk, featureK, featureV,
                                      static_cast<int64_t>(dtypeSize(input)))}};
}
