//===- AttentionBackward.cpp - The attention backward through the JIT -----===//
//
// Validates a call against the backward's contract and the options, finds
// (or builds once) the function of its signature, and calls it: B, T, S,
// H, G and strides read from the views.
//
//===----------------------------------------------------------------------===//

#include "lib/ContractChecks.h"
#include "lib/OperatorFunctions.h"
#include "lib/ViewChecks.h"
#include "lib/attention/AttentionCall.h"

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
  bool lengths, mask;
  /// q, k, v and d_output keep 16-byte rows (rudnn.align).
  bool aligned;
};

std::string signatureOf(const BackwardForm &f, const ResolvedAttention &r) {
  std::ostringstream key;
  key << "attention_backward:" << dtypeName(f.dtype) << ":d" << f.headDim
      << ":e" << f.valueDim << ":lengths=" << f.lengths << ":mask=" << f.mask
      << ":a16=" << f.aligned << ":causal=" << r.options.causal
      << ":window=" << r.options.windowLeft << "," << r.options.windowRight
      << std::hexfloat << ":softcap=" << r.options.softcap
      << ":scale=" << r.scale;
  return key.str();
}

/// @attention_backward(q, k, v, [key_lengths], [key_mask], o, lse,
/// d_output) -> (dq, dk, dv), every dim but D and E dynamic.
mlir::OwningOpRef<mlir::ModuleOp> backwardModule(mlir::MLIRContext &mlir,
                                                 const BackwardForm &f,
                                                 const ResolvedAttention &r) {
  mlir::OpBuilder b(&mlir);
  mlir::Location loc = b.getUnknownLoc();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  const int64_t dyn = mlir::ShapedType::kDynamic;
  mlir::Type element = mlirElementType(b, f.dtype);
  auto rows = [&](int64_t width) {
    return mlir::RankedTensorType::get({dyn, dyn, dyn, width}, element);
  };
  mlir::Type q = rows(f.headDim), v = rows(f.valueDim),
             lse = mlir::RankedTensorType::get({dyn, dyn, dyn}, b.getF32Type());
  llvm::SmallVector<mlir::Type> inputs = {q, q, v};
  if (f.lengths)
    inputs.push_back(mlir::RankedTensorType::get({dyn}, b.getI32Type()));
  if (f.mask)
    inputs.push_back(mlir::RankedTensorType::get({dyn, dyn}, b.getI1Type()));
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
  unsigned next = 3;
  mlir::Value lengths = f.lengths ? body->getArgument(next++) : nullptr;
  mlir::Value mask = f.mask ? body->getArgument(next++) : nullptr;
  const AttentionOptions &options = r.options;
  auto backward = b.create<mlir::rudnn::AttentionBackwardOp>(
      loc, q, q, v, body->getArgument(0), body->getArgument(1),
      body->getArgument(2), lengths, mask, body->getArgument(next),
      body->getArgument(next + 1), body->getArgument(next + 2), options.causal,
      windowBoundAttr(b, options, options.windowLeft),
      windowBoundAttr(b, options, options.windowRight),
      options.softcap > 0 ? b.getF32FloatAttr(options.softcap)
                          : mlir::FloatAttr(),
      b.getF32FloatAttr(r.scale));
  b.create<mlir::func::ReturnOp>(loc, backward->getResults());
  return module;
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
  for (int64_t blocks : {dims['B'] * dims['H'], dims['B'] * dims['G']})
    if (blocks > 65535)
      throw Unsupported("B·H = " + std::to_string(dims['B'] * dims['H']) +
                        " exceeds 65535, the grid's second dimension");
  for (char letter : {'T', 'S'})
    if (dims[letter] > INT32_MAX)
      throw InvalidArgument("T and S must each fit in 32 bits");
  const ResolvedAttention r = resolveAttention(options, dims['D']);
  const BackwardForm form{f.q.dtype,
                          dims['D'],
                          dims['E'],
                          f.keyLengths.has_value(),
                          f.keyMask.has_value(),
                          hasAlignedRows(f.q, 16) && hasAlignedRows(f.k, 16) &&
                              hasAlignedRows(f.v, 16) &&
                              hasAlignedRows(in.dOutput, 16)};
  std::vector<TensorView> arguments = {f.q, f.k, f.v};
  if (f.keyLengths)
    arguments.push_back(*f.keyLengths);
  if (f.keyMask)
    arguments.push_back(*f.keyMask);
  arguments.insert(arguments.end(), {in.o, in.lse, in.dOutput});
  Function function = cachedFunction(
      context, signatureOf(form, r),
      [&](mlir::MLIRContext &mlir) { return backwardModule(mlir, form, r); });
  function.call(arguments, {out.dq, out.dk, out.dv}, stream);
}
