//===- KdaKernels.cpp - The KDA forward plan and its kernels --------------===//

#include "lib/kda/KdaKernels.h"

#include <sstream>

using namespace rudnn;
using namespace rudnn::runtime;

namespace {

/// Parameter indices of the plan.
enum Param : uint32_t { kB, kT, kH, kN, kFirstStride };
/// Value columns handled by one block of `propagate` and `recurrent`.
constexpr int64_t kColumnsPerBlock = 32;
constexpr uint32_t kThreads = 128;

const char *cudaType(DType dtype) {
  switch (dtype) {
  case DType::F16:
    return "__half";
  case DType::BF16:
    return "__nv_bfloat16";
  default:
    return "float";
  }
}

/// Floats of one chunk's tiles (rudnn::kda::ChunkTiles::kFloats).
int64_t tileFloats(const KdaKernelSpec &spec) {
  const int64_t C = spec.chunk, K = spec.featureK, V = spec.featureV;
  return C * (4 * K + 2 * V + C) + K;
}

std::string specName(const KdaKernelSpec &spec) {
  std::ostringstream name;
  name << dtypeName(spec.input) << "_" << dtypeName(spec.gate) << "_"
       << dtypeName(spec.beta) << "_k" << spec.featureK << "_v" << spec.featureV
       << "_c" << spec.chunk;
  return name.str();
}

} // namespace

std::string rudnn::kdaForwardSignature(const KdaKernelSpec &spec,
                                       const KdaPlanFlags &flags) {
  std::ostringstream key;
  key << "kda_forward:" << specName(spec) << ":s0=" << flags.initialState
      << ":sT=" << flags.finalState << ":bounds=" << flags.saveBoundaries
      << ":scale=" << std::hexfloat << flags.scale;
  return key.str();
}

KernelSource rudnn::kdaForwardKernel(const KdaKernelSpec &spec,
                                     const std::string &stage) {
  const std::string in = cudaType(spec.input), gate = cudaType(spec.gate),
                    beta = cudaType(spec.beta);
  std::ostringstream dims;
  dims << spec.featureK << ", " << spec.featureV << ", " << spec.chunk;
  if (stage == "propagate" || stage == "recurrent")
    dims << ", " << kColumnsPerBlock;
  const std::string entry = "kda_fwd_" + stage + "_" + specName(spec);

  std::ostringstream source;
  source << "// Kimi Delta Attention forward: " << stage << ".\n"
         << "#include \"rudnn/device.cuh\"\n\n"
         << "extern \"C\" __global__ void " << entry << "(\n"
         << "    const " << in << " *q, const " << in << " *k, const " << in
         << " *v, const " << gate << " *g,\n"
         << "    const " << beta << " *beta, const float *initial_state, " << in
         << " *output, float *final_state,\n"
         << "    float *boundaries, float *workspace,\n";
  for (const char *tensor : {"q", "k", "v", "g", "beta", "output"})
    source << "    long long " << tensor << "_b, long long " << tensor
           << "_t, long long " << tensor << "_h,\n";
  source
      << "    int batch, int length, int heads, float scale) {\n"
      << "  const rudnn::kda::ForwardParams<" << in << ", " << gate << ", "
      << beta << "> p = {\n"
      << "      q, k, v, g, beta, initial_state, output, final_state,\n"
      << "      boundaries, workspace, {q_b, q_t, q_h}, {k_b, k_t, k_h},\n"
      << "      {v_b, v_t, v_h}, {g_b, g_t, g_h}, {beta_b, beta_t, beta_h},\n"
      << "      {output_b, output_t, output_h}, batch, length, heads, "
         "scale};\n"
      << "  rudnn::kda::" << stage << "<" << dims.str() << ">(p);\n"
      << "}\n";
  return {entry, source.str()};
}

Plan rudnn::buildKdaForwardPlan(Context::Impl &context,
                                const KdaKernelSpec &spec,
                                const KdaPlanFlags &flags) {
  Plan plan;
  plan.name = "kda_forward_" + specName(spec);
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
  const SizeExpr tilesBytes{4 * tileFloats(spec), {kN, kB, kH}, 1};
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
      SizeExpr::of((spec.featureV + kColumnsPerBlock - 1) / kColumnsPerBlock);
  const LaunchGuard decode{kT, 1, 1}, chunked{kT, 2, INT64_MAX};
  struct Stage {
    const char *name;
    LaunchGuard guard;
    SizeExpr gridX, gridY;
    uint32_t threads;
  };
  for (const Stage &stage :
       {Stage{"recurrent", decode, sequences, columnBlocks,
              uint32_t(kColumnsPerBlock)},
        Stage{"prepare", chunked, chunks, sequences, kThreads},
        Stage{"propagate", chunked, sequences, columnBlocks, kThreads},
        Stage{"output", chunked, chunks, sequences, kThreads}}) {
    KernelSource source = kdaForwardKernel(spec, stage.name);
    plan.kernels.push_back({source.entry, *context.compile(source)});
    PlanLaunch launch;
    launch.kernel = static_cast<uint32_t>(plan.kernels.size() - 1);
    launch.guard = stage.guard;
    launch.grid[0] = stage.gridX;
    launch.grid[1] = stage.gridY;
    launch.block[0] = stage.threads;
    launch.args = args;
    plan.launches.push_back(std::move(launch));
  }
  return plan;
}
