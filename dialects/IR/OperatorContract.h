//===- OperatorContract.h - What an operator takes and returns --*- C++ -*-===//
//
// An operator's contract, stated once and read by everything that needs it:
// the op verifier (through the operator interface), the host-side checks of
// the JIT API, rudnn-run's binding and random inputs, and the docs. Plain
// C++ with no MLIR types, so code that never builds IR reads it too.
//
// Operands and results are listed in the op's ODS order; each names its
// dims by layout letters ("BTHK"), and a letter means one size everywhere in
// a call.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_DIALECTS_IR_OPERATORCONTRACT_H
#define RUDNN_DIALECTS_IR_OPERATORCONTRACT_H

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rudnn {

/// The element types a tensor may have.
enum class ElementRule {
  Float,  // f32, f16 or bf16
  F32,    // f32 only
  SameAs, // the element type of `sameAs`
  I32,    // i32 (lengths, indices)
  Bool,   // i1, one byte per element (masks)
};

/// How a tensor's elements may sit in memory (for views passed by callers).
enum class Packing {
  InnerContiguous, // any outer strides, innermost dim contiguous
  AnyStrides,      // any non-negative strides
  Dense,           // dense row-major
};

/// What an operand's values are, as real callers provide them: the index
/// checks read Lengths and Offsets, and sampleRuleOf turns each kind into
/// the rule tools and tests draw it by.
enum class Sample {
  Normal,       // standard normal
  HalfNormal,   // normal × 0.5 (states)
  LogDecay,     // uniform in [-1, 0]
  Probability,  // uniform in [0.05, 0.95]
  UnitRows,     // normal, each row along the innermost dim L2-normalised
  Lengths,      // i32 uniform in [0, size of `counts`], both ends included
  Offsets,      // i32 from 0 up to the size of `counts`, never decreasing
  Mask,         // bool, true with probability 3/4
  CacheLengths, // i32 uniform in [0, room − size of `counts`]: cached
                // tokens leaving room for the new ones
  Pages,        // i32 distinct page indices below the size of `counts`,
                // shuffled; −1 once the pages run out
};

/// How a sampler draws a tensor's values, as data: tools and tests draw
/// any operator's inputs from it without knowing the operator.
struct SampleRule {
  enum class Draw {
    Normal,      // normal × `scale`
    Uniform,     // uniform between low and high
    Bernoulli,   // true with probability `low`
    Integers,    // integers uniform in [0, bound], both ends included
    Permutation, // distinct integers below the bound, shuffled, one an
                 // entry; −1 once they run out
  };
  Draw draw = Draw::Normal;
  double scale = 1, low = 0, high = 1;
  /// Integers and Permutation: the bound is the product of the sizes of
  /// `upTo`'s letters (0 when none), less the size of `less` (none when 0),
  /// at least 0.
  std::string upTo;
  char less = 0;
  /// Sorted, then the first entry 0 and the last the bound (offsets).
  bool sorted = false;
  /// Each row along the innermost dim divided by its L2 norm.
  bool unitRows = false;
};

struct TensorContract {
  std::string_view name;
  std::string_view layout; // one letter per dim, e.g. "BTHK"
  ElementRule element = ElementRule::Float;
  std::string_view sameAs = {};
  bool optional = false;
  Packing packing = Packing::InnerContiguous;
  /// For a result: the operand whose view it may be exactly (an update in
  /// place, e.g. the final state over the initial state).
  std::string_view inPlaceOf = {};
  /// For a result: the operand whose memory it is, updated in place (a
  /// cache appended to); callers pass that operand's view for it.
  std::string_view updates = {};
  std::string_view doc = {};
  Sample sample = Sample::Normal;
  /// Sample::Lengths, Sample::Offsets, Sample::Pages: the dim letter whose
  /// size the values count up to; Sample::CacheLengths: the letter of the
  /// room the values leave.
  char counts = 0;
  /// Sample::CacheLengths: the letters whose sizes multiply to the
  /// capacity ("S", or "MZ": pages an entry times tokens a page).
  std::string_view room = {};
  /// A layout private to the kernels, which one operator saves for another
  /// (a forward's tiles for its backward): no reference computes it and no
  /// tool draws it at random.
  bool opaque = false;
  /// An operand that is a result of the operator `resultOf` on the same
  /// call's operands of those names (a backward's saved forward outputs):
  /// tools draw it through that operator's float64 reference, so the call
  /// is made at a point its forward reaches.
  std::string_view resultOf = {};
  /// A result giving each entry's status, nonzero where the operator
  /// refused the entry (wrote nothing for it): a checked run reports those
  /// as an error.
  bool reportsRefusals = false;
};

/// A tensor named `name`, laid out as `layout`, its elements per `element`.
inline TensorContract contractTensor(std::string_view name,
                                     std::string_view layout,
                                     ElementRule element, std::string_view doc,
                                     Sample sample = Sample::Normal) {
  TensorContract t;
  t.name = name;
  t.layout = layout;
  t.element = element;
  t.doc = doc;
  t.sample = sample;
  return t;
}

/// The optional per-entry status of an operator that refuses bad entries
/// one by one (`doc` says what 0 and 1 mean): i32 [B], dense.
inline TensorContract refusalStatus(std::string_view doc) {
  TensorContract t = contractTensor("status", "B", ElementRule::I32, doc);
  t.packing = Packing::Dense;
  t.optional = true;
  t.reportsRefusals = true;
  return t;
}

/// `t` with the element type of the tensor named `other`.
inline TensorContract withElementsOf(TensorContract t, std::string_view other) {
  t.element = ElementRule::SameAs;
  t.sameAs = other;
  return t;
}

struct DimContract {
  char letter;
  /// What diagnostics call it: "feature dim K is 300, expected 1 to 256".
  std::string_view kind;
  std::string_view doc;
  /// Static dims shape the generated code; the others may be dynamic and
  /// change without a compile.
  bool isStatic = false;
  int64_t min = 1, max = INT64_MAX;
  /// A letter whose size must divide this dim's ('G' for query heads H
  /// grouped over key heads G), or 0.
  char multipleOf = 0;
  /// A letter whose size, times `times`, plus `plus`, this dim's size is
  /// ('G', the gate rows of an LSTM, is 4 × the hidden size 'H'; offsets
  /// 'C' are 1 × the sequences 'S' + 1), or 0.
  char timesOf = 0;
  int64_t times = 1;
  int64_t plus = 0;
  /// A letter whose size this dim counts pieces of, ceil(that size / the
  /// op's attribute `perAttribute`), plus the size of `plusOf` when set (a
  /// KDA forward's chunks of T; packed sequences' chunk slots add their
  /// offsets' count), or 0. `per` is that attribute's value once the op is
  /// specialized (0 before: the count is not known).
  char piecesOf = 0;
  std::string_view perAttribute = {};
  int64_t per = 0;
  char plusOf = 0;
  /// A letter whose size this dim takes when nothing gives it one (a
  /// tool's random inputs): a contiguous cache's rows, the batch unless a
  /// row map says otherwise. Never a constraint.
  char defaultsTo = 0;

  /// The size a pieces dim has for these sizes of the others; none while
  /// `per` or a size it needs is unknown.
  template <typename Sizes>
  std::optional<int64_t> piecesFrom(const Sizes &sizes) const {
    if (!piecesOf || per <= 0 || !sizes.has(piecesOf) ||
        (plusOf && !sizes.has(plusOf)))
      return std::nullopt;
    return (sizes[piecesOf] + per - 1) / per + (plusOf ? sizes[plusOf] : 0);
  }
};

/// What picks an operator's contract for one call before any IR exists
/// (an LSTM's weights follow its layers, the norms' statistics x's rank):
/// the call's integer and flag attributes (flags as 0 or 1) and the ranks
/// of the tensors it gives, by name.
struct CallDescription {
  std::vector<std::pair<std::string, int64_t>> integers;
  std::vector<std::pair<std::string, size_t>> ranks;

  /// The attribute `name`'s value, `otherwise` when the call has none.
  int64_t integer(std::string_view name, int64_t otherwise = 0) const;
  /// The rank of the tensor `name`, 0 when the call does not give it.
  size_t rank(std::string_view name) const;
  bool gives(std::string_view name) const;
};

/// How `tensor`'s values are drawn: its sample kind (and the letters it
/// counts) as a SampleRule.
SampleRule sampleRuleOf(const TensorContract &tensor);

struct OperatorContract {
  std::string_view op; // "rudnn.kda"
  std::string_view summary;
  std::vector<DimContract> dims;
  std::vector<TensorContract> operands, results;

  const DimContract *dim(char letter) const;
  /// The index of the operand (or result) named `name`, or -1.
  int operandIndex(std::string_view name) const;
  int resultIndex(std::string_view name) const;
  /// The static dims' letters, e.g. "KV".
  std::string staticDims() const;
  /// "f32, f16 or bf16", "f32" or "as 'q'".
  static std::string describe(const TensorContract &tensor);
  /// The contract as text: dims, then operands and results one per line.
  std::string format() const;
};

} // namespace rudnn

#endif // RUDNN_DIALECTS_IR_OPERATORCONTRACT_H
