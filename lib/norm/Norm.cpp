//===- Norm.cpp - Moments, LayerNorm and RMSNorm through the JIT ----------===//
//
// Validates a call against its operator's contract (one per rank of x),
// finds (or builds once) the function of its signature and calls it. The
// rows and strides are read from the views, eps is a kernel argument.
//
//===----------------------------------------------------------------------===//

#include "lib/OperatorFunctions.h"
#include "runtime/ContractChecks.h"

#include "dialects/IR/NormContracts.h"
#include "dialects/IR/RudnnOps.h"

#include "rudnn/errors.h"
#include "rudnn/norm.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cmath>
#include <sstream>

using namespace rudnn;

namespace {

/// What shapes a call's function besides the rows.
struct CallForm {
  NormOperator op;
  DType dtype;
  int64_t features;
  bool outerRows;
  bool residual, gamma, beta; // inputs given
  bool mean, second, h;       // outputs asked for (y always, but moments)
  float eps;
};

std::string signatureOf(const CallForm &f) {
  std::ostringstream key;
  key << "norm:" << normKindName(f.op) << ":" << dtypeName(f.dtype) << ":c"
      << f.features << ":rank" << (f.outerRows ? 3 : 2) << ":in" << f.residual
      << f.gamma << f.beta << ":out" << f.mean << f.second << f.h
      << std::hexfloat << ":eps=" << f.eps;
  return key.str();
}

/// The types of a call's tensors: rows [?, C] (or [?, ?, C]), their
/// statistics [?] (or [?, ?]) f32, and [C] vectors.
struct NormTypes {
  mlir::Type rows, stats, features;
};

NormTypes normTypes(mlir::Builder &b, DType dtype, int64_t features,
                    bool outerRows) {
  const int64_t dyn = mlir::ShapedType::kDynamic;
  mlir::Type element = mlirElementType(b, dtype);
  llvm::SmallVector<int64_t> rowShape = {dyn, features}, statShape = {dyn};
  if (outerRows) {
    rowShape.insert(rowShape.begin(), dyn);
    statShape.push_back(dyn);
  }
  return {mlir::RankedTensorType::get(rowShape, element),
          mlir::RankedTensorType::get(statShape, b.getF32Type()),
          mlir::RankedTensorType::get({features}, element)};
}

/// @norm(x, [residual], [gamma], [beta]) -> (y, [mean], [second], [h]) (for
/// moments: x -> (mean, var)), the rows dynamic.
mlir::OwningOpRef<mlir::ModuleOp> normModule(mlir::MLIRContext &mlir,
                                             const CallForm &f) {
  mlir::OpBuilder b(&mlir);
  mlir::Location loc = b.getUnknownLoc();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  const auto [rows, stats, features] =
      normTypes(b, f.dtype, f.features, f.outerRows);
  llvm::SmallVector<mlir::Type> inputs = {rows};
  if (f.residual)
    inputs.push_back(rows);
  if (f.gamma)
    inputs.push_back(features);
  if (f.beta)
    inputs.push_back(features);
  const bool moments = f.op == NormOperator::Moments;
  llvm::SmallVector<mlir::Type> results;
  if (!moments)
    results.push_back(rows);
  if (f.mean)
    results.push_back(stats);
  if (f.second)
    results.push_back(stats);
  if (f.h)
    results.push_back(rows);

  b.setInsertionPointToEnd(module->getBody());
  auto func = b.create<mlir::func::FuncOp>(loc, "norm",
                                           b.getFunctionType(inputs, results));
  mlir::Block *body = func.addEntryBlock();
  b.setInsertionPointToEnd(body);
  unsigned next = 1;
  auto optionalArg = [&](bool present) {
    return present ? mlir::Value(body->getArgument(next++)) : mlir::Value();
  };
  mlir::Value x = body->getArgument(0), residual = optionalArg(f.residual),
              gamma = optionalArg(f.gamma), beta = optionalArg(f.beta);
  const mlir::FloatAttr eps = b.getF32FloatAttr(f.eps);
  mlir::Value y, mean, second, h;
  switch (f.op) {
  case NormOperator::Moments: {
    auto op = b.create<mlir::rudnn::MomentsOp>(
        loc, mlir::TypeRange{stats, stats}, x, mlir::IntegerAttr(),
        mlir::IntegerAttr(), mlir::IntegerAttr());
    mean = op.getMean();
    second = op.getVar();
    break;
  }
  case NormOperator::LayerNorm: {
    auto op = b.create<mlir::rudnn::LayerNormOp>(
        loc, mlir::TypeRange{rows, stats, stats, rows}, x, residual, gamma,
        beta, eps, mlir::IntegerAttr(), mlir::IntegerAttr(),
        mlir::IntegerAttr());
    y = op.getY();
    mean = op.getMean();
    second = op.getRstd();
    h = op.getH();
    break;
  }
  case NormOperator::RmsNorm: {
    auto op = b.create<mlir::rudnn::RmsNormOp>(
        loc, mlir::TypeRange{rows, stats, rows}, x, residual, gamma, eps,
        mlir::IntegerAttr(), mlir::IntegerAttr(), mlir::IntegerAttr());
    y = op.getY();
    second = op.getRstd();
    h = op.getH();
    break;
  }
  }
  llvm::SmallVector<mlir::Value> returned;
  if (!moments)
    returned.push_back(y);
  if (f.mean)
    returned.push_back(mean);
  if (f.second)
    returned.push_back(second);
  if (f.h)
    returned.push_back(h);
  b.create<mlir::func::ReturnOp>(loc, returned);
  return module;
}

/// x's rank picks the contract: [N, C] or [M, N, C].
bool outerRowsOf(const TensorView &x) {
  if (x.shape.size() != 2 && x.shape.size() != 3)
    throw InvalidArgument("'x' must be [N, C] or [M, N, C], got rank " +
                          std::to_string(x.shape.size()));
  return x.shape.size() == 3;
}

void checkEps(float eps) {
  if (!(eps >= 0.0f) || !std::isfinite(eps))
    throw InvalidArgument("'eps' must be finite and not negative, got " +
                          std::to_string(eps));
}

/// Calls the function `build` writes for `signature` with the views given
/// (absent optional ones left out).
void callWith(
    Context &context, const std::string &signature,
    llvm::function_ref<mlir::OwningOpRef<mlir::ModuleOp>(mlir::MLIRContext &)>
        build,
    const std::vector<const TensorView *> &operands,
    const std::vector<const TensorView *> &resultViews, Stream stream) {
  cachedFunction(context, signature, build)
      .call(presentViews(operands), presentViews(resultViews), stream);
}

void call(Context &context, const CallForm &form,
          const std::vector<const TensorView *> &operands,
          const std::vector<const TensorView *> &results, Stream stream) {
  callWith(
      context, signatureOf(form),
      [&](mlir::MLIRContext &mlir) { return normModule(mlir, form); }, operands,
      results, stream);
}

} // namespace

