//===- KdaChecks.cpp - Validating KDA calls -------------------------------===//

#include "lib/kda/KdaChecks.h"
#include "lib/ViewChecks.h"

#include "codegen/Transforms/TargetPolicy.h"

#include <cmath>
#include <sstream>

using namespace rudnn;
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

} // namespace

void rudnn::checkTensor(const std::string &name, const TensorView &view,
                        const std::vector<int64_t> &expected,
                        TensorLayout layout) {
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
  if (layout != TensorLayout::AnyStrides && view.strides.back() != 1)
    throw InvalidArgument("'" + name +
                          "' must be contiguous in its innermost dim, got "
                          "stride " +
                          std::to_string(view.strides.back()));
  checkedByteRange(name, view);
  if (layout == TensorLayout::Dense &&
      view.strides !=
          TensorView::contiguous(view.data, view.dtype, view.shape).strides)
    throw InvalidArgument("'" + name + "' must be dense row-major, got " +
                          view.describe());
}

void rudnn::checkDtype(const std::string &name, const TensorView &view,
                       DType expected) {
  if (view.dtype != expected)
    throw InvalidArgument("'" + name + "' must be " + dtypeName(expected) +
                          ", got " + dtypeName(view.dtype));
}

KdaCallShape rudnn::checkKdaInputs(const KdaForwardInputs &in,
                                   const KdaOptions &options) {
  if (in.q.shape.size() != 4)
    throw InvalidArgument("'q' must have rank 4 [B, T, H, K], got " +
                          shapeText(in.q.shape));
  if (in.v.shape.size() != 4)
    throw InvalidArgument("'v' must have rank 4 [B, T, H, V], got " +
                          shapeText(in.v.shape));
  KdaCallShape s;
  s.B = in.q.shape[0], s.T = in.q.shape[1], s.H = in.q.shape[2];
  s.K = in.q.shape[3], s.V = in.v.shape[3];
  if (s.B < 1 || s.T < 1 || s.H < 1)
    throw InvalidArgument("'q' dims B, T, H must be positive, got " +
                          shapeText(in.q.shape));
  for (auto [name, dim] : {std::pair{"K", s.K}, std::pair{"V", s.V}})
    if (dim < 1 || dim > kMaxFeatureDim)
      throw InvalidArgument(std::string("feature dim ") + name + " is " +
                            std::to_string(dim) + ", expected 1 to 256");
  if (!isFloat(in.q.dtype))
    throw InvalidArgument(std::string("'q' must be f32, f16 or bf16, got ") +
                          dtypeName(in.q.dtype));
  checkDtype("k", in.k, in.q.dtype);
  checkDtype("v", in.v, in.q.dtype);
  for (auto [name, view] : {std::pair{"g", &in.g}, std::pair{"beta", &in.beta}})
    if (!isFloat(view->dtype))
      throw InvalidArgument(std::string("'") + name +
                            "' must be f32, f16 or bf16, got " +
                            dtypeName(view->dtype));

  // The default target's budget, so every backend chooses alike.
  s.chunk =
      options.chunk
          ? *options.chunk
          : chooseKdaChunk(s.K, s.V, DefaultTarget::kSmemPerBlock).value_or(16);
  if (s.chunk != 16 && s.chunk != 32 && s.chunk != 64)
    throw InvalidArgument("'chunk' must be 16, 32 or 64, got " +
                          std::to_string(s.chunk));
  s.scale = options.scale ? *options.scale : 1.0 / std::sqrt(double(s.K));
  if (!(s.scale > 0) || !std::isfinite(s.scale))
    throw InvalidArgument("'scale' must be positive and finite, got " +
                          std::to_string(s.scale));
  s.N = (s.T + s.chunk - 1) / s.chunk;

  checkTensor("q", in.q, {s.B, s.T, s.H, s.K}, TensorLayout::Strided);
  checkTensor("k", in.k, {s.B, s.T, s.H, s.K}, TensorLayout::Strided);
  checkTensor("v", in.v, {s.B, s.T, s.H, s.V}, TensorLayout::Strided);
  checkTensor("g", in.g, {s.B, s.T, s.H, s.K}, TensorLayout::Strided);
  checkTensor("beta", in.beta, {s.B, s.T, s.H}, TensorLayout::AnyStrides);
  if (in.initialState) {
    checkTensor("initial_state", *in.initialState, {s.B, s.H, s.K, s.V},
                TensorLayout::Dense);
    checkDtype("initial_state", *in.initialState, DType::F32);
  }
  return s;
}

void rudnn::checkKdaGridLimits(const KdaCallShape &s) {
  for (int64_t dim : {s.B, s.H, s.T})
    if (dim > INT32_MAX)
      throw InvalidArgument("B, T and H must each fit in 32 bits");
  if (s.B * s.H > 65535)
    throw Unsupported("B·H = " + std::to_string(s.B * s.H) +
                      " exceeds 65535, the grid's second dimension");
}

void rudnn::checkKdaForwardViews(const KdaForwardInputs &in,
                                 const KdaForwardOutputs &out) {
  std::vector<NamedView> inputs = {{"q", &in.q},
                                   {"k", &in.k},
                                   {"v", &in.v},
                                   {"g", &in.g},
                                   {"beta", &in.beta}};
  if (in.initialState)
    inputs.push_back({"initial_state", &*in.initialState});
  std::vector<NamedView> outputs = {{"output", &out.output}};
  if (out.finalState)
    outputs.push_back({"final_state", &*out.finalState});
  if (out.boundaries)
    outputs.push_back({"boundaries", &*out.boundaries});
  // The state kernels read each block of the initial state before writing
  // the same block of the final state, and no other kernel reads it.
  checkViewAliasing(inputs, outputs, {{"final_state", "initial_state"}});
}

void rudnn::checkKdaBackwardViews(const KdaBackwardInputs &in,
                                  const KdaBackwardOutputs &out) {
  const KdaForwardInputs &fw = in.forward;
  std::vector<NamedView> inputs = {
      {"q", &fw.q}, {"k", &fw.k},       {"v", &fw.v},
      {"g", &fw.g}, {"beta", &fw.beta}, {"d_output", &in.dOutput}};
  if (fw.initialState)
    inputs.push_back({"initial_state", &*fw.initialState});
  if (in.dFinalState)
    inputs.push_back({"d_final_state", &*in.dFinalState});
  if (in.boundaries)
    inputs.push_back({"boundaries", &*in.boundaries});
  std::vector<NamedView> outputs = {{"dq", &out.dq},
                                    {"dk", &out.dk},
                                    {"dv", &out.dv},
                                    {"dg", &out.dg},
                                    {"dbeta", &out.dbeta}};
  if (out.dInitialState)
    outputs.push_back({"d_initial_state", &*out.dInitialState});
  checkViewAliasing(inputs, outputs);
}
