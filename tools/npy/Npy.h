//===- Npy.h - NumPy .npy files ---------------------------------*- C++ -*-===//
//
// Reads and writes the .npy format (versions 1.0, 2.0 and 3.0) for the element
// types the tools exchange with NumPy, and converts between them rounding the
// way the GPU does, so that inputs prepared on the host match what a kernel
// would have produced.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_TOOLS_NPY_NPY_H
#define RUDNN_TOOLS_NPY_NPY_H

#include "rudnn/types.h"

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace rudnn::npy {

enum class ElementType {
  F64,
  F32,
  F16,
  I32,
  I64,
  Bool,
  BF16 // never in files: NumPy has no bfloat16; a conversion target only
};

/// A dense array: C order, elements little endian, `bytes.size()` =
/// numel(shape) × itemSize(type). An empty shape is a scalar.
struct Array {
  ElementType type = ElementType::F32;
  std::vector<int64_t> shape;
  std::vector<uint8_t> bytes;
};

/// `bytes`, elements of `itemBytes` in an array of `shape`, rearranged from
/// Fortran order (first index fastest) into C order (last index fastest),
/// or back when `toC` is false.
std::vector<uint8_t> reorder(const std::vector<uint8_t> &bytes,
                             const std::vector<int64_t> &shape,
                             size_t itemBytes, bool toC);

/// Reads a .npy file (a Fortran-ordered one is rearranged into C order).
/// Throws rudnn::InvalidArgument naming the path and the
/// problem for anything it cannot represent exactly: every malformed file is
/// such an error, never a crash.
Array read(const std::string &path);

/// Writes `array` in format 1.0 (2.0 when the header is too long for 1.0),
/// byte for byte as NumPy would. The file is written under a temporary name
/// and renamed, so a failed write leaves no partial file. Throws
/// rudnn::InvalidArgument on an inconsistent array, a BF16 array or an I/O
/// failure.
void write(const std::string &path, const Array &array);

/// The first half of `write`: writes `array` beside `path` under a fresh
/// temporary name and returns that name, for a caller that renames several
/// files into place only once all of them are written (and removes them
/// otherwise). Throws like `write`, leaving no file behind.
std::string writeTemporary(const std::string &path, const Array &array);

/// Writes each array to `directory`/<name>.npy, creating the folder: every
/// file under a temporary name beside its place first, renamed into place
/// only once all are written, so the files land together or not at all.
/// Throws InvalidArgument naming the file when something other than a file
/// is in a place, or a write fails (then no file of the call remains).
void writeAll(const std::string &directory,
              const std::vector<std::pair<std::string, Array>> &arrays);

/// Converts element by element, rounding to nearest even exactly as the GPU's
/// cvt.rn does: one rounding from the exact source value, NaN to the target's
/// canonical NaN, overflow to infinity, subnormals kept. Integer targets (I32,
/// I64) accept only integer or bool sources and throw rudnn::InvalidArgument
/// for floating-point ones or values out of range; Bool is "non-zero" (NaN is
/// true). Converting to the array's own type copies it unchanged.
Array convert(const Array &array, ElementType type);

/// Every element as a double (int64 beyond 2^53 rounds to nearest even).
std::vector<double> toDoubles(const Array &array);

/// An F32 array of `values`; throws rudnn::InvalidArgument if `shape` does
/// not hold exactly `values.size()` elements.
Array fromFloats(const std::vector<float> &values, std::vector<int64_t> shape);

/// "float64", "float32", "float16", "int32", "int64", "bool", "bfloat16".
const char *typeName(ElementType type);

/// The element type of a tensor of `dtype`.
ElementType elementTypeOf(DType dtype);

/// Bytes per element.
size_t itemSize(ElementType type);

/// The number of elements of `shape` (1 for a scalar); throws
/// rudnn::InvalidArgument on a negative dimension or an overflowing product.
int64_t numElements(const std::vector<int64_t> &shape);

} // namespace rudnn::npy

#endif // RUDNN_TOOLS_NPY_NPY_H
