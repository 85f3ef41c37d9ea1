//===- ShapeChecker.h - Named-dimension checks for verifiers ----*- C++ -*-===//
//
// Operator contracts name their dimensions (B, T, H, K, V, ...). A
// ShapeChecker binds each name to the first static size it meets and reports
// any later disagreement against the operand that fixed it, so diagnostics read
// "'k' dim 1 (T) is 12, expected 16 as in 'q'".
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_DIALECTS_IR_SHAPECHECKER_H
#define RUDNN_DIALECTS_IR_SHAPECHECKER_H

#include "mlir/IR/Operation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringRef.h"

namespace mlir::rudnn {

class ShapeChecker {
public:
  /// `staticDims` lists the dimension names that must never be dynamic.
  ShapeChecker(Operation *op, llvm::StringRef staticDims)
      : op(op), staticDims(staticDims) {}

  /// Checks that `value` is a ranked tensor whose dims follow `layout`, one
  /// letter per dim (e.g. "BTHK"), binding each letter on first sight.
  LogicalResult check(llvm::StringRef name, Value value,
                      llvm::StringRef layout);

  /// Binds `dim` to `size`, as fixed by `source` (an attribute's name), before
  /// any operand is checked.
  void expect(char dim, int64_t size, llvm::StringRef source) {
    bound[dim] = Binding{size, source};
  }

  /// The static size bound to `dim`, if any.
  std::optional<int64_t> lookup(char dim) const;

private:
  struct Binding {
    int64_t size;
    llvm::StringRef operand;
  };
  Operation *op;
  llvm::StringRef staticDims;
  llvm::SmallDenseMap<char, Binding> bound;
};

/// Element-type rules shared by the operator verifiers. Each names `name`.
LogicalResult checkFloatElementType(Operation *op, llvm::StringRef name,
                                    Value value);
LogicalResult checkF32ElementType(Operation *op, llvm::StringRef name,
                                  Value value);
/// An integer element type of `width` bits (32: lengths, 1: masks).
LogicalResult checkIntegerElementType(Operation *op, llvm::StringRef name,
                                      Value value, unsigned width);
LogicalResult checkSameElementType(Operation *op, llvm::StringRef name,
                                   Value value, llvm::StringRef refName,
                                   Value ref);

} // namespace mlir::rudnn

#endif // RUDNN_DIALECTS_IR_SHAPECHECKER_H
