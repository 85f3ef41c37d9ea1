//===- AttentionBackward.cpp - The attention backward through the JIT -----===//
//
// Validates a call against the backward's contract and the options, finds
// (or builds once) the function of its signature, and calls it: B, T, S,
// H, G and strides read from the views.
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

#include <sstream>

using namespace rudnn;

namespace {

/// What shapes a call's function besides the sizes.
struct BackwardForm {
  DType dtype;
  int64_t headDim, valueDim;
  bool lengths, mask, packed;
  /// q, k, v and d_output keep 16-byte rows (rudnn.align).
  bool aligned = false;
};

std::string signatureOf(const BackwardForm &f, const ResolvedAttention &r) {
  std::ostringstream key;
  key << (f.packed ? "attention_varlen_backward:" : "attention_backward:")
      << dtypeName(f.dtype) << ":d" << f.headDim << ":e" << f.valueDim
      << ":lengths=" << f.lengths << ":mask=" << f.mask << ":a16=" << f.aligned
      << ":causal=" << r.options.causal << ":window=" << r.options.windowLeft
      << "," << r.options.windowRight << std::hexfloat
      << ":softcap=" << r.options.softcap << ":scale=" << r.scale;
  return key.str();
}

/// @attention_backward(q, k, v, [key_lengths], [key_mask], o, lse,
/// d_output) -> (dq, dk, dv), or for packed batches (q, k, v,
/// cu_seqlens_q, cu_seqlens_k, o, lse, d_output), every dim but D and E
/// dynamic.
mlir::OwningOpRef<mlir::ModuleOp> backwardModule(mlir::MLIRContext &mlir,
                                                 const BackwardForm &f,
                                                 const ResolvedAttention &r) {
  mlir::OpBuilder b(&mlir);
  mlir::Location loc = b.getUnknownLoc();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  const int64_t dyn = mlir::ShapedType::kDynamic;
  const int64_t rank = f.packed ? 3 : 4;
  mlir::Type element = mlirElementType(b, f.dtype);
  // Padded [B, T, H, *]; packed [T, H, *].
  auto rows = [&](int64_t width) {
    llvm::SmallVector<int64_t> shape(rank - 1, dyn);
    shape.push_back(width);
    return mlir::RankedTensorType::get(shape, element);
  };
  mlir::Type q = rows(f.headDim), v = rows(f.valueDim),
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
  inputs.append({v, lse, v});

  b.setInsertionPointToEnd(module->getBody());
  auto func = b.create<mlir::func::FuncOp>(
      loc, "attention_backward", b.getFunctionType(inputs, {q, q, v}));
  const unsigned gradient = static_cast<unsigned>(inputs.size()) - 1;
  if (f.aligned)
    for (unsigned argument : {0u, 1u, 2u, gradient})
      func.setArgAttr(argument, mlir::rudnn::RudnnDialect::kAlignAttrName,
                      b.getI64IntegerAttr(16));
  mlir::Block *body = func.addEntryBlock();
  b.setInsertionPointToEnd(body);
  auto argument = [&](unsigned index) { return body->getArgument(index); };
  unsigned next = 3;
  mlir::Value lengths = f.lengths ? argument(next++) : nullptr;
  mlir::Value mask = f.mask ? argument(next++) : nullptr;
  const AttentionOptions &options = r.options;
  const mlir::IntegerAttr left =
                              windowBoundAttr(b, options, options.windowLeft),
                          right =
                              windowBoundAttr(b, options, options.windowRight);
  const mlir::FloatAttr softcap = options.softcap > 0
                                      ? b.getF32FloatAttr(options.softcap)
                                      : mlir::FloatAttr();
  mlir::Operation *backward;
  if (f.packed)
    backward = b.create<mlir::rudnn::AttentionVarlenBackwardOp>(
        loc, q, q, v, argument(0), argument(1), argument(2), argument(3),
        argument(4), argument(5), argument(6), argument(7), options.causal,
        left, right, softcap, b.getF32FloatAttr(r.scale), mlir::IntegerAttr());
  else
    backward = b.create<mlir::rudnn::AttentionBackwardOp>(
        loc, q, q, v, argument(0), argument(1), argument(2), lengths, mask,
        argument(next), argument(next + 1), argument(next + 2), options.causal,
        left, right, softcap, b.getF32FloatAttr(r.scale), mlir::IntegerAttr());
  b.create<mlir::func::ReturnOp>(loc, backward->getResults());
  return module;
}

/// Checks the grid's limits, then calls the function of the call's form
/// (compiled at its first call).
void callBackward(Context &context, const DimSizes &dims, BackwardForm form,
                  const AttentionOptions &options,
                  const std::vector<TensorView> &arguments,
                  const AttentionGradients &out, Stream stream) {
  for (int64_t heads : {dims['H'], dims['G']}) {
    const int64_t blocks = form.packed ? heads : dims['B'] * heads;
    if (blocks > 65535)
      throw Unsupported((form.packed ? "H = " : "B·H = ") +
                        std::to_string(blocks) +
                        " exceeds 65535, the grid's second dimension");
  }
  for (char letter : {'T', 'S'})
    if (dims[letter] > INT32_MAX)
      throw InvalidArgument("T and S must each fit in 32 bits");
  const ResolvedAttention r = resolveAttention(options, dims['D']);
  form.aligned =
      hasAlignedRows(arguments[0], 16) && hasAlignedRows(arguments[1], 16) &&
      hasAlignedRows(arguments[2], 16) && hasAlignedRows(arguments.back(), 16);
  Function function = cachedFunction(
      context, signatureOf(form, r),
      [&](mlir::MLIRContext &mlir) { return backwardModule(mlir, form, r); });
  function.call(arguments, {out.dq, out.dk, out.dv}, stream);
}

} // namespace

