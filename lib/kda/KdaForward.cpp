//===- KdaForward.cpp - Kimi Delta Attention forward through the JIT ------===//
//
// Validates a call, finds (or builds once) the plan for its signature, binds
// the tensors and runs it. The plan holds both the chunked kernels and the
// recurrent decode kernel, guarded by T, so a call changing only B, T, H or
// strides never compiles.
//
//===----------------------------------------------------------------------===//

#include "lib/ContextImpl.h"
#include "lib/kda/KdaKernels.h"

#include "codegen/Transforms/TargetPolicy.h"

#include "rudnn/kda.h"

#include <cmath>
#include <map>
#include <sstream>

using namespace rudnn;
using namespace rudnn::runtime;
using mlir::rudnn::chooseKdaChunk;
using mlir::rudnn::DefaultTarget;

namespace {

constexpr int64_t kMaxFeatureDim = 256;

bool isFloat(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16;
}

std::string shapeText(const std::vector<int64_t> &shape) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < shape.size(); ++i)
    out << (i ? ", " : "") << shape[i];
  return out.str() + "]";
}

enum class Layout {
  Strided,    // any outer strides, innermost (feature) dim contiguous
  AnyStrides, // no feature dim (beta): any strides
  Dense,      // states: dense row-major
};

/// Checks one tensor: data, rank, expected shape and layout.
void checkTensor(const std::string &name, const TensorView &view,
                 const std::vector<int64_t> &expected, Layout layout) {
  if (!view.data)
    throw InvalidArgument("'" + name + "' has no data pointer");
  if (view.shape.size() != expected.size())
    throw InvalidArgument(
        "'" + name + "' must have rank " + std::to_string(expected.size()) +
        " " + shapeText(expected) + ", got " + shapeText(view.shape));
  if (view.strides.size() != view.shape.size())
    throw InvalidArgument(
        "'" + name + "' has " + std::to_string(view.strides.size()) +
        " strides for rank " + std::to_string(view.shape.size()));
  if (view.shape != expected)
    throw InvalidArgument("'" + name + "' must have shape " +
                          shapeText(expected) + ", got " +
                          shapeText(view.shape));
  if (layout != Layout::AnyStrides && view.strides.back() != 1)
    throw InvalidArgument("'" + name +
                          "' must be contiguous in its innermost dim, got "
                          "stride " +
                          std::to_string(view.strides.back()));
  for (int64_t stride : view.strides)
    if (stride < 0)
      throw InvalidArgument("'" + name + "' has a negative stride");
  if (layout == Layout::Dense &&
      view.strides !=
          TensorView::contiguous(view.data, view.dtype, view.shape).strides)
    throw InvalidArgument("'" + name + "' must be dense row-major, got " +
                          view.describe());
}

void checkDtype(const std::string &name, const TensorView &view,
                DType expected) {
  if (view.dtype != expected)
    throw InvalidArgument("'" + name + "' must be " + dtypeName(expected) +
                          ", got " + dtypeName(view.dtype));
}

} // namespace

