//===- Program.h - An operator program run through the JIT ------*- C++ -*-===//
//
// rudnn-run's model of an .mlir file: the entry function's arguments (names,
// element types, shapes whose dynamic dims the inputs bind), and its body of
// operator ops, executed one by one through the JIT API on device tensors, or
// through the float64 references on host values.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_TOOLS_RUDNN_RUN_PROGRAM_H
#define RUDNN_TOOLS_RUDNN_RUN_PROGRAM_H

#include "dialects/IR/OperatorContract.h"

#include "rudnn/context.h"

#include "rudnn/program.h"

#include <map>
#include <string>
#include <vector>

namespace rudnn::run {

/// A dense row-major array on the host; `values` hold what the device holds
/// (already rounded to `dtype`).
struct HostTensor {
  std::string name;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<double> values;
};

struct Argument {
  std::string name;
  DType dtype;
  std::vector<int64_t> shape; // dynamic dims are -1
  /// Dim letters of the operator contract (e.g. "BTHK") and the operand the
  /// argument feeds (e.g. "k"); empty when no operator uses it.
  std::string layout, role;
  /// How real callers' values of it look (the contract's rule).
  SampleRule sample;
  /// What an operator saves for another in a layout of its own (a forward's
  /// tiles): drawn as zeros, and no reference checks a function taking it.
  bool opaque = false;
  /// A result of this operator on the operands of the call reading it (the
  /// function's operators()[call]), as a backward takes its forward's.
  std::string resultOf;
  int call = -1;
};

/// rudnn-run's view of a function, over the Program API: no operator has
/// code here; results are compared through the float64 reference of the
/// function's operator (lib/reference/OperatorReferences.h).
class Program {
public:
  /// Loads `path` for the context's target and finds `entry`. Throws
  /// InvalidArgument carrying MLIR's diagnostics.
  Program(Context &context, const std::string &path, const std::string &entry);
  ~Program();

  const std::vector<Argument> &arguments() const { return arguments_; }

  /// Fills in `dims` the sizes the operators' contracts fix from others
  /// given: a dim that is another times a factor plus a constant (the
  /// offsets C = S + 1 of packed sequences) from that other, or back.
  void completeDims(std::map<char, int64_t> &dims) const;

  /// Runs the entry function on the context's backend. With `repeats` > 1
  /// the body runs that many times on the same inputs, and `milliseconds`
  /// receives the wall time of each run (synchronized).
  std::vector<HostTensor>
  run(Context &context, const std::vector<HostTensor> &inputs, int repeats = 1,
      std::vector<double> *milliseconds = nullptr) const;
  /// Replaces the drawn inputs that are another operator's results
  /// (Argument::resultOf) by that operator's float64 results on the other
  /// inputs, rounded to their types: a backward drawn at random is then
  /// taken at a point its forward reaches.
  void deriveResults(std::vector<HostTensor> &inputs) const;
  /// Throws Unsupported unless the float64 references can check the
  /// function: none of its arguments is opaque.
  void requireCheckable() const;
  /// Whether an operator, as specialized, rounds f32 products' operands to
  /// TF32 (`allow_tf32`).
  bool roundsToTf32() const;
  /// The same function through the float64 references; an opaque result
  /// (what a forward saves in its kernels' layout) has no values.
  std::vector<HostTensor>
  reference(const std::vector<HostTensor> &inputs) const;
  /// How far each result moves, per unit of relative change, when every
  /// input value moves by a small relative amount of random sign: the scale
  /// of the rounding errors a result inherits from the values it is made
  /// of, for the comparison's floor (lib/reference/Compare.h).
  std::vector<HostTensor>
  sensitivity(const std::vector<HostTensor> &inputs) const;

private:
  Module module;
  Function function;
  std::vector<Argument> arguments_;
};

/// The contracts of every registered operator op, in name order.
std::vector<const OperatorContract *> operatorContracts();

/// Fills each argument's dynamic dims from `dims` (contract letter → size)
/// and draws values as real callers provide them (keys L2-normalised, g ≤ 0,
/// beta in (0, 1); opaque ones zero), rounded to the argument's dtype.
std::vector<HostTensor> randomInputs(const std::vector<Argument> &arguments,
                                     const std::map<char, int64_t> &dims,
                                     unsigned seed);

/// Reads `directory/<name>.npy` for each argument, checks it against the
/// declared type and converts it to the argument's dtype.
std::vector<HostTensor> readInputs(const std::vector<Argument> &arguments,
                                   const std::string &directory);

/// Writes each tensor as `directory/<name>.npy` (floating ones as float32).
void writeTensors(const std::vector<HostTensor> &tensors,
                  const std::string &directory);

} // namespace rudnn::run

#endif // RUDNN_TOOLS_RUDNN_RUN_PROGRAM_H
