//===- KernelReport.h - What a profiler would show, without a GPU -*- C++
//-*-===//
//
// A compiled kernel's resources (ptxas: registers, spills, static shared
// memory), its static SASS instruction mix (cuobjdump: tensor-core
// instructions, ldmatrix, cp.async and TMA, global loads and stores by
// width) and its occupancy on a target. The disassembler comes from the CUDA
// toolkit or the PyPI wheels nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm;
// without one the mix says so.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_RUNTIME_PLANS_KERNELREPORT_H
#define RUDNN_RUNTIME_PLANS_KERNELREPORT_H

#include <cstdint>
#include <map>
#include <string>

namespace rudnn::runtime {

/// The instructions one polynomial exponential takes instead of a MUFU.EX2
/// (polynomial_exp2 in the device library, as ptxas emits it for sm_90:
/// a clamp, three adds, a shift into the exponent, five FMAs, a multiply;
/// the argument's subtraction and scaling precede either), counted at the
/// FP32 pipes' rate.
inline constexpr double kPolynomialExp2Instructions = 11;

/// Per-SM limits and peaks of a target (the figures of the GPU named).
struct TargetLimits {
  std::string arch, device;
  int smCount = 0;
  int registersPerSm = 65536, maxThreadsPerSm = 2048, maxBlocksPerSm = 32;
  int64_t sharedPerSm = 0, sharedPerBlock = 0, sharedReservedPerBlock = 1024;
  double memoryBytesPerSecond = 0, tensorFlops = 0, fp32Flops = 0;
  /// Dense TF32 on tensor cores: half the 16-bit rate.
  double tf32Flops = 0;
  /// Exponentials (MUFU.EX2) a second over the SMs: 16 per SM and clock.
  double exponentialsPerSecond = 0;
  /// Shared-memory bytes a second over the SMs: 128 per SM and clock.
  double sharedBytesPerSecond = 0;
  /// Bytes a second that partial sums added in global memory meet in L2
  /// at, bounded by its bandwidth.
  double reducedBytesPerSecond = 0;
  /// What a recurrence's step waits for besides its work: a grid barrier
  /// of a cooperative launch (an atomic from each block met in L2, then
  /// every block polling it), or the launch of the next step's kernel
  /// from a CUDA graph. Modelled figures (microbenchmarks put both near a
  /// microsecond on A100 and H100), not measured here.
  double gridBarrierSeconds = 1.0e-6, launchSeconds = 2.0e-6;
  /// The SM clock, and in its cycles what a walk's step waits for on its
  /// critical path: a block barrier with the shared-memory round trip it
  /// orders (a store, the barrier, the load that reads it), and a
  /// dependent mma.sync (m16n8k16, fp32 accumulation). Modelled figures,
  /// near what microbenchmarks report for A100 and H100.
  double clockHz = 0;
  double blockBarrierCycles = 60, mmaLatencyCycles = 33;

  /// A roofline's lower bound in seconds and what sets it: "compute",
  /// "memory" (also on a tie with compute), "exponential", "polynomial
  /// exponential", "shared-memory" or "L2".
  struct Roofline {
    double seconds;
    const char *bound;
  };

  /// The roofline of a kernel moving `bytes`, computing `flops` on tensor
  /// cores (16-bit operands, or TF32 with `tf32`) or on the FP32 pipes,
  /// taking `exponentials` on the special-function units, reading
  /// `sharedBytes` of tensor-core operands from shared memory and adding
  /// `reducedBytes` in L2 (or reading operand tiles through it), and
  /// forming `polynomialExponentials` on the FP32 pipes.
  Roofline roofline(double bytes, double flops, bool tensor,
                    double exponentials = 0, double sharedBytes = 0,
                    double reducedBytes = 0, bool tf32 = false,
                    double polynomialExponentials = 0) const {
    Roofline result{flops / computeRate(tensor, tf32), "compute"};
    if (const double memory = bytes / memoryBytesPerSecond;
        memory >= result.seconds)
      result = {memory, "memory"};
    for (Roofline other :
         {Roofline{exponentials / exponentialsPerSecond, "exponential"},
          Roofline{polynomialExponentialSeconds(polynomialExponentials),
                   "polynomial exponential"},
          Roofline{sharedBytes / sharedBytesPerSecond, "shared-memory"},
          Roofline{reducedBytes / reducedBytesPerSecond, "L2"}})
      if (other.seconds > result.seconds)
        result = other;
    return result;
  }

  /// The FP32 pipes' time for `count` polynomial exponentials, at one
  /// instruction a lane and clock (half the FMA FLOP rate).
  double polynomialExponentialSeconds(double count) const {
    return count * kPolynomialExp2Instructions / (fp32Flops / 2);
  }

  /// FLOPs a second: on tensor cores (TF32 with `tf32`) or the FP32 pipes.
  double computeRate(bool tensor, bool tf32 = false) const {
    return !tensor ? fp32Flops : tf32 ? tf32Flops : tensorFlops;
  }

  /// sm_90: H200; sm_80: A100 80 GB. Throws InvalidArgument for others.
  static TargetLimits forArch(const std::string &arch);
};

/// ptxas -v's figures for one kernel.
struct KernelResources {
  int registers = 0;
  int64_t spillStores = 0, spillLoads = 0, stackBytes = 0, staticShared = 0;
};

/// Runs ptxas on `ptx` for `arch`. Throws Unsupported without a ptxas,
/// CompileError with its output when it fails.
KernelResources ptxasResources(const std::string &entry, const std::string &ptx,
                               const std::string &arch);

/// Static counts of the SASS instructions of a cubin.
struct InstructionMix {
  /// Empty when counted; else why not (no disassembler found, ...).
  std::string unavailable;
  int64_t total = 0, tensor = 0, ldmatrix = 0, cpAsync = 0, tma = 0,
          sharedLoads = 0, sharedStores = 0;
  /// Global loads and stores by access width in bits (8 ... 128).
  std::map<int, int64_t> globalLoads, globalStores;
  /// The tensor-core and asynchronous-copy opcodes counted above, by name
  /// (HMMA or HGMMA, LDGSTS or UTMALDG, ...).
  std::map<std::string, int64_t> opcodes;
  /// The warpgroup products by shape ("64x128x16"), from HGMMA's modifiers.
  std::map<std::string, int64_t> wgmmaShapes;
  /// Barrier instructions on named barriers (ids 1 to 15): waits (BAR.SYNC)
  /// and arrivals (BAR.ARV).
  int64_t namedBarrierSyncs = 0, namedBarrierArrivals = 0;
};

/// Disassembles `cubin` with cuobjdump -sass and counts.
InstructionMix sassInstructionMix(const std::string &cubin);

/// The disassembler used: "<path to cuobjdump>", or "" when none is found
/// (in the CUDA toolkit, on PATH, in $RUDNN_CUOBJDUMP, in Python's nvidia
/// wheels).
const std::string &cuobjdumpPath();

/// Blocks of `threads` threads with `resources` and `dynamicShared` bytes
/// that fit on one SM of `target` at once.
int residentBlocks(const KernelResources &resources, int64_t threads,
                   int64_t dynamicShared, const TargetLimits &target);

} // namespace rudnn::runtime

#endif // RUDNN_RUNTIME_PLANS_KERNELREPORT_H
