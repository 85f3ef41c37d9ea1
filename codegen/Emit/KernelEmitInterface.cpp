//===- KernelEmitInterface.cpp - Primitives as CUDA C++ -------------------===//

#include "codegen/Emit/KernelEmitInterface.h"

#include "codegen/Emit/KernelEmitInterface.cpp.inc"
