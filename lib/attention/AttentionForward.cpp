//===- AttentionForward.cpp - Tiled attention through the JIT -------------===//
//
// Validates a call against the operator's contract and options, finds (or
// builds once) the function of its signature, and calls it: one rudnn IR
// function per signature (padded or packed batches), B, T, S, H, G, the
// offsets' count and strides read from the views.
//
//===----------------------------------------------------------------------===//

#include "lib/OperatorFunctions.h"
#include "lib/attention/AttentionCall.h"
#include "runtime/ContractChecks.h"
#include "runtime/ViewChecks.h"

#include "dialects/IR/AttentionContracts.h"
#include "dialects/IR/RudnnOps.h"

#include "rudnn/attention.h"
#include "rudnn/errors.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cmath>
#include <sstream>

using namespace rudnn;

ResolvedAttention rudnn::resolveAttention(const AttentionOptions &options,
                                          int64_t headDim) {
  ResolvedAttention r{
      options.scale ? *options.scale
                    : static_cast<float>(1.0 / std::sqrt(double(headDim))),
      options};
  if (!(r.scale > 0) || !std::isfinite(r.scale))
    throw InvalidArgument("'scale' must be positive and finite, got " +
                          std::to_string(r.scale));
  if (!(options.softcap >= 0) || !std::isfinite(options.softcap))
    throw InvalidArgument("'softcap' must be 0 (none) or positive and "
                          "finite, got " +
                          std::to_string(options.softcap));
  if (options.windowLeft < -1 || options.windowRight < -1 ||
      options.windowLeft > kAttentionMaxWindow ||
      options.windowRight > kAttentionMaxWindow)
    throw InvalidArgument("window bounds must be -1 (unbounded) or 0 to " +
                          std::to_string(kAttentionMaxWindow) + ", got (" +
                          std::to_string(options.windowLeft) + ", " +
                          std::to_string(options.windowRight) + ")");
  return r;
}

mlir::IntegerAttr rudnn::windowBoundAttr(mlir::Builder &b,
                                         const AttentionOptions &options,
                                         int bound) {
  return options.windowLeft >= 0 || options.windowRight >= 0
             ? b.getI64IntegerAttr(bound)
             : mlir::IntegerAttr();
}

