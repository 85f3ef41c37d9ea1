//===- KvCache.cpp - Decoder attention over a K/V cache through the JIT ---===//
//
// Validates a decoding step against its operator's contract, finds (or
// builds once) the function of its signature and calls it with the caches
// as both arguments and results: the plan updates them in place. B, T, S
// (or P and M), H, G and the strides are read from the views; the lengths
// and the block table never leave the device.
//
//===----------------------------------------------------------------------===//

#include "lib/OperatorFunctions.h"
#include "runtime/ContractChecks.h"
#include "runtime/ViewChecks.h"

#include "dialects/IR/AttentionContracts.h"
#include "dialects/IR/RudnnOps.h"
#include "dialects/IR/TargetPolicy.h"

#include "rudnn/errors.h"
#include "rudnn/kv_cache.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <cmath>
#include <map>
#include <sstream>

using namespace rudnn;

namespace {

/// What shapes a call's function besides the sizes.
struct CallForm {
  DType dtype;
  int64_t headDim, valueDim;
  int64_t pageSize; // 0: contiguous
  bool lse, status;
  bool aligned; // q, k, v and the caches promise 16-byte rows
  float scale;
  int splits;
};

std::string signatureOf(const CallForm &f) {
  std::ostringstream key;
  key << "kv_cache:" << dtypeName(f.dtype) << ":d" << f.headDim << ":e"
      << f.valueDim << ":page=" << f.pageSize << ":lse=" << f.lse
      << ":status=" << f.status << ":a16=" << f.aligned
      << ":splits=" << f.splits << std::hexfloat << ":scale=" << f.scale;
  return key.str();
}

/// @kv_cache(q, k, v, k_cache, v_cache, [block_table], cache_lengths) ->
/// (o, k_cache, v_cache, [lse], [status]), every dim but D, E and Z
/// dynamic.
mlir::OwningOpRef<mlir::ModuleOp> cacheModule(mlir::MLIRContext &mlir,
                                              const CallForm &f) {
  mlir::OpBuilder b(&mlir);
  mlir::Location loc = b.getUnknownLoc();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);
  const int64_t dyn = mlir::ShapedType::kDynamic;
  mlir::Type element = mlirElementType(b, f.dtype);
  auto rows = [&](int64_t second, int64_t width) {
    return mlir::RankedTensorType::get({dyn, second, dyn, width}, element);
  };
  const int64_t cacheRows = f.pageSize ? f.pageSize : dyn;
  mlir::Type q = rows(dyn, f.headDim), v = rows(dyn, f.valueDim),
             kCache = rows(cacheRows, f.headDim),
             vCache = rows(cacheRows, f.valueDim),
             lse = mlir::RankedTensorType::get({dyn, dyn, dyn}, b.getF32Type()),
             lengths = mlir::RankedTensorType::get({dyn}, b.getI32Type()),
             table = mlir::RankedTensorType::get({dyn, dyn}, b.getI32Type());
  llvm::SmallVector<mlir::Type> inputs = {q, q, v, kCache, vCache};
  if (f.pageSize)
    inputs.push_back(table);
  inputs.push_back(lengths);
  llvm::SmallVector<mlir::Type> results = {v, kCache, vCache};
  if (f.lse)
    results.push_back(lse);
  if (f.status)
    results.push_back(lengths);

  b.setInsertionPointToEnd(module->getBody());
  auto func = b.create<mlir::func::FuncOp>(loc, "kv_cache",
                                           b.getFunctionType(inputs, results));
  if (f.aligned)
    for (unsigned argument : {0u, 1u, 2u, 3u, 4u})
      func.setArgAttr(argument, mlir::rudnn::RudnnDialect::kAlignAttrName,
                      b.getI64IntegerAttr(16));
  mlir::Block *body = func.addEntryBlock();
  b.setInsertionPointToEnd(body);
  auto arg = [&](unsigned i) { return body->getArgument(i); };
  const mlir::FloatAttr scale = b.getF32FloatAttr(f.scale);
  const mlir::IntegerAttr splits =
      f.splits ? b.getI64IntegerAttr(f.splits) : mlir::IntegerAttr();
  llvm::SmallVector<mlir::Type> opResults = {v, kCache, vCache, lse, lengths};
  mlir::Operation *op;
  if (f.pageSize)
    op = b.create<mlir::rudnn::KvCacheAttentionPagedOp>(
        loc, opResults, arg(0), arg(1), arg(2), arg(3), arg(4), arg(5), arg(6),
        scale, splits, mlir::IntegerAttr(), mlir::IntegerAttr());
  else
    op = b.create<mlir::rudnn::KvCacheAttentionOp>(
        loc, opResults, arg(0), arg(1), arg(2), arg(3), arg(4), arg(5), scale,
        splits, mlir::IntegerAttr(), mlir::IntegerAttr());
  llvm::SmallVector<mlir::Value> returned = {op->getResult(0), op->getResult(1),
                                             op->getResult(2)};
  if (f.lse)
    returned.push_back(op->getResult(3));
  if (f.status)
    returned.push_back(op->getResult(4));
  b.create<mlir::func::ReturnOp>(loc, returned);
  return module;
}

