//===- KernelArguments.h - rudnn-emulate's arguments ------------*- C++ -*-===//
//
// What rudnn-emulate passes to a kernel: .npy files (copied into device
// memory, passed as pointers, written back after the launch), tensor maps
// over .npy files (copied likewise, passed as a TMA tensor map by value)
// and typed scalars, checked against the kernel's parameters as its PTX
// declares them.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_TOOLS_RUDNN_EMULATE_KERNELARGUMENTS_H
#define RUDNN_TOOLS_RUDNN_EMULATE_KERNELARGUMENTS_H

#include <cstdint>
#include <string>
#include <vector>

namespace rudnn::emulate {

/// A .npy file kept byte for byte: any dtype, written back with the header
/// it came with (and in its order).
struct NpyFile {
  std::string path;
  std::string header; // magic, version, length and the header text
  std::string data;   // numel × itemsize bytes, in C order
  std::vector<int64_t> shape;
  size_t itemBytes = 0;
  bool fortranOrder = false; // as the file holds it
};

/// Reads `path`; throws InvalidArgument naming it for anything but a
/// little-endian (or byte-sized) array whose data fills the file. A
/// Fortran-ordered array is rearranged into C order.
NpyFile readNpy(const std::string &path);

/// Writes `file`'s header and `data` to `path` through a temporary name, so
/// a failed write leaves no partial file.
void writeNpy(const std::string &path, const NpyFile &file);

/// One command-line argument of the kernel.
struct KernelArgument {
  enum class Kind { Array, TensorMap, I32, U32, I64, U64, F32, F64 };
  Kind kind = Kind::Array;
  std::string text; // as given
  NpyFile array;    // Kind::Array and Kind::TensorMap
  // Kind::TensorMap: the box, innermost dim first, one entry per dim of
  // the array (its rank padded to 3 with ones), and the swizzle in bytes.
  std::vector<uint32_t> box;
  uint32_t swizzleBytes = 0;
  uint64_t bits = 0;    // scalars: the value's bytes, little endian
  size_t bytes() const; // what it occupies as a parameter
};

/// "x.npy", "tmap:x.npy:box=64x16[xB2[xB3]]:swizzle=0|32|64|128" or
/// "i32=-3", "u32=7", "i64=…", "u64=…", "f32=0.5", "f64=…". Throws
/// InvalidArgument for anything else or a value out of range.
KernelArgument parseArgument(const std::string &text);

/// A kernel parameter as PTX declares it: ".f32" is {'f', 4}, ".u64" (a
/// pointer or a 64-bit integer) {'u', 8}, a struct of 24 bytes {'b', 24}.
struct PtxParameter {
  char kind;
  size_t bytes;
};

/// `entry`'s parameters, from its `.entry` in `ptx`. Throws InvalidArgument
/// if there is no such entry.
std::vector<PtxParameter> ptxParameters(const std::string &ptx,
                                        const std::string &entry);

/// Whether `argument` can be passed as `parameter`: same size, and a float
/// for a float, an integer or pointer for an integer.
bool fits(const KernelArgument &argument, const PtxParameter &parameter);

} // namespace rudnn::emulate

#endif // RUDNN_TOOLS_RUDNN_EMULATE_KERNELARGUMENTS_H
