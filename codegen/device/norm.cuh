//===- norm.cuh - The norm family's entry ---------------------------------===//
//
// Normalization kernels: the core and this family's building blocks.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/core.cuh"

#include "rudnn/norm/backward.cuh"
#include "rudnn/norm/rows.cuh"
#include "rudnn/norm/welford.cuh"
