//===- AttentionForward.cpp - Tiled attention through the JIT -------------===//
//
// Validates a call against the operator's contract and options, finds (or
// builds once) the function of its signature, and calls it: one rudnn IR
// function per signature, B, T, S, H, G and strides read from the views.
//
//===----------------------------------------------------------------------===//

#include "lib/ContractChecks.h"
#include "lib/OperatorFunctions.h"

#include "dialects/IR/AttentionContracts.h"
#include "dialects/IR/RudnnOps.h"

#include "rudnn/attention.h"
#include "rudnn/errors.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cmath>
#include <sstream>

using namespace rudnn;

namespace {

/// A call's options, resolved.
struct Resolved {
  float scale;
  AttentionOptions options;
};

Resolved resolve(const AttentionOptions &options, int64_t headDim) {
  Resolved r{options.scale
                 ? *options.scale
                 : static_cast<float>(1.0 / std::sqrt(double(headDim))),
             options};
  if (!(r.scale > 0) || !std::isfinite(r.scale))
    throw InvalidArgument("'scale' must be positive and finite, got " +
                          std::to_string(r.scale));
  if (!(options.softcap >= 0) || !std::isfinite(options.softcap))
    throw InvalidArgument("'softcap' must be 0 (none) or positive and "
                          "finite, got " +
                          std::to_string(options.softcap));
  if (options.windowLeft < -1 || options.windowRight < -1)
    throw InvalidArgument("window bounds must be -1 (unbounded) or at least "
                          "0, got (" +
                          std::to_string(options.windowLeft) + ", " +
                          std::to_string(options.windowRight) + ")");
  return r;
}

/// What shapes the function besides the sizes: its plan-cache key.
std::string signatureOf(const AttentionInputs &in, const AttentionOutputs &out,
                        const Resolved &r) {
  std::ostringstream key;
  key << "attention:" << dtypeName(in.q.dtype) << ":d" << in.q.shape[3] << ":e"
      << in.v.shape[3] << ":lengths=" << in.keyLengths.has_value()
      << ":mask=" << in.keyMask.has_value() << ":lse=" << out.lse.has_value()
      << ":causal=" << r.options.causal << ":window=" << r.options.windowLeft
      << "," << r.options.windowRight << std::hexfloat
      << ":softcap=" << r.options.softcap << ":scale=" << r.scale;
  return key.str();
}

/// @attention(q, k, v, [key_lengths], [key_mask]) -> (o, [lse]) with every
/// dim but D and E dynamic.
mlir::OwningOpRef<mlir::ModuleOp> attentionModule(mlir::MLIRContext &mlir,
                                                  const AttentionInputs &in,
                                                  const AttentionOutputs &out,
                                                  const Resolved &r) {
  mlir::OpBuilder b(&mlir);
  mlir::Location loc = b.getUnknownLoc();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  const int64_t dyn = mlir::ShapedType::kDynamic;
  mlir::Type element = mlirElementType(b, in.q.dtype);
  auto tensor = [&](llvm::ArrayRef<int64_t> shape, mlir::Type type) {
    return mlir::RankedTensorType::get(shape, type);
  };
  mlir::Type q = tensor({dyn, dyn, dyn, in.q.shape[3]}, element),
             v = tensor({dyn, dyn, dyn, in.v.shape[3]}, element),
             o = tensor({dyn, dyn, dyn, in.v.shape[3]}, element),
             lse = tensor({dyn, dyn, dyn}, b.getF32Type());
  llvm::SmallVector<mlir::Type> inputs = {q, q, v};
  if (in.keyLengths)
    inputs.push_back(tensor({dyn}, b.getI32Type()));
  if (in.keyMask)
    inputs.push_back(tensor({dyn, dyn}, b.getI1Type()));
  llvm::SmallVector<mlir::Type> results = {o};
  if (out.lse)
    results.push_back(lse);

  b.setInsertionPointToEnd(module->getBody());
  auto func = b.create<mlir::func::FuncOp>(loc, "attention",
                                           b.getFunctionType(inputs, results));
  mlir::Block *body = func.addEntryBlock();
  b.setInsertionPointToEnd(body);
  unsigned next = 3;
  mlir::Value lengths = in.keyLengths ? body->getArgument(next++) : nullptr;
  mlir::Value mask = in.keyMask ? body->getArgument(next++) : nullptr;
  const AttentionOptions &options = r.options;
  auto windowBound = [&](int bound) {
    return options.windowLeft >= 0 || options.windowRight >= 0
               ? b.getI64IntegerAttr(bound)
               : mlir::IntegerAttr();
  };
  auto attention = b.create<mlir::rudnn::AttentionOp>(
      loc, o, lse, body->getArgument(0), body->getArgument(1),
      body->getArgument(2), lengths, mask, options.causal,
      windowBound(options.windowLeft), windowBound(options.windowRight),
      options.softcap > 0 ? b.getF32FloatAttr(options.softcap)
                          : mlir::FloatAttr(),
      b.getF32FloatAttr(r.scale), mlir::IntegerAttr(), mlir::IntegerAttr());
  llvm::SmallVector<mlir::Value> returned = {attention.getO()};
  if (out.lse)
    returned.push_back(attention.getLse());
  b.create<mlir::func::ReturnOp>(loc, returned);
  return module;
}

} // namespace

void rudnn::attentionForward(Context &context, const AttentionInputs &in,
                             const AttentionOutputs &out,
                             const AttentionOptions &options, Stream stream) {
  // --- Validation: every fault named before anything runs. -----------------
  DimSizes dims = checkCall(
      attentionContract(),
      {&in.q, &in.k, &in.v, viewOf(in.keyLengths), viewOf(in.keyMask)},
      {&out.o, viewOf(out.lse)});
  if (dims['H'] % dims['G'] != 0)
    throw InvalidArgument("query heads H = " + std::to_string(dims['H']) +
                          " must be a multiple of the key heads G = " +
                          std::to_string(dims['G']) +
                          " ('q' dim 2, 'k' dim 2)");
  if (dims['B'] * dims['H'] > 65535)
    throw Unsupported("B·H = " + std::to_string(dims['B'] * dims['H']) +
                      " exceeds 65535, the grid's second dimension");
  for (char letter : {'T', 'S'})
    if (dims[letter] > INT32_MAX)
      throw InvalidArgument("T and S must each fit in 32 bits");
  const Resolved r = resolve(options, dims['D']);

  // --- The function of this signature, compiled at its first call. ------
  Function function = cachedFunction(context, signatureOf(in, out, r),
                                     [&](mlir::MLIRContext &mlir) {
                                       return attentionModule(mlir, in, out, r);
                                     });
  std::vector<TensorView> arguments = {in.q, in.k, in.v};
  if (in.keyLengths)
    arguments.push_back(*in.keyLengths);
  if (in.keyMask)
    arguments.push_back(*in.keyMask);
  std::vector<TensorView> results = {out.o};
  if (out.lse)
    results.push_back(*out.lse);
  function.call(arguments, results, stream);
}
