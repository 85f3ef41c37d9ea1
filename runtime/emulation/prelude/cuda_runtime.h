//===- cuda_runtime.h - What a kernel file needs of it, emulated ----------===//
//
// Found first on the emulation include path, in place of the CUDA header:
// kernels include it for the built-in variables, types and intrinsics,
// which the prelude (rudnn_emulation.h) defines. The host runtime API is
// not part of a kernel and is not here.
//
//===----------------------------------------------------------------------===//

#pragma once
