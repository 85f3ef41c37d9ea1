//===- KdaChecks.h - Validating KDA calls -----------------------*- C++ -*-===//
//
// The argument checks the KDA forward and backward share: every fault is
// named as an InvalidArgument (or Unsupported) before anything runs.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_LIB_KDA_KDACHECKS_H
#define RUDNN_LIB_KDA_KDACHECKS_H

#include "rudnn/kda.h"

#include <cstdint>
#include <string>
#include <vector>

namespace rudnn {

enum class TensorLayout {
  Strided,    // any outer strides, innermost (feature) dim contiguous
  AnyStrides, // no feature dim (beta): any strides
  Dense,      // states: dense row-major
};

/// Checks one tensor: data, rank, expected shape, layout, non-negative
/// strides and an extent that fits in int64 and the address space.
void checkTensor(const std::string &name, const TensorView &view,
                 const std::vector<int64_t> &expected, TensorLayout layout);

void checkDtype(const std::string &name, const TensorView &view,
                DType expected);

/// The sizes of a valid call.
struct KdaCallShape {
  int64_t B, T, H, K, V, chunk, N;
  double scale;
};

/// Checks the forward's inputs and options (shared by the backward, whose
/// inputs are the forward's) and resolves the chunk and scale.
KdaCallShape checkKdaInputs(const KdaForwardInputs &inputs,
                            const KdaOptions &options);

/// No output overlaps itself, another output or an input; the final state
/// may be exactly the initial state's view (updated in place).
void checkKdaForwardViews(const KdaForwardInputs &inputs,
                          const KdaForwardOutputs &outputs);

/// No gradient overlaps itself, another gradient or any input (the
/// forward's, d_output, d_final_state, the saved boundaries).
void checkKdaBackwardViews(const KdaBackwardInputs &inputs,
                           const KdaBackwardOutputs &outputs);

/// The grid limits on B·H and 32-bit B, T, H.
void checkKdaGridLimits(const KdaCallShape &shape);

} // namespace rudnn

#endif // RUDNN_LIB_KDA_KDACHECKS_H
