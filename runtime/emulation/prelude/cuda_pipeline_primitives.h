//===- cuda_pipeline_primitives.h - Pipeline primitives, emulated ---------===//
//
// Found first on the emulation include path, in place of the CUDA header:
// the primitives themselves are in rudnn_emu_async.h, on the emulated
// cp.async.
//
//===----------------------------------------------------------------------===//

#pragma once
