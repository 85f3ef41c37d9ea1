//===- PrimitiveSupport.h - What primitives tell rudnn-plan -----*- C++ -*-===//
//
// The plain types of the primitive interface: sizes named by layout letters
// or by the dims of values, and where a primitive's result lives once it
// leaves the kernel that computes it. rudnn-plan resolves every DimRef to a
// run-time parameter of the plan.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_DIALECTS_IR_PRIMITIVESUPPORT_H
#define RUDNN_DIALECTS_IR_PRIMITIVESUPPORT_H

#include "mlir/IR/Value.h"

#include "llvm/ADT/SmallVector.h"

#include <string>
#include <vector>

namespace mlir::rudnn {

/// A run-time size: a layout letter of the function (its first tensor laid
/// out with that letter gives it), or dim `index` of `value`; divided by
/// `divisor`, rounding up; or the sum of other dims. `name` names a divided
/// size or a sum in the plan ("N").
struct DimRef {
  char letter = 0;
  Value value;
  unsigned index = 0;
  int64_t divisor = 1;
  std::string name;

  static DimRef of(char letter) { return ceilDiv(letter, 1, {}); }
  static DimRef ceilDiv(char letter, int64_t divisor, std::string name) {
    DimRef dim;
    dim.letter = letter;
    dim.divisor = divisor;
    dim.name = std::move(name);
    return dim;
  }
  static DimRef of(Value value, unsigned index) {
    DimRef dim;
    dim.value = value;
    dim.index = index;
    return dim;
  }
  /// The sum of `terms`, a parameter named `name` (the tiles of packed
  /// sequences: ceil(T / C) + the sequence offsets).
  static DimRef sum(std::vector<DimRef> terms, std::string name) {
    DimRef dim;
    dim.name = std::move(name);
    dim.terms = std::move(terms);
    return dim;
  }

  /// A count the runtime chooses from the dims `of` (their product times
  /// `constant`): clamp(ceil(target / that), 1, max), a parameter named
  /// `name` (#rudnn.split): the partial-result slots of a split that fits
  /// a budget of `target` rows.
  /// With `maxOf`, the most is `max` times their product (the parts that
  /// still have work: a key count over the least keys a part holds).
  static DimRef split(int64_t constant, std::vector<DimRef> of, int64_t target,
                      int64_t max, std::string name,
                      std::vector<DimRef> maxOf = {}) {
    DimRef dim;
    dim.name = std::move(name);
    dim.splitConstant = constant;
    dim.splitOf = std::move(of);
    dim.splitTarget = target;
    dim.splitMax = max;
    dim.splitMaxOf = std::move(maxOf);
    return dim;
  }

  /// Non-empty: this dim is the sum of these.
  std::vector<DimRef> terms;
  /// Non-empty: this dim is a split count over these (split()), at most
  /// splitMax times the product of splitMaxOf.
  std::vector<DimRef> splitOf, splitMaxOf;
  int64_t splitConstant = 1, splitTarget = 0, splitMax = 0;
};

/// constant × Π dims.
struct SizeRef {
  int64_t constant = 1;
  llvm::SmallVector<DimRef, 4> dims;
};

/// Where a primitive's result lives when a kernel other than its own reads
/// it: its own memory (`bytes` of workspace unless a caller's tensor holds
/// it), the memory of another value (tiles kept in one layout: the memory
/// then has at least `bytes`), or nowhere outside its kernel (shared
/// memory, registers).
struct ResultStorage {
  enum class Kind { Own, With, KernelLocal };
  Kind kind = Kind::Own;
  SizeRef bytes;
  Value with;
  /// What the plan calls the memory ("tiles").
  std::string name;
  /// The kernel writes nothing through a null pointer (a final state not
  /// asked for): a result nobody reads then gets no memory. Any other own
  /// result nobody reads still gets workspace, as its kernel writes it.
  bool mayBeNull = false;
  /// Own workspace filled with zeros before each call (a sum the kernel
  /// adds to with atomics).
  bool zeroed = false;

  static ResultStorage own(SizeRef bytes, std::string name) {
    return {Kind::Own, std::move(bytes), {}, std::move(name)};
  }
  static ResultStorage sharedWith(Value other, SizeRef atLeast = {0, {}}) {
    return {Kind::With, std::move(atLeast), other, {}};
  }
  static ResultStorage kernelLocal() { return {Kind::KernelLocal, {}, {}, {}}; }
  /// This storage, skipped (a null pointer) when nobody reads the result.
  ResultStorage orNull() && {
    mayBeNull = true;
    return std::move(*this);
  }
  /// This storage, zeroed before each call when it is workspace.
  ResultStorage startingAtZero() && {
    zeroed = true;
    return std::move(*this);
  }
};

} // namespace mlir::rudnn

#endif // RUDNN_DIALECTS_IR_PRIMITIVESUPPORT_H
