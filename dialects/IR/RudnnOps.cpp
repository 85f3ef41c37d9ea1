//===- RudnnOps.cpp - rudnn's generated op classes ------------------------===//
//
// The ODS-generated classes of every family's ops; each family's rules
// (verifiers, builders from contracts) live in its own Rudnn<Family>Ops.cpp
// or <Family>Interfaces.cpp.
//
//===----------------------------------------------------------------------===//

#include "dialects/IR/RudnnOps.h"

using namespace mlir;
using namespace mlir::rudnn;

// Generated builders and parsers take parameters some ops do not use.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define GET_OP_CLASSES
#include "dialects/IR/RudnnOps.cpp.inc"
#pragma GCC diagnostic pop