void rudnn::layerNorm(Context &context, const NormInputs &in,
                      const LayerNormOutputs &out, float eps, Stream stream) {
  const bool outerRows = outerRowsOf(in.x);
  const std::vector<const TensorView *> operands = {
      &in.x, viewOf(in.residual), viewOf(in.gamma), viewOf(in.beta)};
  const std::vector<const TensorView *> results = {
      &out.y, viewOf(out.mean), viewOf(out.rstd), viewOf(out.h)};
  DimSizes dims = checkCall(normContract(NormOperator::LayerNorm, outerRows),
                            operands, results);
  checkEps(eps);
  if (out.h && !in.residual)
    throw InvalidArgument("'h' is x + residual: it needs a 'residual'");
  call(context,
       {NormOperator::LayerNorm, in.x.dtype, dims['C'], outerRows,
        in.residual.has_value(), in.gamma.has_value(), in.beta.has_value(),
        out.mean.has_value(), out.rstd.has_value(), out.h.has_value(), eps},
       operands, results, stream);
}

void rudnn::rmsNorm(Context &context, const NormInputs &in,
                    const RmsNormOutputs &out, float eps, Stream stream) {
  const bool outerRows = outerRowsOf(in.x);
  if (in.beta)
    throw InvalidArgument("'beta': RMSNorm has no shift");
  const std::vector<const TensorView *> operands = {&in.x, viewOf(in.residual),
                                                    viewOf(in.gamma)};
  const std::vector<const TensorView *> results = {&out.y, viewOf(out.rstd),
                                                   viewOf(out.h)};
  DimSizes dims = checkCall(normContract(NormOperator::RmsNorm, outerRows),
                            operands, results);
  checkEps(eps);
  if (out.h && !in.residual)
    throw InvalidArgument("'h' is x + residual: it needs a 'residual'");
  call(context,
       {NormOperator::RmsNorm, in.x.dtype, dims['C'], outerRows,
        in.residual.has_value(), in.gamma.has_value(), false, false,
        out.rstd.has_value(), out.h.has_value(), eps},
       operands, results, stream);
}

void rudnn::moments(Context &context, const TensorView &x,
                    const MomentsOutputs &out, Stream stream) {
  const bool outerRows = outerRowsOf(x);
  const std::vector<const TensorView *> operands = {&x};
  const std::vector<const TensorView *> results = {&out.mean, &out.var};
  DimSizes dims = checkCall(normContract(NormOperator::Moments, outerRows),
                            operands, results);
  call(context,
       {NormOperator::Moments, x.dtype, dims['C'], outerRows, false, false,
        false, true, true, false, 0.0f},
       operands, results, stream);
}