/// Without a status tensor the lengths (and block table) are checked on the
/// host, as kdaDecode checks its slots: each entry's append fits its
/// capacity, its pages are in [0, P), and no page one entry appends to is
/// one another entry reads. Throws InvalidArgument naming the entries.
void checkEntriesOnHost(Context &context, const KvCacheInputs &in,
                        const DimSizes &dims, Stream stream) {
  const int64_t B = dims['B'], T = dims['T'];
  std::vector<int32_t> lengths(static_cast<size_t>(B));
  context.copyToHost(lengths.data(), in.cacheLengths.data,
                     lengths.size() * sizeof(int32_t), stream);
  std::vector<int32_t> table;
  const bool paged = in.blockTable.has_value();
  const int64_t Z = paged ? dims['Z'] : 0, M = paged ? dims['M'] : 0;
  if (paged) {
    table.resize(static_cast<size_t>(B * M));
    context.copyToHost(table.data(), in.blockTable->data,
                       table.size() * sizeof(int32_t), stream);
  }
  context.synchronize(stream);
  const int64_t capacity = paged ? M * Z : dims['S'];
  const std::string hint = " (give 'status' to have such entries refused on "
                           "the device instead)";
  for (int64_t b = 0; b < B; ++b) {
    const int64_t length = lengths[b];
    if (length < 0 || length + T > capacity)
      throw InvalidArgument("'cache_lengths' entry " + std::to_string(b) +
                            " is " + std::to_string(length) + ": appending " +
                            std::to_string(T) + " tokens needs 0 ≤ length ≤ " +
                            std::to_string(capacity - T) + " (the capacity " +
                            std::to_string(capacity) + " less the tokens)" +
                            hint);
  }
  if (!paged)
    return;
  // The entry appending to each page, and each page's readers.
  std::map<int32_t, int64_t> appender;
  for (int64_t b = 0; b < B; ++b) {
    const int64_t used = (lengths[b] + T + Z - 1) / Z;
    for (int64_t slot = 0; slot < used; ++slot) {
      const int32_t page = table[b * M + slot];
      if (page < 0 || page >= dims['P'])
        throw InvalidArgument(
            "'block_table' entry " + std::to_string(b) + " holds page " +
            std::to_string(page) + " at slot " + std::to_string(slot) +
            ", outside the " + std::to_string(dims['P']) + " pages" + hint);
      if (slot >= lengths[b] / Z) {
        auto [it, inserted] = appender.emplace(page, b);
        if (!inserted && it->second != b)
          throw InvalidArgument("'block_table' entries " +
                                std::to_string(it->second) + " and " +
                                std::to_string(b) + " both append to page " +
                                std::to_string(page) + hint);
      }
    }
  }
  for (int64_t b = 0; b < B; ++b) {
    const int64_t used = (lengths[b] + T + Z - 1) / Z;
    for (int64_t slot = 0; slot < used; ++slot) {
      auto it = appender.find(table[b * M + slot]);
      if (it != appender.end() && it->second != b)
        throw InvalidArgument(
            "'block_table' entry " + std::to_string(it->second) +
            " appends to page " + std::to_string(it->first) + ", which entry " +
            std::to_string(b) + " reads: the pages an entry appends to must " +
            "be its own" + hint);
    }
  }
}

} // namespace

void rudnn::kvCacheAttention(Context &context, const KvCacheInputs &in,
                             const KvCacheOutputs &out,
                             const KvCacheOptions &options, Stream stream) {
  // Validation: every fault named before anything runs. The caches are
  // their own results.
  const bool paged = in.blockTable.has_value();
  DimSizes dims = paged
                      ? checkCall(kvCacheAttentionPagedContract(),
                                  {&in.q, &in.k, &in.v, &in.kCache, &in.vCache,
                                   &*in.blockTable, &in.cacheLengths},
                                  {&out.o, &in.kCache, &in.vCache,
                                   viewOf(out.lse), viewOf(out.status)})
                      : checkCall(kvCacheAttentionContract(),
                                  {&in.q, &in.k, &in.v, &in.kCache, &in.vCache,
                                   &in.cacheLengths},
                                  {&out.o, &in.kCache, &in.vCache,
                                   viewOf(out.lse), viewOf(out.status)});
  if (options.splits < 0 || options.splits > mlir::rudnn::kDecodeMaxSplits)
    throw InvalidArgument("'splits' must be 0 (the device chooses) or 1 to " +
                          std::to_string(mlir::rudnn::kDecodeMaxSplits) +
                          ", got " + std::to_string(options.splits));
  const float scale =
      options.scale ? *options.scale
                    : static_cast<float>(1.0 / std::sqrt(double(dims['D'])));
  if (!(scale > 0) || !std::isfinite(scale))
    throw InvalidArgument("'scale' must be positive and finite, got " +
                          std::to_string(scale));
  for (char letter : {'B', 'T', 'S', 'P', 'M'})
    if (dims.has(letter) && dims[letter] > INT32_MAX / 2)
      throw InvalidArgument(std::string("dim ") + letter +
                            " must be below 2^30");
  if (!out.status)
    checkEntriesOnHost(context, in, dims, stream);
  CallForm form{in.q.dtype,
                dims['D'],
                dims['E'],
                paged ? dims['Z'] : 0,
                out.lse.has_value(),
                out.status.has_value(),
                false,
                scale,
                options.splits};
  form.aligned = hasAlignedRows(in.q, 16) && hasAlignedRows(in.k, 16) &&
                 hasAlignedRows(in.v, 16) && hasAlignedRows(in.kCache, 16) &&
                 hasAlignedRows(in.vCache, 16);
  Function function =
      cachedFunction(context, signatureOf(form), [&](mlir::MLIRContext &mlir) {
        return cacheModule(mlir, form);
      });
  // The caches are arguments, and results updated in place.
  function.call(presentViews({&in.q, &in.k, &in.v, &in.kCache, &in.vCache,
                              viewOf(in.blockTable), &in.cacheLengths}),
                presentViews({&out.o, &in.kCache, &in.vCache, viewOf(out.lse),
                              viewOf(out.status)}),
                stream);
}
