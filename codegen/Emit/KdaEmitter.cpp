//===- KdaEmitter.cpp - CUDA C++ for the KDA kernels ----------------------===//

#include "codegen/Emit/KdaEmitter.h"

#include <sstream>

using namespace rudnn::codegen;

const char *rudnn::codegen::stageName(KdaStage stage) {
  switch (stage) {
  case KdaStage::Prepare:
    return "prepare";
  case KdaStage::Propagate:
    return "propagate";
  case KdaStage::Output:
    return "output";
  case KdaStage::Recurrent:
    return "recurrent";
  case KdaStage::Restore:
    return "restore";
  case KdaStage::StateGradient:
    return "state_gradient";
  case KdaStage::Gradients:
    return "gradients";
  }
  return "?";
}

std::optional<KdaStage> rudnn::codegen::stageNamed(std::string_view name) {
  for (KdaStage stage :
       {KdaStage::Prepare, KdaStage::Propagate, KdaStage::Output,
        KdaStage::Recurrent, KdaStage::Restore, KdaStage::StateGradient,
        KdaStage::Gradients})
    if (name == stageName(stage))
      return stage;
  return std::nullopt;
}

static const char *cudaType(DType type) {
  switch (type) {
  case DType::F16:
    return "__half";
  case DType::BF16:
    return "__nv_bfloat16";
  default:
    return "float";
  }
}

int64_t rudnn::codegen::kdaTileFloats(const KdaKernelSpec &spec) {
  const int64_t C = spec.chunk, K = spec.featureK, V = spec.featureV;
  // kda::ChunkTiles: Γ, U0 and e^Γlast in fp32, the operands in the input
  // type.
  const int64_t fp32Floats = C * (K + V) + K;
  const int64_t operands = C * (3 * K + V + 2 * C);
  const int64_t operandBytes = operands * (spec.input == DType::F32 ? 4 : 2);
  return fp32Floats + (operandBytes + 3) / 4;
}

int64_t rudnn::codegen::kdaGradientTileFloats(const KdaKernelSpec &spec) {
  const int64_t C = spec.chunk, K = spec.featureK, V = spec.featureV;
  return K * V + C * (5 * K + 2 * V);
}

std::string rudnn::codegen::kdaSpecName(const KdaKernelSpec &spec) {
  std::ostringstream name;
  name << dtypeName(spec.input) << "_" << dtypeName(spec.gate) << "_"
       << dtypeName(spec.beta) << "_k" << spec.featureK << "_v" << spec.featureV
       << "_c" << spec.chunk;
  return name.str();
}

EmittedKernel rudnn::codegen::emitKdaKernel(const KdaKernelSpec &spec,
                                            KdaStage stage) {
  const std::string in = cudaType(spec.input), gate = cudaType(spec.gate),
                    beta = cudaType(spec.beta), name = stageName(stage);
  std::ostringstream layout, constants;
  layout << spec.featureK << ", " << spec.featureV << ", " << spec.chunk;
  constants << layout.str();
  if (stage == KdaStage::Propagate || stage == KdaStage::Recurrent ||
      stage == KdaStage::StateGradient)
    constants << ", " << kKdaColumnsPerBlock;
  const bool backward = isBackwardStage(stage);
  const std::string entry = std::string(backward ? "kda_bwd_" : "kda_fwd_") +
                            name + "_" + kdaSpecName(spec);

  std::ostringstream source;
  source << "// Kimi Delta Attention " << (backward ? "backward" : "forward")
         << ": " << name << ".\n"
         << "#include \"rudnn/device.cuh\"\n\n"
         << "// The host sizes the workspace from the same layout.\n"
         << "static_assert(rudnn::kda::ChunkTiles<" << layout.str() << ", "
         << in << ">::kFloats == " << kdaTileFloats(spec) << ");\n";
  if (backward)
    source << "static_assert(rudnn::kda::GradientTiles<" << layout.str()
           << ">::kFloats == " << kdaGradientTileFloats(spec) << ");\n";
  source << "\n"
         << "extern \"C\" __global__ void " << entry << "(\n"
         << "    const " << in << " *q, const " << in << " *k, const " << in
         << " *v, const " << gate << " *g,\n"
         << "    const " << beta << " *beta, const float *initial_state, " << in
         << " *output, float *final_state,\n"
         << "    float *boundaries, float *workspace,\n";
  for (const char *tensor : {"q", "k", "v", "g", "beta", "output"})
    source << "    long long " << tensor << "_b, long long " << tensor
           << "_t, long long " << tensor << "_h,\n";
  source << "    int batch, int length, int heads, float scale";
  if (backward) {
    source << ",\n    const " << in
           << " *d_output, const float *d_final_state, " << in << " *dq, " << in
           << " *dk, " << in << " *dv,\n    float *dg, " << beta
           << " *dbeta, float *d_initial_state, float *scratch";
    for (const char *tensor : {"d_output", "dq", "dk", "dv", "dg", "dbeta"})
      source << ",\n    long long " << tensor << "_b, long long " << tensor
             << "_t, long long " << tensor << "_h";
  }
  const std::string params =
      std::string("<") + in + ", " + gate + ", " + beta + ">";
  source
      << ") {\n"
      << "  const rudnn::kda::ForwardParams" << params
      << (backward ? " f" : " p") << " = {\n"
      << "      q, k, v, g, beta, initial_state, output, final_state,\n"
      << "      boundaries, workspace, {q_b, q_t, q_h}, {k_b, k_t, k_h},\n"
      << "      {v_b, v_t, v_h}, {g_b, g_t, g_h}, {beta_b, beta_t, beta_h},\n"
      << "      {output_b, output_t, output_h}, batch, length, heads, "
         "scale};\n";
  if (backward)
    source << "  const rudnn::kda::BackwardParams" << params << " p = {\n"
           << "      f, d_output, d_final_state, dq, dk, dv, dg, dbeta,\n"
           << "      d_initial_state, scratch, {d_output_b, d_output_t, "
              "d_output_h},\n"
           << "      {dq_b, dq_t, dq_h}, {dk_b, dk_t, dk_h}, {dv_b, dv_t, "
              "dv_h},\n"
           << "      {dg_b, dg_t, dg_h}, {dbeta_b, dbeta_t, dbeta_h}};\n";
  source << "  rudnn::kda::" << name << "<" << constants.str() << ">(p);\n"
         << "}\n";
  return {entry, source.str()};
}
