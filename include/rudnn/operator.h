//===- rudnn/operator.h - Any operator, by name -----------------*- C++ -*-===//
//
// One entry for every operator of the rudnn dialect: its name, its
// attributes and its tensors by the names its contract gives them. The
// typed entry points (rudnn::layerNorm, …) are conveniences over the same
// operators; an operator or option reaches this entry the day it exists.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_OPERATOR_H
#define RUDNN_OPERATOR_H

#include "rudnn/context.h"
#include "rudnn/program.h"

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace rudnn {

/// An attribute's value, converted to the attribute the operator declares:
/// a flag to a unit attribute (absent when false) or a bool, an integer to
/// i64 (or f32), a number to f32, a string to a string.
using AttributeValue = std::variant<bool, int64_t, double, std::string>;

/// Attributes by name, e.g. {{"eps", 1e-5}, {"causal", true}}.
using OperatorAttributes = std::vector<std::pair<std::string, AttributeValue>>;

/// Tensors by their contract names. An operand and a result of one name (a
/// cache updated in place) take the same view once; optional operands and
/// results are absent when not named.
using NamedTensors = std::vector<std::pair<std::string, TensorView>>;

/// Appends `view` under `name` when it is given (an optional tensor).
inline void addIfGiven(NamedTensors &tensors, const char *name,
                       const std::optional<TensorView> &view) {
  if (view)
    tensors.emplace_back(name, *view);
}

/// Calls the operator `op` ("rudnn.layer_norm") on `tensors` with
/// `attributes`: builds its one-op function from the operator's contract
/// (once per context and signature: element types, ranks, static dims,
/// which tensors are given, attribute values), then calls it as
/// Function::call does. Throws InvalidArgument naming the operator, the
/// tensor or the attribute (an unknown name included) before anything is
/// written; Unsupported for an operator rudnn does not have.
void callOperator(Context &context, const std::string &op,
                  const OperatorAttributes &attributes,
                  const NamedTensors &tensors, Stream stream = nullptr);

/// The function callOperator would call for `operands` (results given
/// here are checked, as a cache updated in place) returning the results
/// named in `results`, in the contract's order: for callers that allocate
/// the results from Function::resultShapes first.
Function operatorFunction(Context &context, const std::string &op,
                          const OperatorAttributes &attributes,
                          const NamedTensors &operands,
                          const std::vector<std::string> &results);

/// The names of the operators callOperator takes, sorted.
std::vector<std::string> operatorNames();

/// One tensor of an operator's signature, as its contract states it.
struct SignatureTensor {
  std::string name;
  /// One dim letter per dim, outermost first, e.g. "BTHK".
  std::string layout;
  /// "float" (f32, f16 or bf16), "f32", "i32", "bool", or "as <name>" (the
  /// element type of that tensor).
  std::string element;
  bool optional = false;
  /// For a result: the operand whose memory it updates in place (pass that
  /// operand's view for both), else empty.
  std::string updates;
};

/// One dim letter of an operator's signature.
struct SignatureDim {
  char letter = 0;
  std::string kind, doc;
  /// Static dims shape the generated code (one function per size).
  bool isStatic = false;
  int64_t min = 1, max = INT64_MAX;
  /// A letter whose size divides this one's, or 0.
  char multipleOf = 0;
  /// This dim's size is `times` × the size of `timesOf` + `plus`, or 0.
  char timesOf = 0;
  int64_t times = 1, plus = 0;
  /// This dim counts pieces of `piecesOf`: ceil(its size / the attribute
  /// `perAttribute`), plus the size of `plusOf` when set; or 0.
  char piecesOf = 0;
  std::string perAttribute = {};
  char plusOf = 0;
};

/// What an operator takes: its tensors and dims from its contract, and the
/// names of the attributes its ODS declares.
struct OperatorSignature {
  std::string op, summary;
  std::vector<SignatureTensor> operands, results;
  std::vector<SignatureDim> dims;
  std::vector<std::string> attributes;
};

/// The signature of `op` for a call with `attributes` and tensors of these
/// ranks by name (an LSTM's weights follow its num_layers and
/// bidirectional, and have biases when "bias_ih_l0" is given; the norms'
/// statistics follow x's rank): what callOperator accepts. Unsupported for
/// an operator rudnn does not have.
OperatorSignature operatorSignature(
    const std::string &op, const OperatorAttributes &attributes = {},
    const std::vector<std::pair<std::string, size_t>> &ranks = {});

} // namespace rudnn

#endif // RUDNN_OPERATOR_H
