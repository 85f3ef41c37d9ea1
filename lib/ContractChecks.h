//===- ContractChecks.h - A call's views against its contract ---*- C++ -*-===//
//
// The host side of an operator's contract (dialects/IR/OperatorContract.h):
// the JIT API checks the views of a call against the same statement the op
// verifier reads, so both name the same tensors and dims.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_LIB_CONTRACTCHECKS_H
#define RUDNN_LIB_CONTRACTCHECKS_H

#include "dialects/IR/OperatorContract.h"

#include "rudnn/types.h"

#include <map>
#include <vector>

namespace rudnn {

/// The size each dim letter takes in a call.
class DimSizes {
public:
  /// The size bound to `letter`; throws Internal if none was.
  int64_t operator[](char letter) const;
  bool has(char letter) const { return sizes.count(letter) != 0; }
  /// Binds `letter` before the views are checked (a size an option fixes).
  void bind(char letter, int64_t size) { sizes[letter] = size; }

private:
  std::map<char, int64_t> sizes;
  friend DimSizes checkCall(const OperatorContract &,
                            const std::vector<const TensorView *> &,
                            const std::vector<const TensorView *> &, DimSizes);
};

/// Checks the views of one call against `contract`, in its order: a
/// required operand present (results are the caller's choice), a data
/// pointer, the rank of the layout, each letter one size across the call
/// (a mismatch reports the whole expected shape), dims positive and static
/// dims within their bounds, element types, packing (innermost contiguous
/// or dense) and extents that fit in int64. Then no result overlaps itself,
/// another result or an operand, except a result exactly over the operand
/// its contract names `inPlaceOf`. A null entry is an absent tensor. Throws
/// InvalidArgument naming the tensor; returns the letters' sizes.
DimSizes checkCall(const OperatorContract &contract,
                   const std::vector<const TensorView *> &operands,
                   const std::vector<const TensorView *> &results,
                   DimSizes bound = {});

/// The view `optional` holds, or null.
template <typename Optional> const TensorView *viewOf(const Optional &view) {
  return view ? &*view : nullptr;
}

} // namespace rudnn

#endif // RUDNN_LIB_CONTRACTCHECKS_H
