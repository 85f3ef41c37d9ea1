//===- FunctionChecks.h - What a function's calls are checked against -*- C++
//-*-===//
//
// A function of rudnn IR, as its calls see it: the arguments and results it
// declares, and per operator its contract with the argument or result that
// binds each operand and result. Function::call (JIT) and Bundle::call
// (ahead of time, without MLIR) check their views through this, the same
// way, before anything runs.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_RUNTIME_CHECKS_FUNCTIONCHECKS_H
#define RUDNN_RUNTIME_CHECKS_FUNCTIONCHECKS_H

#include "runtime/plans/Plan.h"

#include "dialects/IR/OperatorContract.h"
#include "rudnn/types.h"

#include <string>
#include <utility>
#include <vector>

namespace rudnn::runtime {

/// One operator of a function: its contract (operands another operator
/// computes made optional) and, for each contract operand and result, the
/// argument (or result) index that binds it, -1 when none does.
struct OperatorCheck {
  OperatorContract contract;
  std::vector<int> operandArgument, resultOf;
};

struct FunctionChecks {
  std::vector<TensorInfo> arguments, results;
  std::vector<OperatorCheck> operators;
  /// Results the contracts let be written over an argument, by name.
  std::vector<std::pair<std::string, std::string>> inPlace;

  /// Each view against its declaration, each operator's views against its
  /// contract, and, between operators, that no result meets an argument or
  /// another result. Throws InvalidArgument naming the tensor.
  /// With `valuesOnHost` (the emulation backend's memory), also the
  /// values the contracts constrain (checkIndexValues).
  void checkCall(const std::vector<TensorView> &argumentViews,
                 const std::vector<TensorView> &resultViews,
                 bool valuesOnHost = false) const;

  /// After binding: a parameter named by a dim letter (N = ceil(T / chunk))
  /// fixes that dim in every view a contract lays out with it.
  void checkParamLetters(const Plan &plan, const std::vector<int64_t> &params,
                         const std::vector<TensorView> &argumentViews,
                         const std::vector<TensorView> &resultViews) const;

  /// The shapes the results take for `argumentViews` (checked against the
  /// declarations): dynamic dims from the arguments' dim letters and the
  /// plan's parameters. Throws Unsupported for a size no argument gives.
  std::vector<std::vector<int64_t>>
  resultShapes(const Plan &plan,
               const std::vector<TensorView> &argumentViews) const;

  /// The index into arguments, then results, that each of `plan`'s buffers
  /// is named after; -1 for workspace and unnamed buffers.
  std::vector<int> bufferSources(const Plan &plan) const;
  /// The view each buffer is bound to, from bufferSources' indices (null
  /// where none is).
  static std::vector<const TensorView *>
  bufferViews(const std::vector<int> &sources,
              const std::vector<TensorView> &argumentViews,
              const std::vector<TensorView> &resultViews);
};

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_CHECKS_FUNCTIONCHECKS_H
