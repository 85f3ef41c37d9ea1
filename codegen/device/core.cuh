//===- core.cuh - The device library's core -------------------------------===//
//
// Every family's kernels build on this: the architecture wrappers (arch/),
// the tensor and tile layers and the warp and math helpers. A family's entry
// header (attention.cuh, kda.cuh, ...) includes it, and a generated kernel
// includes its family's entry header alone, so the compiler parses, and the
// kernel cache keys on, only what the kernel can use.
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
#include "rudnn/arch/named_barrier.cuh"
#include "rudnn/arch/tma.cuh"
#include "rudnn/arch/wgmma.cuh"
#include "rudnn/math.cuh"
#include "rudnn/packed.cuh"
#include "rudnn/shared.cuh"
#include "rudnn/tensor.cuh"
#include "rudnn/tile/copy.cuh"
#include "rudnn/tile/fragment.cuh"
#include "rudnn/tile/pipeline.cuh"
#include "rudnn/tile/shared_tile.cuh"
#include "rudnn/tile/warp_tile.cuh"
#include "rudnn/warp.cuh"
