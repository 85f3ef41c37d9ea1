//===- lstm.cuh - The lstm family's entry ---------------------------------===//
//
// LSTM kernels: the core and this family's building blocks.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/core.cuh"

#include "rudnn/lstm/backward.cuh"
#include "rudnn/lstm/gradients.cuh"
#include "rudnn/lstm/projection.cuh"
#include "rudnn/lstm/recompute.cuh"
#include "rudnn/lstm/recurrence.cuh"
