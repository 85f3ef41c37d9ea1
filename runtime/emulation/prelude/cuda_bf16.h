//===- cuda_bf16.h - __nv_bfloat16 for emulated kernels -------------------===//
//
// Found first on the emulation include path, in place of the CUDA header.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn_emu_fp16.h"