void rudnn::attentionBackward(Context &context,
                              const AttentionBackwardInputs &in,
                              const AttentionGradients &out,
                              const AttentionOptions &options, Stream stream) {
  // Validation: every fault named before anything runs.
  const AttentionInputs &f = in.forward;
  DimSizes dims = checkCall(attentionBackwardContract(),
                            {&f.q, &f.k, &f.v, viewOf(f.keyLengths),
                             viewOf(f.keyMask), &in.o, &in.lse, &in.dOutput},
                            {&out.dq, &out.dk, &out.dv});
  const BackwardForm form{f.q.dtype,
                          dims['D'],
                          dims['E'],
                          f.keyLengths.has_value(),
                          f.keyMask.has_value(),
                          /*packed=*/false};
  std::vector<TensorView> arguments = {f.q, f.k, f.v};
  if (f.keyLengths)
    arguments.push_back(*f.keyLengths);
  if (f.keyMask)
    arguments.push_back(*f.keyMask);
  arguments.insert(arguments.end(), {in.o, in.lse, in.dOutput});
  callBackward(context, dims, form, options, arguments, out, stream);
}

void rudnn::attentionVarlenBackward(Context &context,
                                    const AttentionVarlenBackwardInputs &in,
                                    const AttentionGradients &out,
                                    const AttentionOptions &options,
                                    Stream stream) {
  // Validation: every fault named before anything runs.
  const AttentionVarlenInputs &f = in.forward;
  DimSizes dims = checkCall(attentionVarlenBackwardContract(),
                            {&f.q, &f.k, &f.v, &f.cuSeqlensQ, &f.cuSeqlensK,
                             &in.o, &in.lse, &in.dOutput},
                            {&out.dq, &out.dk, &out.dv});
  const BackwardForm form{f.q.dtype, dims['D'], dims['E'],
                          false,     false,     /*packed=*/true};
  callBackward(
      context, dims, form, options,
      {f.q, f.k, f.v, f.cuSeqlensQ, f.cuSeqlensK, in.o, in.lse, in.dOutput},
      out, stream);
}
