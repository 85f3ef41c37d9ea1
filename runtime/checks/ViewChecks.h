//===- ViewChecks.h - Validating tensor views of any operator ---*- C++ -*-===//
//
// The memory rules every operator's views obey, independent of what the
// operator computes: extents that fit in int64 and the address space,
// outputs whose elements are distinct, and outputs that share no byte with
// each other or with any input except a declared in-place pair.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_RUNTIME_CHECKS_VIEWCHECKS_H
#define RUDNN_RUNTIME_CHECKS_VIEWCHECKS_H

#include "rudnn/types.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace rudnn {

/// The bytes a view's elements may occupy, first to last inclusive; empty
/// when a dim is 0.
struct ByteRange {
  uintptr_t first = 0, last = 0;
  bool empty = true;
};

/// The largest element offset, Σ (dim − 1)·stride, and the byte range of
/// `view`, each sum and product overflow-checked. Throws InvalidArgument
/// naming `name` for mismatched ranks, a negative dim or stride (kernels
/// index with non-negative offsets from the data pointer), a data pointer
/// that is not a multiple of the element size, or an extent past int64 or
/// the address space.
ByteRange checkedByteRange(std::string_view name, const TensorView &view);

/// Whether `view`'s data pointer and every stride but the innermost are
/// multiples of `bytes`, and the innermost stride is 1 (or its dim 1): its
/// rows can be copied in `bytes`-sized pieces.
bool hasAlignedRows(const TensorView &view, int64_t bytes);

/// Throws InvalidArgument naming `name` unless `view` keeps the alignment
/// promise `bytes` (a function's `rudnn.align`), saying which part fails.
void checkAlignedRows(std::string_view name, const TensorView &view,
                      int64_t bytes);

/// Throws InvalidArgument naming `name` unless distinct indices of `view`
/// address distinct elements. Sufficient test: with the dims of size > 1
/// sorted by stride, each stride is at least the extent of the dims inside
/// it (so a zero stride is rejected; some exotic injective interleavings
/// are too).
void checkNoSelfOverlap(std::string_view name, const TensorView &view);

/// A view and its name; the name's characters outlive the check (string
/// literals and contract names do).
struct NamedView {
  std::string_view name;
  const TensorView *view;
};

/// Whether `a` and `b` are exactly the same view: pointer, dtype, shape and
/// strides.
bool sameView(const TensorView &a, const TensorView &b);

/// Checks every view's extent and every output with checkNoSelfOverlap,
/// then that no output's byte range meets another output's or an input's.
/// An (output, input) pair listed in `inPlace` may instead be exactly the
/// same view (pointer, dtype, shape and strides). Throws InvalidArgument
/// naming both tensors.
void checkViewAliasing(
    const std::vector<NamedView> &inputs, const std::vector<NamedView> &outputs,
    const std::vector<std::pair<std::string_view, std::string_view>> &inPlace =
        {});

/// Each of `views` fits its declaration in `declared`: as many, element
/// type, rank, static dims, alignment promise. `what` ("arguments") names
/// the list in errors.
void checkDeclared(const std::vector<TensorInfo> &declared,
                   const std::vector<TensorView> &views, const char *what);

} // namespace rudnn

#endif // RUDNN_RUNTIME_CHECKS_VIEWCHECKS_H