void rudnn::kdaForward(Context &context, const KdaForwardInputs &in,
                       const KdaForwardOutputs &out, const KdaOptions &options,
                       Stream stream) {
  // --- Validation: every fault named before anything runs. -----------------
  if (in.q.shape.size() != 4)
    throw InvalidArgument("'q' must have rank 4 [B, T, H, K], got " +
                          shapeText(in.q.shape));
  if (in.v.shape.size() != 4)
    throw InvalidArgument("'v' must have rank 4 [B, T, H, V], got " +
                          shapeText(in.v.shape));
  const int64_t B = in.q.shape[0], T = in.q.shape[1], H = in.q.shape[2];
  const int64_t K = in.q.shape[3], V = in.v.shape[3];
  if (B < 1 || T < 1 || H < 1)
    throw InvalidArgument("'q' dims B, T, H must be positive, got " +
                          shapeText(in.q.shape));
  for (auto [name, dim] : {std::pair{"K", K}, std::pair{"V", V}})
    if (dim < 1 || dim > kMaxFeatureDim)
      throw InvalidArgument(std::string("feature dim ") + name + " is " +
                            std::to_string(dim) + ", expected 1 to 256");
  if (!isFloat(in.q.dtype))
    throw InvalidArgument(std::string("'q' must be f32, f16 or bf16, got ") +
                          dtypeName(in.q.dtype));
  checkDtype("k", in.k, in.q.dtype);
  checkDtype("v", in.v, in.q.dtype);
  checkDtype("output", out.output, in.q.dtype);
  for (auto [name, view] : {std::pair{"g", &in.g}, std::pair{"beta", &in.beta}})
    if (!isFloat(view->dtype))
      throw InvalidArgument(std::string("'") + name +
                            "' must be f32, f16 or bf16, got " +
                            dtypeName(view->dtype));

  // The default target's budget, so every backend chooses alike.
  const int64_t chunk =
      options.chunk
          ? *options.chunk
          : chooseKdaChunk(K, V, DefaultTarget::kSmemPerBlock).value_or(16);
  if (chunk != 16 && chunk != 32 && chunk != 64)
    throw InvalidArgument("'chunk' must be 16, 32 or 64, got " +
                          std::to_string(chunk));
  const double scale =
      options.scale ? *options.scale : 1.0 / std::sqrt(double(K));
  if (!(scale > 0) || !std::isfinite(scale))
    throw InvalidArgument("'scale' must be positive and finite, got " +
                          std::to_string(scale));
  const int64_t N = (T + chunk - 1) / chunk;

  checkTensor("q", in.q, {B, T, H, K}, Layout::Strided);
  checkTensor("k", in.k, {B, T, H, K}, Layout::Strided);
  checkTensor("v", in.v, {B, T, H, V}, Layout::Strided);
  checkTensor("g", in.g, {B, T, H, K}, Layout::Strided);
  checkTensor("beta", in.beta, {B, T, H}, Layout::AnyStrides);
  checkTensor("output", out.output, {B, T, H, V}, Layout::Strided);
  if (in.initialState) {
    checkTensor("initial_state", *in.initialState, {B, H, K, V}, Layout::Dense);
    checkDtype("initial_state", *in.initialState, DType::F32);
  }
  if (out.finalState) {
    checkTensor("final_state", *out.finalState, {B, H, K, V}, Layout::Dense);
    checkDtype("final_state", *out.finalState, DType::F32);
  }
  if (out.boundaries) {
    checkTensor("boundaries", *out.boundaries, {N, B, H, K, V}, Layout::Dense);
    checkDtype("boundaries", *out.boundaries, DType::F32);
  }
  for (int64_t dim : {B, H, T})
    if (dim > INT32_MAX)
      throw InvalidArgument("B, T and H must each fit in 32 bits");
  if (B * H > 65535)
    throw Unsupported("B·H = " + std::to_string(B * H) +
                      " exceeds 65535, the grid's second dimension");

  // --- The plan of this signature. ------------------------------------------
  KdaKernelSpec spec{in.q.dtype, in.g.dtype, in.beta.dtype, K, V, chunk};
  KdaPlanFlags flags{in.initialState.has_value(), out.finalState.has_value(),
                     out.boundaries.has_value(), static_cast<float>(scale)};
  std::shared_ptr<PlanExecutor> executor =
      context.impl().plan(kdaForwardSignature(spec, flags), [&] {
        return buildKdaForwardPlan(context.impl(), spec, flags);
      });

  // --- Bindings by buffer name; workspace entries stay 0. ------------------
  std::map<std::string, const TensorView *> named = {
      {"q", &in.q}, {"k", &in.k},       {"v", &in.v},
      {"g", &in.g}, {"beta", &in.beta}, {"output", &out.output}};
  if (in.initialState)
    named["initial_state"] = &*in.initialState;
  if (out.finalState)
    named["final_state"] = &*out.finalState;
  if (out.boundaries)
    named["boundaries"] = &*out.boundaries;
  std::vector<DevicePtr> bindings;
  for (const PlanBuffer &buffer : executor->plan().buffers) {
    auto it = named.find(buffer.name);
    bindings.push_back(buffer.kind == BufferKind::Workspace || it == named.end()
                           ? 0
                           : reinterpret_cast<DevicePtr>(it->second->data));
  }
  std::vector<int64_t> params = {B, T, H, N};
  for (const TensorView *view :
       {&in.q, &in.k, &in.v, &in.g, &in.beta, &out.output})
    params.insert(params.end(), view->strides.begin(),
                  view->strides.begin() + 3);
  executor->run(bindings, params, stream);
}
