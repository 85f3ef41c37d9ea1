//===- cuda_fp16.h - __half for emulated kernels --------------------------===//
//
// Found first on the emulation include path, in place of the CUDA header.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn_emu_fp16.h"