namespace {

/// What shapes a backward call's function besides the rows.
struct BackwardForm {
  NormOperator op;
  DType dtype;
  int64_t features;
  bool outerRows, gamma, dgamma, dbeta;
};

/// @norm_backward(dy, x, [mean], rstd, [gamma]) -> (dx, [dgamma], [dbeta]).
mlir::OwningOpRef<mlir::ModuleOp> backwardModule(mlir::MLIRContext &mlir,
                                                 const BackwardForm &f) {
  mlir::OpBuilder b(&mlir);
  mlir::Location loc = b.getUnknownLoc();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  const auto [rows, stats, features] =
      normTypes(b, f.dtype, f.features, f.outerRows);
  const bool layer = f.op == NormOperator::LayerNorm;
  llvm::SmallVector<mlir::Type> inputs = {rows, rows};
  if (layer)
    inputs.push_back(stats);
  inputs.push_back(stats);
  if (f.gamma)
    inputs.push_back(features);
  llvm::SmallVector<mlir::Type> results = {rows};
  if (f.dgamma)
    results.push_back(features);
  if (f.dbeta)
    results.push_back(features);

  b.setInsertionPointToEnd(module->getBody());
  auto func = b.create<mlir::func::FuncOp>(loc, "norm_backward",
                                           b.getFunctionType(inputs, results));
  mlir::Block *body = func.addEntryBlock();
  b.setInsertionPointToEnd(body);
  auto arg = [&](unsigned i) { return mlir::Value(body->getArgument(i)); };
  const unsigned rstd = layer ? 3 : 2;
  mlir::Value gamma = f.gamma ? arg(rstd + 1) : mlir::Value();
  llvm::SmallVector<mlir::Value> returned;
  const mlir::IntegerAttr none;
  if (layer) {
    auto op = b.create<mlir::rudnn::LayerNormBackwardOp>(
        loc, mlir::TypeRange{rows, features, features}, arg(0), arg(1), arg(2),
        arg(3), gamma, none, none, none, none);
    returned = {op.getDx()};
    if (f.dgamma)
      returned.push_back(op.getDgamma());
    if (f.dbeta)
      returned.push_back(op.getDbeta());
  } else {
    auto op = b.create<mlir::rudnn::RmsNormBackwardOp>(
        loc, mlir::TypeRange{rows, features}, arg(0), arg(1), arg(2), gamma,
        none, none, none, none);
    returned = {op.getDx()};
    if (f.dgamma)
      returned.push_back(op.getDgamma());
  }
  b.create<mlir::func::ReturnOp>(loc, returned);
  return module;
}

void backward(Context &context, NormOperator op, const NormBackwardInputs &in,
              const NormBackwardOutputs &out, Stream stream) {
  const bool outerRows = outerRowsOf(in.x);
  const bool layer = op == NormOperator::LayerNorm;
  if (!layer && in.mean)
    throw InvalidArgument("'mean': RMSNorm's backward reads rstd alone");
  if (layer && !in.mean)
    throw InvalidArgument("'mean' is missing: LayerNorm's backward reads "
                          "the forward's mean");
  if (!layer && out.dbeta)
    throw InvalidArgument("'dbeta': RMSNorm has no shift");
  std::vector<const TensorView *> operands = {&in.dy, &in.x};
  if (layer)
    operands.push_back(&*in.mean);
  operands.insert(operands.end(), {&in.rstd, viewOf(in.gamma)});
  std::vector<const TensorView *> results = {&out.dx, viewOf(out.dgamma)};
  if (layer)
    results.push_back(viewOf(out.dbeta));
  DimSizes dims =
      checkCall(normBackwardContract(op, outerRows), operands, results);
  const BackwardForm form{op,
                          in.x.dtype,
                          dims['C'],
                          outerRows,
                          in.gamma.has_value(),
                          out.dgamma.has_value(),
                          out.dbeta.has_value()};
  std::ostringstream key;
  key << "norm_backward:" << normKindName(op) << ":" << dtypeName(form.dtype)
      << ":c" << form.features << ":rank" << (outerRows ? 3 : 2) << ":gamma"
      << form.gamma << ":out" << form.dgamma << form.dbeta;
  callWith(
      context, key.str(),
      [&](mlir::MLIRContext &mlir) { return backwardModule(mlir, form); },
      operands, results, stream);
}

} // namespace

void rudnn::layerNormBackward(Context &context, const NormBackwardInputs &in,
                              const NormBackwardOutputs &out, Stream stream) {
  backward(context, NormOperator::LayerNorm, in, out, stream);
}

void rudnn::rmsNormBackward(Context &context, const NormBackwardInputs &in,
                            const NormBackwardOutputs &out, Stream stream) {
  backward(context, NormOperator::RmsNorm, in, out, stream);
}
