//===- ContractChecks.h - A call's views against its contract ---*- C++ -*-===//
//
// The host side of an operator's contract (dialects/IR/OperatorContract.h):
// the JIT API checks the views of a call against the same statement the op
// verifier reads, so both name the same tensors and dims.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_RUNTIME_CHECKS_CONTRACTCHECKS_H
#define RUDNN_RUNTIME_CHECKS_CONTRACTCHECKS_H

#include "dialects/IR/OperatorContract.h"

#include "rudnn/types.h"

#include <array>
#include <climits>
#include <vector>

namespace rudnn {

/// The size each dim letter takes in a call (a flat table: checking a call
/// allocates nothing for it).
class DimSizes {
public:
  /// The size bound to `letter`; throws Internal if none was.
  int64_t operator[](char letter) const;
  bool has(char letter) const { return sizes[slot(letter)] != kUnbound; }
  /// Binds `letter` before the views are checked (a size an option fixes).
  void bind(char letter, int64_t size) { sizes[slot(letter)] = size; }
  /// Binds `letter` to `size` if unbound; whether it was bound to another.
  bool bindOrCompare(char letter, int64_t size) {
    int64_t &known = sizes[slot(letter)];
    if (known == kUnbound) {
      known = size;
      return false;
    }
    return known != size;
  }

private:
  static constexpr unsigned kLetters = 128;
  static constexpr int64_t kUnbound = INT64_MIN;
  static unsigned slot(char letter) {
    return static_cast<unsigned char>(letter) % kLetters;
  }
  std::array<int64_t, kLetters> sizes = filled();
  static std::array<int64_t, kLetters> filled() {
    std::array<int64_t, kLetters> table;
    table.fill(kUnbound);
    return table;
  }
};

/// Checks the views of one call against `contract`, in its order: a
/// required operand present (results are the caller's choice), a data
/// pointer, the rank of the layout, each letter one size across the call
/// (a mismatch reports the whole expected shape), dims positive and static
/// dims within their bounds, element types, packing (innermost contiguous
/// or dense), extents that fit in int64, and each dim a multiple of the one
/// its contract names (`multipleOf`), a multiple of another plus a constant
/// (`timesOf`) or the pieces of another (`piecesOf`, once `per` is known).
/// Then no result overlaps itself,
/// another result or an operand, except a result exactly over the operand
/// its contract names `inPlaceOf`. A null entry is an absent tensor. Throws
/// InvalidArgument naming the tensor; returns the letters' sizes.
DimSizes checkCall(const OperatorContract &contract,
                   const std::vector<const TensorView *> &operands,
                   const std::vector<const TensorView *> &results,
                   DimSizes bound = {});

/// Fills in the sizes `contract` fixes from those known: a dim `times` ×
/// its `timesOf` + `plus` (either way round: an LSTM's gate rows from its
/// hidden size, packed sequences' count from their offsets' length), a
/// dim whose bounds pin it (an LSTM's states, layers × directions), and a
/// dim counting pieces of another once the op's attribute is known (KDA's
/// chunks).
void deriveDims(const OperatorContract &contract, DimSizes &dims);

/// The values of the operands whose contract draws them as offsets
/// (Sample::Offsets: packed sequences' boundaries), which must start at 0,
/// never decrease and end at the size of their `counts` letter, so that
/// every token belongs to exactly one sequence; and as lengths
/// (Sample::Lengths), each from 0 to that size. Reads the views' memory: only
/// for views in host memory (the emulation backend's). Throws InvalidArgument
/// naming the operand, the entry and its value.
void checkIndexValues(const OperatorContract &contract,
                      const std::vector<const TensorView *> &operands,
                      const DimSizes &dims);

/// The view `optional` holds, or null.
template <typename Optional> const TensorView *viewOf(const Optional &view) {
  return view ? &*view : nullptr;
}

} // namespace rudnn

#endif // RUDNN_RUNTIME_CHECKS_CONTRACTCHECKS_H
