//===- KdaKernels.h - The KDA forward plan and its kernels ------*- C++ -*-===//
//
// A KDA call's signature written once as a rudnn IR function and called
// through the Program API, which compiles it at its first call; the plan's
// parameters (B, T, H, N = ceil(T / chunk), the strides) are read from the
// views.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_LIB_KDA_KDAKERNELS_H
#define RUDNN_LIB_KDA_KDAKERNELS_H

#include "codegen/Emit/KdaEmitter.h"
#include "lib/ContextImpl.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/SmallVector.h"

#include "rudnn/program.h"

#include "rudnn/types.h"

#include <map>
#include <string>
#include <vector>

namespace rudnn {

/// A call's specialization; chunk 0 when the options leave it to the
/// target's policy (rudnn-specialize then chooses it).
using codegen::KdaKernelSpec;

/// What a call applies to its inputs before the recurrence.
struct KdaInputTransforms {
  bool qkL2Norm = false, betaLogits = false;
  /// The gate from raw projections: a_log given, dt_bias given.
  bool gate = false, gateBias = false;
  /// Negative: the bounded gate; 0: none.
  float lowerBound = 0;
};

/// The transforms as a KDA operator's attributes (null where not asked).
struct KdaTransformAttrs {
  mlir::UnitAttr qkL2Norm, betaLogits;
  mlir::FloatAttr lowerBound;
  KdaTransformAttrs(mlir::Builder &b, const KdaInputTransforms &t);
};

/// Appends the gate parameters' types the transforms take: a_log [H] and
/// dt_bias [H, K] f32.
void addGateParameters(llvm::SmallVector<mlir::Type> &types, mlir::Builder &b,
                       int64_t featureK, const KdaInputTransforms &t);

/// The input transforms in a plan-cache key.
std::string kdaTransformsKey(const KdaInputTransforms &transforms);

/// What shapes the plan besides the kernels.
struct KdaPlanFlags {
  bool initialState, finalState, saveBoundaries;
  float scale;
  /// Whether the forward saves its tiles too (the spec's chunk is set).
  bool saveTiles = false;
  /// Whether q and k have fewer heads than v (GVA).
  bool groupedHeads = false;
  KdaInputTransforms transforms = {};
};

/// What shapes a backward plan besides the kernels.
struct KdaBackwardFlags {
  bool initialState, dFinalState, savedBoundaries;
  float scale;
  /// Whether the caller wants d_initial_state (only with an initial state).
  bool dInitialState = false;
  /// Whether the forward's tiles come with its boundaries.
  bool savedTiles = false;
  /// Whether q and k have fewer heads than v (GVA).
  bool groupedHeads = false;
  KdaInputTransforms transforms = {};
};

/// The plan-cache key of a forward call.
std::string kdaForwardSignature(const KdaKernelSpec &spec,
                                const KdaPlanFlags &flags);

/// The function of a forward call with this signature, written as rudnn IR
/// (dynamic B, T, H) and compiled through the Program API at its first call;
/// one per context and signature.
Function kdaForwardFunction(Context &context, const KdaKernelSpec &spec,
                            const KdaPlanFlags &flags);

/// The chunk rudnn-specialize left on the function's KDA op.
inline int64_t chunkOf(const Function &function) {
  return static_cast<int64_t>(
      function.operators().front().attributes.at("chunk"));
}

/// The plan-cache key of a backward call.
std::string kdaBackwardSignature(const KdaKernelSpec &spec,
                                 const KdaBackwardFlags &flags);

/// The function of a backward call with this signature, likewise.
Function kdaBackwardFunction(Context &context, const KdaKernelSpec &spec,
                             const KdaBackwardFlags &flags);

} // namespace rudnn

#endif // RUDNN_LIB_KDA_KDAKERNELS_H
