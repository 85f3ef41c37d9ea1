//===- PlanImport.h - A rudnn.plan as the runtime's plan --------*- C++ -*-===//

#ifndef RUDNN_LIB_PLANIMPORT_H
#define RUDNN_LIB_PLANIMPORT_H

#include "lib/ContextImpl.h"

#include "dialects/IR/RudnnOps.h"

namespace rudnn {

/// The runtime plan of `plan`, one to one: its kernels emitted and compiled
/// through the context (kernel cache included). Throws Error(Internal) on IR
/// the verifier should have rejected.
runtime::Plan importPlan(mlir::rudnn::PlanOp plan, Context::Impl &context);

} // namespace rudnn

#endif // RUDNN_LIB_PLANIMPORT_H