namespace {

using Resolved = ResolvedAttention;

/// What shapes a call's function: its types and dims, the optional tensors
/// it has and whether its batches are packed.
struct CallForm {
  DType dtype;
  int64_t headDim, valueDim;
  bool lengths, mask, lse, packed;
  /// q, k and v keep 16-byte rows: the function promises it (rudnn.align)
  /// and its kernel copies them without an element-wise path.
  bool aligned = false;
};

/// What shapes the function besides the sizes: its plan-cache key.
std::string signatureOf(const CallForm &f, const Resolved &r) {
  std::ostringstream key;
  key << (f.packed ? "attention_varlen:" : "attention:") << dtypeName(f.dtype)
      << ":d" << f.headDim << ":e" << f.valueDim << ":lengths=" << f.lengths
      << ":mask=" << f.mask << ":lse=" << f.lse << ":a16=" << f.aligned
      << ":causal=" << r.options.causal << ":window=" << r.options.windowLeft
      << "," << r.options.windowRight << std::hexfloat
      << ":softcap=" << r.options.softcap << ":scale=" << r.scale;
  return key.str();
}

/// @attention(q, k, v, [key_lengths], [key_mask]) -> (o, [lse]), or for
/// packed batches (q, k, v, cu_seqlens_q, cu_seqlens_k) -> (o, [lse]), with
/// every dim but D and E dynamic.
mlir::OwningOpRef<mlir::ModuleOp>
attentionModule(mlir::MLIRContext &mlir, const CallForm &f, const Resolved &r) {
  mlir::OpBuilder b(&mlir);
  mlir::Location loc = b.getUnknownLoc();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  const int64_t dyn = mlir::ShapedType::kDynamic;
  const int64_t rank = f.packed ? 3 : 4;
  mlir::Type element = mlirElementType(b, f.dtype);
  // Padded [B, T, H, *]; packed [T, H, *].
  auto rows = [&](int64_t width, mlir::Type type) {
    llvm::SmallVector<int64_t> shape(rank - 1, dyn);
    shape.push_back(width);
    return mlir::RankedTensorType::get(shape, type);
  };
  mlir::Type q = rows(f.headDim, element), v = rows(f.valueDim, element),
             lse = mlir::RankedTensorType::get(
                 llvm::SmallVector<int64_t>(rank - 1, dyn), b.getF32Type()),
             offsets = mlir::RankedTensorType::get({dyn}, b.getI32Type());
  llvm::SmallVector<mlir::Type> inputs = {q, q, v};
  if (f.lengths)
    inputs.push_back(offsets);
  if (f.mask)
    inputs.push_back(mlir::RankedTensorType::get({dyn, dyn}, b.getI1Type()));
  if (f.packed)
    inputs.append({offsets, offsets});
  llvm::SmallVector<mlir::Type> results = {v};
  if (f.lse)
    results.push_back(lse);

  b.setInsertionPointToEnd(module->getBody());
  auto func = b.create<mlir::func::FuncOp>(loc, "attention",
                                           b.getFunctionType(inputs, results));
  if (f.aligned)
    for (unsigned argument : {0u, 1u, 2u})
      func.setArgAttr(argument, mlir::rudnn::RudnnDialect::kAlignAttrName,
                      b.getI64IntegerAttr(16));
  mlir::Block *body = func.addEntryBlock();
  b.setInsertionPointToEnd(body);
  unsigned next = 3;
  mlir::Value lengths = f.lengths ? body->getArgument(next++) : nullptr;
  mlir::Value mask = f.mask ? body->getArgument(next++) : nullptr;
  const AttentionOptions &options = r.options;
  auto windowBound = [&](int bound) {
    return windowBoundAttr(b, options, bound);
  };
  const mlir::FloatAttr softcap = options.softcap > 0
                                      ? b.getF32FloatAttr(options.softcap)
                                      : mlir::FloatAttr();
  mlir::Operation *attention;
  if (f.packed)
    attention = b.create<mlir::rudnn::AttentionVarlenOp>(
        loc, v, lse, body->getArgument(0), body->getArgument(1),
        body->getArgument(2), body->getArgument(next),
        body->getArgument(next + 1), options.causal,
        windowBound(options.windowLeft), windowBound(options.windowRight),
        softcap, b.getF32FloatAttr(r.scale), mlir::IntegerAttr(),
        mlir::IntegerAttr());
  else
    attention = b.create<mlir::rudnn::AttentionOp>(
        loc, v, lse, body->getArgument(0), body->getArgument(1),
        body->getArgument(2), lengths, mask, options.causal,
        windowBound(options.windowLeft), windowBound(options.windowRight),
        softcap, b.getF32FloatAttr(r.scale), mlir::IntegerAttr(),
        mlir::IntegerAttr());
  llvm::SmallVector<mlir::Value> returned = {attention->getResult(0)};
  if (f.lse)
    returned.push_back(attention->getResult(1));
  b.create<mlir::func::ReturnOp>(loc, returned);
  return module;
}

/// Checks the grid's limits, then calls the function of the
/// call's form (compiled at its first call) on `arguments` and `results`.
void callAttention(Context &context, DimSizes &dims, CallForm form,
                   const AttentionOptions &options,
                   const std::vector<TensorView> &arguments,
                   const std::vector<TensorView> &results, Stream stream) {
  const int64_t blockRows = form.packed ? dims['H'] : dims['B'] * dims['H'];
  if (blockRows > 65535)
    throw Unsupported((form.packed ? "H = " : "B·H = ") +
                      std::to_string(blockRows) +
                      " exceeds 65535, the grid's second dimension");
  for (char letter : {'T', 'S'})
    if (dims[letter] > INT32_MAX)
      throw InvalidArgument("T and S must each fit in 32 bits");
  const Resolved r = resolveAttention(options, dims['D']);
  form.aligned = hasAlignedRows(arguments[0], 16) &&
                 hasAlignedRows(arguments[1], 16) &&
                 hasAlignedRows(arguments[2], 16);
  Function function = cachedFunction(
      context, signatureOf(form, r),
      [&](mlir::MLIRContext &mlir) { return attentionModule(mlir, form, r); });
  function.call(arguments, results, stream);
}

} // namespace

void rudnn::attentionForward(Context &context, const AttentionInputs &in,
                             const AttentionOutputs &out,
                             const AttentionOptions &options, Stream stream) {
  // Validation: every fault named before anything runs.
  DimSizes dims = checkCall(
      attentionContract(),
      {&in.q, &in.k, &in.v, viewOf(in.keyLengths), viewOf(in.keyMask)},
      {&out.o, viewOf(out.lse)});
  const CallForm form{in.q.dtype,
                      dims['D'],
                      dims['E'],
                      in.keyLengths.has_value(),
                      in.keyMask.has_value(),
                      out.lse.has_value(),
                      /*packed=*/false};
  std::vector<TensorView> arguments = {in.q, in.k, in.v};
  if (in.keyLengths)
    arguments.push_back(*in.keyLengths);
  if (in.keyMask)
    arguments.push_back(*in.keyMask);
  std::vector<TensorView> results = {out.o};
  if (out.lse)
    results.push_back(*out.lse);
  callAttention(context, dims, form, options, arguments, results, stream);
}

void rudnn::attentionVarlenForward(Context &context,
                                   const AttentionVarlenInputs &in,
                                   const AttentionOutputs &out,
                                   const AttentionOptions &options,
                                   Stream stream) {
  // Validation: every fault named before anything runs.
  DimSizes dims =
      checkCall(attentionVarlenContract(),
                {&in.q, &in.k, &in.v, &in.cuSeqlensQ, &in.cuSeqlensK},
                {&out.o, viewOf(out.lse)});
  const CallForm form{in.q.dtype, dims['D'],           dims['E'],      false,
                      false,      out.lse.has_value(), /*packed=*/true};
  std::vector<TensorView> results = {out.o};
  if (out.lse)
    results.push_back(*out.lse);
  callAttention(context, dims, form, options,
                {in.q, in.k, in.v, in.cuSeqlensQ, in.cuSeqlensK}, results,
                stream);
}
