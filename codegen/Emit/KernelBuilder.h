//===- KernelBuilder.h - One kernel's CUDA C++ and its bindings -*- C++ -*-===//
//
// What a primitive writes its kernel with: the body (device-library calls)
// and, through `pointer`, `strides`, `dim` and `scalar`, the parameters that
// body reads. The `extern "C"` signature is built from those bindings in the
// order they were first asked for; rudnn-plan turns each into a launch
// argument (a buffer, a stride or dim parameter, a constant).
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_CODEGEN_EMIT_KERNELBUILDER_H
#define RUDNN_CODEGEN_EMIT_KERNELBUILDER_H

#include "dialects/IR/PrimitiveSupport.h"

#include "rudnn/types.h"

#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace rudnn::codegen {

/// "float", "__half", "__nv_bfloat16".
const char *cudaType(DType type);

/// A tensor value's element type (f32 for one rudnn has no DType for), its
/// bytes, and the size of its innermost dim: what every emitter specializes
/// on.
DType dtype(mlir::Value value);
int64_t elementBytes(mlir::Value value);
int64_t lastDim(mlir::Value value);

/// One parameter of a kernel's signature.
struct KernelBinding {
  enum class Kind {
    Pointer,   // `value`'s elements (null value: a null pointer)
    Stride,    // the stride of dim `dim.index` of `dim.value` (0 when null)
    Dim,       // the size `dim` refers to
    Scalar,    // an f32 constant of the kernel's op
    TensorMap, // a TMA tensor map over `dim.value` (see TensorMapShape)
    Scratch,   // `bytes` of the kernel's own memory (`zeroed` at each call)
  };
  Kind kind;
  std::string name, cppType;
  mlir::rudnn::DimRef dim; // Pointer, TensorMap: dim.value is the tensor
  double scalar = 0;
  bool written = false; // Pointer
  /// TensorMap: the tensor's dims innermost first (the first contiguous)
  /// and the box one load brings, in the same order.
  std::vector<unsigned> mapDims;
  std::vector<int64_t> box;
  /// TensorMap over the tensor's memory in a geometry of its own (when
  /// `mapExtents` is not empty): elements of `mapElementBytes`, constant
  /// extents innermost first and strides (in elements) of dims 1 and up.
  std::vector<int64_t> mapExtents = {}, mapStrides = {};
  int64_t mapElementBytes = 0;
  mlir::rudnn::SizeRef bytes{0, {}}; // Scratch
  bool zeroed = true;                // Scratch
};

/// The launch geometry a kernel asks for, and what one launch moves and
/// computes by the emitter's model (0: no model): the bytes it must read
/// from and write to device memory at least, and its floating-point
/// operations (a multiply-add counts two).
struct KernelLaunch {
  int64_t threads = 128, sharedBytes = 0;
  /// Every block resident at once, meeting at grid barriers (a cooperative
  /// launch).
  bool cooperative = false;
  /// Launched this dim's size times in a row, each launch passed its index
  /// as a last int (a time step of a recurrence), or once.
  std::optional<mlir::rudnn::DimRef> repeat;
  mlir::rudnn::SizeRef grid[3];
  mlir::rudnn::SizeRef memoryBytes{0, {}}, flops{0, {}};
  /// A second term of the bytes moved, over other dims (0: none).
  mlir::rudnn::SizeRef streamedBytes{0, {}};
  /// An exponential every so many of `flops` (0: none modelled), or their
  /// count.
  int64_t flopsPerExponential = 0;
  mlir::rudnn::SizeRef exponentials{0, {}};
  /// Exponentials formed on the FMA pipes instead (polynomial_exp2), by
  /// count (0: none).
  mlir::rudnn::SizeRef polynomialExponentials{0, {}};
  /// A byte of tensor-core operands read from shared memory every so many
  /// of `flops` (0: none modelled).
  int64_t flopsPerSharedByte = 0;
  /// A byte added into global memory through L2 (reductions, or a
  /// read-modify-write) every so many of `flops` (0: none modelled).
  int64_t flopsPerReducedByte = 0;
  /// A byte of operand tiles read through L2 that other blocks read too
  /// (a GEMM's re-read rows and columns) every so many of `flops` (0: none
  /// modelled).
  int64_t flopsPerL2Byte = 0;
  /// A recurrence's dependent steps in one launch (0: none modelled; one
  /// where each launch is a step), and what one block does in each: the
  /// bytes it reads through L2 (the state the other blocks published), plus
  /// `stepFixedBytes` over other dims (its weight rows: once a pass of
  /// entries off chip, once a launch loaded on chip), and its FLOPs. Each step
  /// also waits at a grid barrier (a cooperative launch) or is a launch of its
  /// own.
  mlir::rudnn::SizeRef serialSteps{0, {}}, stepBytes{0, {}}, stepFlops{0, {}},
      stepFixedBytes{0, {}};
  /// A walk's steps inside one launch instead (no grid barrier, no launch
  /// between them): the block barriers and the dependent tensor-core
  /// instructions on a step's critical path, whose latency adds to its
  /// compute while its prefetched bytes overlap both.
  int64_t stepBarriers = 0, stepMmaChain = 0;
  /// Its tensor-core work is TF32 (half the 16-bit rate).
  bool tf32 = false;
};

