//===- KdaChunked.h - The chunked KDA backward, in float64 ------*- C++ -*-===//
//
// The backward of the chunked algorithm the kernels implement (WY form, one
// reverse walk over chunks for the state gradient, everything else chunk-
// parallel), evaluated in double precision. It must agree with the token
// recurrence's gradient (kdaBackward); the GPU kernels then follow it step
// by step.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_LIB_REFERENCE_KDA_KDACHUNKED_H
#define RUDNN_LIB_REFERENCE_KDA_KDACHUNKED_H

#include "lib/reference/kda/KdaReference.h"

namespace rudnn::reference {

KdaGradients kdaBackwardChunked(const KdaShape &shape, const KdaInputs &inputs,
                                double scale,
                                const std::vector<double> &dOutput,
                                const std::vector<double> &dFinalState,
                                int64_t chunk);

} // namespace rudnn::reference

#endif // RUDNN_LIB_REFERENCE_KDA_KDACHUNKED_H
