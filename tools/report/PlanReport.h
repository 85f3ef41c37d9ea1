//===- PlanReport.h - The kernel report of a planned module -----*- C++ -*-===//
//
// Shared by rudnn-translate (--rudnn-kernel-report) and rudnn-run (--report).
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_TOOLS_REPORT_PLANREPORT_H
#define RUDNN_TOOLS_REPORT_PLANREPORT_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace rudnn::tools {

/// The module's target architecture ("sm_90" when it names none).
std::string targetArch(mlir::ModuleOp module);

/// Prints, per kernel of `module`'s plans, what a profiler would show
/// without a GPU (runtime/plans/KernelReport.h), as text or JSON. With `dims`
/// ("B=1,T=32768,H=16") also each launch's grid, blocks and waves on the
/// target and every plan's workspace for those dims.
mlir::LogicalResult printPlanReport(mlir::ModuleOp module,
                                    llvm::raw_ostream &os, bool json,
                                    const std::string &dims);

/// The kernel report of the plans the file at `path` lowers to for `arch`
/// (empty: the default target), through the pipeline the JIT runs
/// (rudnn-specialize, rudnn-decompose, rudnn-plan): what rudnn-run ran.
/// Throws InvalidArgument carrying the diagnostics when it cannot.
void printFileReport(const std::string &path, const std::string &arch,
                     const std::string &dims, llvm::raw_ostream &os);

} // namespace rudnn::tools

#endif // RUDNN_TOOLS_REPORT_PLANREPORT_H
