//===- rudnn/types.h - Element types and tensor views -----------*- C++ -*-===//

#ifndef RUDNN_TYPES_H
#define RUDNN_TYPES_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace rudnn {

/// The element types of rudnn, for tensors at the API and in generated code.
enum class DType : int { F32 = 0, F16 = 1, BF16 = 2, I32 = 3, Bool = 4 };

/// Bytes per element (0 for a value outside the enum).
constexpr size_t dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::Bool:
    return 1;
  }
  return 0;
}

/// "f32", "f16", "bf16", "i32", "bool".
constexpr const char *dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::I32:
    return "i32";
  case DType::Bool:
    return "bool";
  }
  return "unknown";
}

/// A tensor in memory the caller owns: pointer, dtype, shape and strides in
/// elements. The innermost dim must be contiguous; other strides are free
/// but non-negative, and the largest element offset Σ (dim − 1)·stride, in
/// bytes from the pointer, must fit in int64 and the address space. Outputs
/// may not overlap themselves, each other or inputs (operators name the
/// exceptions).
/// A stream of the backend (a CUstream on CUDA); nullptr is the default
/// stream.
using Stream = void *;

struct TensorView {
  void *data = nullptr;
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;

  /// A row-major view of `shape`.
  static TensorView contiguous(void *data, DType dtype,
                               std::vector<int64_t> shape);
  int64_t rank() const { return static_cast<int64_t>(shape.size()); }
  int64_t numel() const;
  /// "bf16[2, 128, 4, 64] strides [32768, 256, 64, 1]".
  std::string describe() const;
};

/// An argument or result of a function.
struct TensorInfo {
  /// Its `rudnn.name`, else "arg<i>" or "result<i>".
  std::string name;
  DType dtype = DType::F32;
  /// -1 where the dim is dynamic.
  std::vector<int64_t> shape;
  /// The operator operand or result it is (e.g. "q", "final_state"; the
  /// first operator reading it) and that tensor's layout letters ("BTHK").
  std::string role, layout;
  /// Its `rudnn.align`: the alignment in bytes its data pointer and every
  /// stride but the innermost (1) promise, checked at each call; 0: none.
  int64_t align = 0;
  /// For a result that is an argument updated in place (a cache appended
  /// to): that argument's name. Pass the argument's view for both.
  std::string updates;
};

} // namespace rudnn

#endif // RUDNN_TYPES_H
