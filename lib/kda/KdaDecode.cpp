//===- KdaDecode.cpp - KDA decoding over a state pool through the JIT -----===//
//
// Validates a decoding step, finds (or builds once) the function of its
// signature (one rudnn.kda_decode) and calls it with the pool as both an
// argument and the result updated in place.
//
//===----------------------------------------------------------------------===//

#include "lib/OperatorFunctions.h"
#include "lib/kda/KdaChecks.h"
#include "runtime/ContractChecks.h"
#include "runtime/ViewChecks.h"

#include "dialects/IR/KdaContracts.h"
#include "dialects/IR/RudnnOps.h"

#include "rudnn/errors.h"
#include "rudnn/kda.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cmath>
#include <cstdint>
#include <map>
#include <sstream>
#include <vector>

using namespace rudnn;

namespace {

struct DecodeForm {
  DType input, gate, beta, state;
  int64_t featureK, featureV;
  bool grouped, status;
  float scale;
  KdaInputTransforms transforms;
};

std::string signatureOf(const DecodeForm &f) {
  std::ostringstream key;
  key << "kda_decode:" << dtypeName(f.input) << ":" << dtypeName(f.gate) << ":"
      << dtypeName(f.beta) << ":state=" << dtypeName(f.state) << ":k"
      << f.featureK << ":v" << f.featureV << ":gva=" << f.grouped
      << ":status=" << f.status << kdaTransformsKey(f.transforms)
      << std::hexfloat << ":scale=" << f.scale;
  return key.str();
}

/// @kda_decode taking q k v g beta state_pool slots [a_log [dt_bias]] with
/// dynamic B, T, H, P and returning output, state_pool (updated) and, if
/// asked, status.
mlir::OwningOpRef<mlir::ModuleOp> decodeModule(mlir::MLIRContext &mlir,
                                               const DecodeForm &f) {
  mlir::OpBuilder b(&mlir);
  mlir::Location loc = b.getUnknownLoc();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  const int64_t dyn = mlir::ShapedType::kDynamic;
  auto tensor = [&](llvm::ArrayRef<int64_t> shape, DType dtype) {
    return mlir::RankedTensorType::get(shape, mlirElementType(b, dtype));
  };
  mlir::Type q = tensor({dyn, dyn, dyn, f.featureK}, f.input),
             v = tensor({dyn, dyn, dyn, f.featureV}, f.input),
             g = tensor({dyn, dyn, dyn, f.featureK}, f.gate),
             beta = tensor({dyn, dyn, dyn}, f.beta),
             pool = tensor({dyn, dyn, f.featureK, f.featureV}, f.state),
             indices = tensor({dyn}, DType::I32);
  llvm::SmallVector<mlir::Type> results = {v, pool};
  if (f.status)
    results.push_back(indices);
  llvm::SmallVector<mlir::Type> arguments = {q, q, v, g, beta, pool, indices};
  const KdaInputTransforms &t = f.transforms;
  addGateParameters(arguments, b, f.featureK, t);
  b.setInsertionPointToEnd(module->getBody());
  auto func = b.create<mlir::func::FuncOp>(
      loc, "kda_decode", b.getFunctionType(arguments, results));
  mlir::Block *body = func.addEntryBlock();
  b.setInsertionPointToEnd(body);
  auto arg = [&](unsigned i) { return body->getArgument(i); };
  const KdaTransformAttrs attrs(b, t);
  auto op = b.create<mlir::rudnn::KdaDecodeOp>(
      loc, mlir::TypeRange{v, pool, indices}, arg(0), arg(1), arg(2), arg(3),
      arg(4), arg(5), arg(6), t.gate ? arg(7) : mlir::Value(),
      t.gateBias ? arg(8) : mlir::Value(), b.getF32FloatAttr(f.scale),
      f.grouped ? b.getUnitAttr() : mlir::UnitAttr(), attrs.qkL2Norm,
      attrs.betaLogits, attrs.lowerBound);
  b.create<mlir::func::ReturnOp>(loc,
                                 op.getResults().take_front(results.size()));
  return module;
}

/// Without a status tensor the slots are checked on the host: each in
/// [0, P) and used by one entry only.
void checkSlotsOnHost(Context &context, const TensorView &slots,
                      int64_t poolSize, Stream stream) {
  std::vector<int32_t> host(static_cast<size_t>(slots.shape[0]));
  context.copyToHost(host.data(), slots.data, host.size() * sizeof(int32_t),
                     stream);
  context.synchronize(stream);
  std::map<int32_t, size_t> first;
  for (size_t b = 0; b < host.size(); ++b) {
    if (host[b] < 0 || host[b] >= poolSize)
      throw InvalidArgument("'slots' entry " + std::to_string(b) + " is " +
                            std::to_string(host[b]) + ", outside the pool's " +
                            std::to_string(poolSize) + " states");
    auto [it, inserted] = first.emplace(host[b], b);
    if (!inserted)
      throw InvalidArgument("'slots' entries " + std::to_string(it->second) +
                            " and " + std::to_string(b) + " share slot " +
                            std::to_string(host[b]) +
                            ": one state a request (give 'status' to have "
                            "such entries refused on the device instead)");
  }
}

} // namespace

void rudnn::kdaDecode(Context &context, const KdaDecodeInputs &in,
                      const KdaDecodeOutputs &out, const KdaOptions &options,
                      Stream stream) {
  // Validation: every fault named before anything runs. The pool is its
  // own result.
  const bool grouped = groupedHeads(in.q, in.v);
  const KdaInputTransforms transforms =
      inputTransformsOf(in.aLog.has_value(), in.dtBias.has_value(), options);
  DimSizes dims =
      checkCall(kdaDecodeContract(grouped),
                {&in.q, &in.k, &in.v, &in.g, &in.beta, &in.statePool, &in.slots,
                 viewOf(in.aLog), viewOf(in.dtBias)},
                {&out.output, &in.statePool, viewOf(out.status)});
  if (options.chunk)
    throw InvalidArgument("a decoding step takes no 'chunk': it runs token "
                          "by token");
  const float scale =
      options.scale ? *options.scale
                    : static_cast<float>(1.0 / std::sqrt(double(dims['K'])));
  if (!(scale > 0) || !std::isfinite(scale))
    throw InvalidArgument("'scale' must be positive and finite, got " +
                          std::to_string(scale));
  for (char letter : {'B', 'T', 'H', 'P'})
    if (dims[letter] > INT32_MAX / 2)
      throw InvalidArgument(std::string("dim ") + letter +
                            " must be below 2^30");
  if (dims['B'] * dims['H'] > INT32_MAX)
    throw Unsupported("B·H exceeds the grid's first dimension");
  if (!out.status)
    checkSlotsOnHost(context, in.slots, dims['P'], stream);

  const DecodeForm form{
      in.q.dtype, in.g.dtype, in.beta.dtype, in.statePool.dtype,
      dims['K'],  dims['V'],  grouped,       out.status.has_value(),
      scale,      transforms};
  Function function =
      cachedFunction(context, signatureOf(form), [&](mlir::MLIRContext &mlir) {
        return decodeModule(mlir, form);
      });
  function.call(
      presentViews({&in.q, &in.k, &in.v, &in.g, &in.beta, &in.statePool,
                    &in.slots, viewOf(in.aLog), viewOf(in.dtBias)}),
      presentViews({&out.output, &in.statePool, viewOf(out.status)}), stream);
}
