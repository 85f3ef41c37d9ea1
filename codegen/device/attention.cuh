//===- attention.cuh - The attention family's entry -----------------------===//
//
// Attention kernels (forward, backward, decoding): the core and this
// family's building blocks.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/core.cuh"

#include "rudnn/attention/backward.cuh"
#include "rudnn/attention/backward_hopper.cuh"
#include "rudnn/attention/block.cuh"
#include "rudnn/attention/decode.cuh"
#include "rudnn/attention/decode_split.cuh"
#include "rudnn/attention/forward.cuh"
#include "rudnn/attention/forward_hopper.cuh"
#include "rudnn/attention/merge.cuh"
#include "rudnn/attention/online_softmax.cuh"
