//===- KdaKernels.h - The KDA forward plan and its kernels ------*- C++ -*-===//
//
// Builds the plan of a KDA forward signature through the compiler pipeline,
// over the run-time parameters
//   B, T, H, N = ceil(T / chunk), then the (batch, time, head) strides of
//   q, k, v, g, beta and output.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_LIB_KDA_KDAKERNELS_H
#define RUDNN_LIB_KDA_KDAKERNELS_H

#include "codegen/Emit/KdaEmitter.h"
#include "lib/ContextImpl.h"

#include "rudnn/types.h"

#include <map>
#include <string>
#include <vector>

namespace rudnn {

using codegen::KdaKernelSpec;

/// What shapes the plan besides the kernels.
struct KdaPlanFlags {
  bool initialState, finalState, saveBoundaries;
  float scale;
};

/// What shapes a backward plan besides the kernels.
struct KdaBackwardFlags {
  bool initialState, dFinalState, savedBoundaries;
  float scale;
};

/// The plan-cache key of a forward call.
std::string kdaForwardSignature(const KdaKernelSpec &spec,
                                const KdaPlanFlags &flags);

/// The plan of a call with this signature: the call written as rudnn IR
/// (dynamic B, T, H), lowered by rudnn-specialize, rudnn-decompose and
/// rudnn-plan, and imported with its kernels compiled through the kernel
/// cache.
runtime::Plan buildKdaForwardPlan(Context::Impl &context,
                                  const KdaKernelSpec &spec,
                                  const KdaPlanFlags &flags);

/// The plan-cache key of a backward call.
std::string kdaBackwardSignature(const KdaKernelSpec &spec,
                                 const KdaBackwardFlags &flags);

/// The plan of a backward call with this signature, lowered likewise.
runtime::Plan buildKdaBackwardPlan(Context::Impl &context,
                                   const KdaKernelSpec &spec,
                                   const KdaBackwardFlags &flags);

} // namespace rudnn

#endif // RUDNN_LIB_KDA_KDAKERNELS_H