class KernelBuilder {
public:
  /// A pointer to `value`'s elements of C++ type `element`, named `name`;
  /// `written` when the kernel stores through it. A null `value` (absent,
  /// or not read by this kernel) binds a null pointer.
  std::string pointer(mlir::Value value, const std::string &name,
                      const std::string &element, bool written);
  /// The strides of `value`'s outer dims, one name per dim (a long long
  /// each, 0 when `value` is null).
  void strides(mlir::Value value, const std::vector<std::string> &names);
  /// An int parameter holding `dim`.
  std::string dim(const mlir::rudnn::DimRef &dim, const std::string &name);
  /// An f32 parameter holding `value` (a kernel serves every value).
  std::string scalar(const std::string &name, double value);
  /// A TMA tensor map over `value` (128-byte swizzle), its dims `dims` of
  /// the tensor innermost first, loading boxes of `box`.
  std::string tensorMap(mlir::Value value, const std::string &name,
                        std::vector<unsigned> dims, std::vector<int64_t> box);
  /// A TMA tensor map over `value`'s memory seen as another tensor:
  /// elements of `elementBytes`, constant `extents` innermost first,
  /// `strides` in elements of dims 1 and up (a workspace's tiles as rows,
  /// say); 128-byte swizzle, boxes of `box`.
  std::string tensorMapOver(mlir::Value value, const std::string &name,
                            int64_t elementBytes, std::vector<int64_t> extents,
                            std::vector<int64_t> strides,
                            std::vector<int64_t> box);

  /// A pointer named `name` to `bytes` of memory only this kernel uses,
  /// zeroed before each call's launches (counters a kernel hands its work
  /// out with).
  std::string zeroedScratch(const std::string &name, const std::string &element,
                            mlir::rudnn::SizeRef bytes);

  /// The same, zeroed only where asked: memory the kernel writes before it
  /// reads it (partial sums) needs no zeroing.
  std::string scratch(const std::string &name, const std::string &element,
                      mlir::rudnn::SizeRef bytes, bool zeroed = false);

  /// Launches the kernel `dim`'s size times in order, the launch's index the
  /// last parameter, an int named `name` (no binding: the plan passes it).
  std::string repeatOver(const mlir::rudnn::DimRef &dim,
                         const std::string &name) {
    geometry.repeat = dim;
    iterationName = name;
    return name;
  }

  /// Declares __launch_bounds__(threads, minBlocks): registers are then
  /// allocated for that many threads resident (setmaxnreg redistributes
  /// them between warpgroups from that budget).
  void setLaunchBounds(int64_t threads, int64_t minBlocks) {
    boundsThreads = threads;
    boundsBlocks = minBlocks;
  }

  /// The kernel uses the target's architecture-specific instructions.
  void setArchSpecific() { archSpecificFlag = true; }
  bool archSpecific() const { return archSpecificFlag; }

  /// The entry's name: the building block and its specialization.
  void setEntry(std::string entry) { entryName = std::move(entry); }
  const std::string &entry() const { return entryName; }
  KernelLaunch &launch() { return geometry; }
  const KernelLaunch &launch() const { return geometry; }

  /// Comments and compile-time checks before the entry.
  std::ostringstream &preamble() { return preambleText; }
  /// The entry's body.
  std::ostringstream &body() { return bodyText; }

  const std::vector<KernelBinding> &bindings() const { return params; }
  /// Whether two requests for one name disagreed (the emission is wrong).
  const std::string &conflict() const { return conflictText; }

  /// The translation unit: the device library, the preamble and the entry.
  std::string source() const;

private:
  KernelBinding *find(const std::string &name);
  std::string add(KernelBinding binding);

  std::vector<KernelBinding> params;
  std::string entryName, conflictText, iterationName;
  bool archSpecificFlag = false;
  int64_t boundsThreads = 0, boundsBlocks = 0;
  KernelLaunch geometry;
  std::ostringstream preambleText, bodyText;
};

} // namespace rudnn::codegen

#endif // RUDNN_CODEGEN_EMIT_KERNELBUILDER_H
