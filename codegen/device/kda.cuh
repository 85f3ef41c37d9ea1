//===- kda.cuh - The kda family's entry -----------------------------------===//
//
// Kimi Delta Attention kernels: the core and this family's building blocks.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/core.cuh"

#include "rudnn/kda/backward.cuh"
#include "rudnn/kda/forward.cuh"
#include "rudnn/kda/gradients.cuh"
#include "rudnn/kda/heads.cuh"
#include "rudnn/kda/inputs.cuh"
