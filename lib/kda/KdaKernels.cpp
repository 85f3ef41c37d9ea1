//===- KdaKernels.cpp - The KDA forward plan and its kernels --------------===//

#include "lib/kda/KdaKernels.h"

#include <sstream>

using namespace rudnn;
using namespace rudnn::runtime;

namespace {

/// Parameter indices of the plan.
enum Param : uint32_t { kB, kT, kH, kN, kFirstStride };

codegen::ScalarType scalarType(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return codegen::ScalarType::F16;
  case DType::BF16:
    return codegen::ScalarType::BF16;
  default:
    return codegen::ScalarType::F32;
  }
}

} // namespace

codegen::KdaKernelSpec rudnn::emitterSpec(const KdaKernelSpec &spec) {
  return {scalarType(spec.input), scalarType(spec.gate), scalarType(spec.beta),
          spec.featureK,          spec.featureV,         spec.chunk};
}

std::string rudnn::kdaForwardSignature(const KdaKernelSpec &spec,
                                       const KdaPlanFlags &flags) {
  std::ostringstream key;
  key << "kda_forward:" << codegen::kdaSpecName(emitterSpec(spec))
      << ":s0=" << flags.initialState << ":sT=" << flags.finalState
      << ":bounds=" << flags.saveBoundaries << ":scale=" << std::hexfloat
      << flags.scale;
  return key.str();
}

Plan rudnn::buildKdaForwardPlan(Context::Impl &context,
                                const KdaKernelSpec &spec,
                                const KdaPlanFlags &flags) {
  Plan plan;
  const codegen::KdaKernelSpec emitted = emitterSpec(spec);
  plan.name = "kda_forward_" + codegen::kdaSpecName(emitted);
  plan.params = {"B", "T", "H", "N"};
  for (const char *tensor : {"q", "k", "v", "g", "beta", "output"})
    for (const char *dim : {"batch", "time", "head"})
      plan.params.push_back(std::string(tensor) + "_stride_" + dim);

  const SizeExpr none = SizeExpr::of(0);
  auto addBuffer = [&](std::string name, BufferKind kind,
                       SizeExpr bytes = SizeExpr::of(0),
                       SizeExpr offset = SizeExpr::of(0)) {
    plan.buffers.push_back({std::move(name), kind, bytes, offset});
    return static_cast<uint32_t>(plan.buffers.size() - 1);
  };
  const uint32_t q = addBuffer("q", BufferKind::Argument);
  const uint32_t k = addBuffer("k", BufferKind::Argument);
  const uint32_t v = addBuffer("v", BufferKind::Argument);
  const uint32_t g = addBuffer("g", BufferKind::Argument);
  const uint32_t beta = addBuffer("beta", BufferKind::Argument);
  const uint32_t output = addBuffer("output", BufferKind::Result);
  // Absent optional tensors are null pointers in every launch.
  const int64_t absent = -1;
  const int64_t initial = flags.initialState
                              ? addBuffer("initial_state", BufferKind::Argument)
                              : absent;
  const int64_t finalState =
      flags.finalState ? addBuffer("final_state", BufferKind::Result) : absent;
  // Workspace: the chunk tiles, then (when not a result) the boundaries.
  const SizeExpr tilesBytes{
      4 * codegen::kdaTileFloats(emitted), {kN, kB, kH}, 1};
  const uint32_t tiles =
      addBuffer("tiles", BufferKind::Workspace, tilesBytes, none);
  const uint32_t boundaries =
      flags.saveBoundaries
          ? addBuffer("boundaries", BufferKind::Result)
          : addBuffer("boundaries", BufferKind::Workspace,
                      {4 * spec.featureK * spec.featureV, {kN, kB, kH}, 1},
                      tilesBytes);

  std::vector<LaunchArg> args;
  for (int64_t buffer :
       {int64_t(q), int64_t(k), int64_t(v), int64_t(g), int64_t(beta), initial,
        int64_t(output), finalState, int64_t(boundaries), int64_t(tiles)})
    args.push_back(buffer == absent ? LaunchArg::i64(0)
                                    : LaunchArg::buffer(uint32_t(buffer)));
  for (uint32_t stride = 0; stride < 18; ++stride)
    args.push_back(LaunchArg::paramI64(kFirstStride + stride));
  for (uint32_t dim : {kB, kT, kH})
    args.push_back(LaunchArg::paramI32(dim));
  args.push_back(LaunchArg::f32(flags.scale));

  const SizeExpr sequences{1, {kB, kH}, 1}, chunks{1, {kN}, 1};
  const SizeExpr columnBlocks =
      SizeExpr::of((spec.featureV + codegen::kKdaColumnsPerBlock - 1) /
                   codegen::kKdaColumnsPerBlock);
  const LaunchGuard decode{kT, 1, 1}, chunked{kT, 2, INT64_MAX};
  struct Stage {
    codegen::KdaStage stage;
    LaunchGuard guard;
    SizeExpr gridX, gridY;
    int64_t threads;
  };
  using codegen::KdaStage;
  for (const Stage &stage : {Stage{KdaStage::Recurrent, decode, sequences,
                                   columnBlocks, codegen::kKdaColumnsPerBlock},
                             Stage{KdaStage::Prepare, chunked, chunks,
                                   sequences, codegen::kKdaThreads},
                             Stage{KdaStage::Propagate, chunked, sequences,
                                   columnBlocks, codegen::kKdaThreads},
                             Stage{KdaStage::Output, chunked, chunks, sequences,
                                   codegen::kKdaThreads}}) {
    codegen::EmittedKernel kernel =
        codegen::emitKdaKernel(emitted, stage.stage);
    plan.kernels.push_back(
        {kernel.entry, *context.compile({kernel.entry, kernel.source})});
    PlanLaunch launch;
    launch.kernel = static_cast<uint32_t>(plan.kernels.size() - 1);
    launch.guard = stage.guard;
    launch.grid[0] = stage.gridX;
    launch.grid[1] = stage.gridY;
    launch.block[0] = static_cast<uint32_t>(stage.threads);
    launch.args = args;
    plan.launches.push_back(std::move(launch));
  }
  return plan;
}
