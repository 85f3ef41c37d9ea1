//===- KdaEmitter.h - CUDA C++ for the KDA kernels --------------*- C++ -*-===//
//
// One translation unit per kernel: the device library's KDA building block
// (rudnn/kda.cuh) instantiated with every specialization a constant, behind
// an `extern "C" __global__` entry whose parameters (bound through a
// KernelBuilder) are the tensors its primitives give, by the names of the
// device library's parameter-block fields (kdaFields), the sizes (batch,
// length, heads; q's heads; for packed sequences the offsets' count) and
// the scale. The KDA primitives emit their kernels with it
// (KdaPrimitives.cpp); tests call emitKdaKernel for a stage's source alone.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_CODEGEN_EMIT_KDA_KDAEMITTER_H
#define RUDNN_CODEGEN_EMIT_KDA_KDAEMITTER_H

#include "codegen/Emit/KernelBuilder.h"
#include "dialects/IR/kda/KdaPolicy.h"

#include "llvm/ADT/ArrayRef.h"

#include "rudnn/types.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace rudnn::codegen {

using ::rudnn::DType;

/// What shapes the generated code of a KDA forward and backward: the element
/// types of q/k/v, g and beta (f32, f16 or bf16), K, V and the chunk; and
/// whether `prepare` keeps the backward's tiles too.
struct KdaKernelSpec {
  DType input, gate, beta;
  int64_t featureK, featureV, chunk;
  bool backwardTiles = false;
  /// `prepare` keeps the decayed queries (in the backward's tiles' place)
  /// for a walk that forms the outputs.
  bool keepQueries = false;
  /// Every view the kernels copy (q, k, v, d_output) has 16-byte aligned
  /// rows (`rudnn.align`): the copies need no element-wise path.
  bool alignedViews = false;
  /// Packed sequences by their offsets (`cu_seqlens`, dim letter C of the
  /// function's arguments).
  bool packed = false;
  /// The element type of a state pool (the pool step's states).
  DType state = DType::F32;
  /// The walk keeps the state (the forward's) or its gradient (the
  /// backward's reverse walk) in wgmma accumulators (16-bit inputs, sm_90a;
  /// kda::propagate_wgmma, kda::state_gradient_wgmma).
  bool wgmmaWalk = false;
  /// The walk writes the boundary states (a wgmma walk forming the outputs
  /// needs none kept unless they are saved).
  bool keepsBoundaries = true;
  /// `prepare` may load q's, k's and v's rows by TMA (sm_90a): it does
  /// where their views promise 16-byte rows of 16-bit elements and K and
  /// V are multiples of 64.
  bool tmaInputs = false;
};

/// The kernels of a forward — the chunked plan's three stages and the
/// token-by-token decode kernel, of a batch or over a state pool — and of a
/// backward, which runs `prepare` and `propagate` and then its two
/// stages.
enum class KdaStage {
  Prepare,
  Propagate,
  Output,
  Recurrent,
  Restore,
  StateGradient,
  Gradients,
  PoolStep
};

/// Whether `stage` belongs to the backward (its entry takes the backward's
/// arguments after the forward's).
inline bool isBackwardStage(KdaStage stage) {
  return stage == KdaStage::Restore || stage == KdaStage::StateGradient ||
         stage == KdaStage::Gradients;
}

/// "prepare", "propagate", "output", "recurrent", "restore",
/// "state_gradient", "gradients", "pool_step".
const char *stageName(KdaStage stage);

using mlir::rudnn::kKdaColumnsPerBlock;
/// Threads of the chunk-parallel kernels and `propagate`.
inline constexpr int64_t kKdaThreads = 128;

/// Threads of a `gradients` block (kda::kGradientsWarps warps).
inline constexpr int64_t kKdaGradientsThreads = 256;
/// Output columns per block of the 16-bit output kernel (kda::kOutputColumns).
inline constexpr int64_t kKdaOutputColumns = 64;

/// Value columns per block of a walk stage (`propagate`, `recurrent`,
/// `state_gradient`): 16 for the 16-bit `propagate` and `state_gradient`,
/// kKdaColumnsPerBlock otherwise.
int64_t walkColumns(const KdaKernelSpec &spec, KdaStage stage);

