//===- cuda_pipeline.h - The pipeline primitives, emulated ----------------===//
//
// Found first on the emulation include path, in place of the CUDA header:
// its primitives (__pipeline_memcpy_async, __pipeline_commit,
// __pipeline_wait_prior) are in rudnn_emu_async.h, on the emulated
// cp.async. Its C++ interface (nvcuda::experimental::pipeline) is not
// emulated.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "cuda_pipeline_primitives.h"
