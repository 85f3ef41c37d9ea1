//===- arch/host_visible.cuh - Module variables the host finds by name ----===//
//
// A module-scope variable the runtime looks up by name: cuModuleGetGlobal
// finds any extern "C" __device__ variable of a module; an emulated kernel
// object hides its symbols by default, so there it must be exported.
//
//===----------------------------------------------------------------------===//

#pragma once

#ifdef __RUDNN_EMULATION__
#define RUDNN_HOST_VISIBLE __attribute__((visibility("default")))
#else
#define RUDNN_HOST_VISIBLE
#endif