/// The chunks a chunk-parallel grid covers, ceil(T / chunk); and the chunk
/// slots the tiles and boundaries hold, "N": those chunks, or for packed
/// sequences ceil(T / chunk) + S + 1 (kda::chunk_slots), so that a saved
/// tensor's N is the plan parameter of that name.
mlir::rudnn::DimRef kdaGridChunks(int64_t chunk, bool packed);
mlir::rudnn::DimRef kdaChunkSlots(int64_t chunk, bool packed);

/// Floats of one chunk's tiles in the workspace (kda::ChunkTiles::kFloats).
int64_t kdaTileFloats(const KdaKernelSpec &spec);

/// Floats of what a backward keeps of one chunk besides
/// (kda::BackwardTiles::kFloats).
int64_t kdaBackwardTileFloats(const KdaKernelSpec &spec);

/// Floats of one chunk's backward scratch (kda::GradientTiles::kFloats).
int64_t kdaGradientTileFloats(const KdaKernelSpec &spec);

/// What one chunk of one head (one token of one head, `perToken`) costs a
/// stage by its model: the bytes it must read from and write to device
/// memory at least (inputs, results, the tiles and states other kernels
/// exchange; not what a kernel re-reads from cache) and its floating-point
/// operations (matrix products 2·M·N·K, halved where triangular), and the
/// exponentials (MUFU.EX2) its 16-bit kernel takes, each decay factor as
/// often as the kernel forms it (0 where not modelled: f32 kernels, on
/// FMA), and those it forms on the FMA pipes instead (polynomial_exp).
struct KdaStageCost {
  int64_t bytes = 0, flops = 0, exponentials = 0, polynomialExponentials = 0;
  bool perToken = false;
};
KdaStageCost kdaStageCost(const KdaKernelSpec &spec, KdaStage stage);

/// What the output costs a chunk of a head when the wgmma walk computes it
/// (with the stages Propagate and Output in one kernel): Qd and the
/// pairwise matrix read, the output written, its products.
KdaStageCost kdaFusedOutputCost(const KdaKernelSpec &spec);

/// One block's chunk of a state walk (Propagate or StateGradient), which
/// the next chunk waits for: the bytes it reads and writes (W, Kd and the
/// like whole, its own value columns of the rest), its FLOPs, and the
/// block barriers and dependent mma on its critical path.
struct KdaWalkStep {
  int64_t bytes = 0, flops = 0, barriers = 0, mmaChain = 0;
};
KdaWalkStep kdaWalkStep(const KdaKernelSpec &spec, KdaStage stage);

/// "bf16_f32_bf16_k64_v64_c64".
std::string kdaSpecName(const KdaKernelSpec &spec);

/// The element type of a field of the device library's KDA parameter
/// blocks, and the block it belongs to (the backward's, packed sequences'
/// and the state pool's are there only in those kernels).
enum class KdaElement { Input, Gate, Beta, Float, Int, State };
enum class KdaBlock { Forward, Backward, Packed, Pool };

/// A tensor field of the parameter blocks (kda/chunk.cuh,
/// kda/backward_params.cuh, kda/pool.cuh): its name, what it holds, whether
/// kernels write it, and whether it is a [B, T, H, *] sequence tensor with
/// strides of its own.
struct KdaField {
  const char *name;
  KdaElement element;
  KdaBlock block;
  bool written, sequence;
};

/// Every tensor field, in the order the blocks list them.
llvm::ArrayRef<KdaField> kdaFields();

/// A tensor a KDA kernel binds, by its field's name; a null value is
/// absent.
struct KdaTensor {
  llvm::StringRef field;
  mlir::Value value;
};

/// Emits the kernel running `stages` in order into `builder`: binds each
/// given tensor (its pointer, and a sequence tensor's (batch, time, head)
/// strides), the sizes and `scale`; fills the parameter blocks with them
/// (null pointers and zero strides for the fields not given, or, with
/// `bindEveryField`, null parameters); and sets the launch geometry (the
/// first stage's).
void emitKdaStages(KernelBuilder &builder, KdaKernelSpec spec,
                   llvm::ArrayRef<KdaStage> stages,
                   llvm::ArrayRef<KdaTensor> tensors, double scale,
                   bool bindEveryField = false);

/// `stage`'s entry and source, every field a parameter (what a kernel
/// reading all its fields compiles to).
struct KdaKernelSource {
  std::string entry, source;
};
KdaKernelSource emitKdaKernel(const KdaKernelSpec &spec, KdaStage stage);

} // namespace rudnn::codegen

#endif // RUDNN_CODEGEN_EMIT_KDA_KDAEMITTER_H
