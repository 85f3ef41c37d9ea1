//===- device.cuh - The rudnn device library: one entry header ------------===//
//
// Generated kernels include this header alone. Architecture-specific
// instructions live in small wrappers under arch/; the tile logic above them
// (warp.cuh, math.cuh, ...) is written once for every architecture. Every
// header compiles under NVRTC and under the CPU emulation prelude, where the
// wrappers run host implementations of their instructions.
//
//===----------------------------------------------------------------------===//

#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "rudnn/arch/cp_async.cuh"
#include "rudnn/arch/global.cuh"
#include "rudnn/arch/grid.cuh"
#include "rudnn/arch/ldmatrix.cuh"
#include "rudnn/arch/math.cuh"
#include "rudnn/arch/mbarrier.cuh"
#include "rudnn/arch/mma.cuh"
#include "rudnn/arch/tma.cuh"
#include "rudnn/arch/wgmma.cuh"
#include "rudnn/attention/backward.cuh"
#include "rudnn/attention/backward_hopper.cuh"
#include "rudnn/attention/block.cuh"
#include "rudnn/attention/decode.cuh"
#include "rudnn/attention/decode_split.cuh"
#include "rudnn/attention/forward.cuh"
#include "rudnn/attention/forward_hopper.cuh"
#include "rudnn/attention/online_softmax.cuh"
#include "rudnn/kda/backward.cuh"
#include "rudnn/kda/forward.cuh"
#include "rudnn/kda/gradients.cuh"
#include "rudnn/kda/heads.cuh"
#include "rudnn/kda/inputs.cuh"
#include "rudnn/lstm/projection.cuh"
#include "rudnn/lstm/recurrence.cuh"
#include "rudnn/math.cuh"
#include "rudnn/norm/backward.cuh"
#include "rudnn/norm/rows.cuh"
#include "rudnn/norm/welford.cuh"
#include "rudnn/shared.cuh"
#include "rudnn/tensor.cuh"
#include "rudnn/tile/copy.cuh"
#include "rudnn/tile/fragment.cuh"
#include "rudnn/tile/pipeline.cuh"
#include "rudnn/tile/shared_tile.cuh"
#include "rudnn/tile/warp_tile.cuh"
#include "rudnn/warp.cuh"
