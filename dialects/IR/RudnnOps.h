//===- RudnnOps.h - rudnn operations ----------------------------*- C++ -*-===//

#ifndef RUDNN_DIALECTS_IR_RUDNNOPS_H
#define RUDNN_DIALECTS_IR_RUDNNOPS_H

#include "dialects/IR/RudnnDialect.h"
#include "dialects/IR/RudnnInterfaces.h"

#include "dialects/IR/kda/KdaContracts.h"

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/RegionKindInterface.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

// Generated accessors take parameters some ops do not use.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define GET_OP_CLASSES
#include "dialects/IR/RudnnOps.h.inc"
#pragma GCC diagnostic pop

namespace mlir::rudnn {

using ::rudnn::kKdaMaxFeatureDim;

/// Chunk sizes a KDA op accepts: the kernels keep a chunk x chunk fp32
/// matrix in static shared memory, which must stay under 48 KiB.
inline constexpr int64_t kKdaChunkSizes[] = {16, 32, 64};

/// Whether `chunk` is one of `kKdaChunkSizes`.
bool isValidKdaChunk(int64_t chunk);

/// The default KDA scale, K^-0.5.
double defaultKdaScale(int64_t featureDimK);

/// Tokens of each partial sum of rudnn.kda_gate_backward.
int64_t kdaGatePartialTokens();

/// Whether every view in `views` promises 16-byte rows (`rudnn.align`): a
/// function argument with the promise, or a result the function returns
/// with it.
bool promisesAlignedViews(ArrayRef<Value> views);

/// Marks the primitives `op`'s decomposition put after `before` (nested
/// ones included; from the block's start when null) with `marker` when
/// promisesAlignedViews(views). By default the marker says the views their
/// kernels copy into shared memory are aligned (`rudnn.aligned_views`);
/// `rudnn.aligned_outputs` says so of the results their kernels store.
void markAlignedViews(Operation *op, Operation *before, ArrayRef<Value> views,
                      StringRef marker = RudnnDialect::kAlignedViewsAttrName);

} // namespace mlir::rudnn

#endif // RUDNN_DIALECTS_IR_RUDNNOPS_H
