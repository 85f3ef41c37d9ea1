//===- shared.cuh - Dynamic shared memory ---------------------------------===//
//
// RUDNN_DYNAMIC_SHARED(type, name) declares `type *name` pointing at the
// block's dynamic shared memory (the launch's dynamicSharedBytes), 16-byte
// aligned. The emulation prelude defines it for the host.
//
//===----------------------------------------------------------------------===//

#pragma once

#ifndef __RUDNN_EMULATION__
extern __shared__ __align__(16) unsigned char rudnn_dynamic_shared_[];

#define RUDNN_DYNAMIC_SHARED(type, name)                                       \
  type *name = reinterpret_cast<type *>(rudnn_dynamic_shared_)
#endif
