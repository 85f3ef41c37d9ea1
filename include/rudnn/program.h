//===- rudnn/program.h - rudnn IR functions, JIT-compiled -------*- C++ -*-===//
//
// A host program loads a module of rudnn IR (text or a file), looks up a
// function, inspects its arguments and results, and calls it on tensor
// views:
//
//   rudnn::Module module = rudnn::Module::load(context, "kda.mlir");
//   rudnn::Function main = module.function("main");
//   for (const rudnn::TensorInfo &arg : main.arguments()) ...
//   main.call({q, k, v, g, beta, s0}, {output, finalState}, stream);
//
// A function compiles once, at its first call: dims it declares dynamic
// (`?`) take each call's sizes without a compile. No MLIR type appears here.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_PROGRAM_H
#define RUDNN_PROGRAM_H

#include "rudnn/context.h"
#include "rudnn/types.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace rudnn {

struct OperatorContract;

/// One operator op of a function, in program order. The function's values
/// are numbered: its arguments 0 … A − 1, then each operator's results in
/// order. `operands` and `results` follow the operator's contract, each
/// the number of the value it reads or defines, -1 when absent.
struct OperatorCall {
  std::string op; // e.g. "rudnn.kda"
  /// Numeric attributes once specialized for the context's target (e.g.
  /// "chunk", "scale"); a flag that is set ("causal") is 1.
  std::map<std::string, double> attributes;
  std::vector<int> operands, results;
  /// Its contract (dialects/IR/OperatorContract.h, for tools), which lives
  /// as long as the process.
  const OperatorContract *contract = nullptr;
};

class Function {
public:
  const std::string &name() const;
  const std::vector<TensorInfo> &arguments() const;
  const std::vector<TensorInfo> &results() const;
  /// The operator ops the function calls, and the value each of its
  /// results is.
  const std::vector<OperatorCall> &operators() const;
  const std::vector<int> &resultValues() const;

  /// The results' shapes for arguments of these shapes: dynamic dims from
  /// the arguments' dims of the same letter, or from a plan parameter of
  /// that letter (the chunk count N). Compiles the function if it has not
  /// been.
  std::vector<std::vector<int64_t>>
  resultShapes(const std::vector<TensorView> &arguments) const;

  /// Runs the function on the context's backend: `arguments` and `results`
  /// in declaration order, results written into the caller's memory.
  /// Throws InvalidArgument naming the tensor for a view that does not fit
  /// its declaration or its operator's contract; nothing is written then.
  /// Thread-safe.
  void call(const std::vector<TensorView> &arguments,
            const std::vector<TensorView> &results,
            Stream stream = nullptr) const;

  /// Compiles the function for each of `targets` ("sm_90", "sm_80", …:
  /// cubin and PTX, no device needed; "emulation": on a context whose
  /// backend is emulation) and writes the bundle librudnn_runtime loads
  /// (rudnn/bundle.h). Throws before writing anything when a target fails.
  void saveBundle(const std::string &path,
                  const std::vector<std::string> &targets = {"sm_90"}) const;

  struct Impl;

private:
  friend class Module;
  explicit Function(std::shared_ptr<Impl> impl) : impl(std::move(impl)) {}
  std::shared_ptr<Impl> impl;
};

class Module {
public:
  /// Parses and verifies rudnn IR text and specializes it for the
  /// context's target. Throws InvalidArgument carrying the diagnostics.
  static Module parse(Context &context, const std::string &text);
  /// parse() of a file's contents.
  static Module load(Context &context, const std::string &path);

  /// The names of its functions, in order.
  std::vector<std::string> functions() const;
  /// Throws InvalidArgument for an unknown name, Unsupported for a function
  /// of anything but operator ops over its arguments.
  Function function(const std::string &name) const;

  struct Impl;

private:
  explicit Module(std::shared_ptr<Impl> impl) : impl(std::move(impl)) {}
  std::shared_ptr<Impl> impl;
};

} // namespace rudnn

#endif // RUDNN_PROGRAM_H
