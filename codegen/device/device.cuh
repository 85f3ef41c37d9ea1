//===- device.cuh - The whole rudnn device library ------------------------===//
//
// Every family at once, for host programs and tests that use building blocks
// of several families. Generated kernels include their family's entry header
// (attention.cuh, kda.cuh, lstm.cuh, norm.cuh) instead, so that a kernel's
// compile and cache key depend only on what it can use. Architecture-specific
// instructions live in small wrappers under arch/; the tile logic above them
// is written once for every architecture. Every header compiles under NVRTC
// and under the CPU emulation prelude, where the wrappers run host
// implementations of their instructions.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/attention.cuh"
#include "rudnn/core.cuh"
#include "rudnn/kda.cuh"
#include "rudnn/lstm.cuh"
#include "rudnn/norm.cuh"
