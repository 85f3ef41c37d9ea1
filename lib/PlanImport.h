//===- PlanImport.h - A rudnn.plan as the runtime's plan --------*- C++ -*-===//

#ifndef RUDNN_LIB_PLANIMPORT_H
#define RUDNN_LIB_PLANIMPORT_H

#include "lib/ContextImpl.h"

#include "dialects/IR/RudnnOps.h"

#include "mlir/IR/BuiltinOps.h"

namespace rudnn {

/// Compiles a kernel for a target other than the context's backend (the
/// architectures of an ahead-of-time bundle).
using KernelCompile = std::function<std::string(const runtime::KernelSource &)>;

/// The runtime plan of `plan`, one to one: its kernels emitted and compiled
/// through the context (kernel cache included), or all of them with
/// `compile` when given. Throws Error(Internal) on IR the verifier should
/// have rejected.
runtime::Plan importPlan(mlir::rudnn::PlanOp plan, Context::Impl &context,
                         const KernelCompile &compile = {});

/// Lowers `module` in place through rudnn-specialize (for `arch`),
/// rudnn-decompose and rudnn-plan, and imports the plan of function
/// `function` (the first plan when empty), named `name`. Throws
/// Error(Internal) carrying the diagnostics when a pass fails.
runtime::Plan lowerToPlan(Context::Impl &context, mlir::ModuleOp module,
                          const std::string &arch, const std::string &function,
                          const std::string &name,
                          const KernelCompile &compile = {});

} // namespace rudnn

#endif // RUDNN_LIB_PLANIMPORT_H
