//===- PlanImport.h - A rudnn.plan as the runtime's plan --------*- C++ -*-===//

#ifndef RUDNN_LIB_PLANIMPORT_H
#define RUDNN_LIB_PLANIMPORT_H

#include "lib/ContextImpl.h"

#include "dialects/IR/RudnnOps.h"

#include "mlir/IR/BuiltinOps.h"

namespace rudnn {

/// The runtime plan of `plan`, one to one: its kernels emitted and compiled
/// through the context (kernel cache included). Throws Error(Internal) on IR
/// the verifier should have rejected.
runtime::Plan importPlan(mlir::rudnn::PlanOp plan, Context::Impl &context);

/// Lowers `module` in place through rudnn-specialize (for `arch`),
/// rudnn-decompose and rudnn-plan, and imports the plan of function
/// `function` (the first plan when empty), named `name`. Throws
/// Error(Internal) carrying the diagnostics when a pass fails.
runtime::Plan lowerToPlan(Context::Impl &context, mlir::ModuleOp module,
                          const std::string &arch, const std::string &function,
                          const std::string &name);

} // namespace rudnn

#endif // RUDNN_LIB_PLANIMPORT_H
