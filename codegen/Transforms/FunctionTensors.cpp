//===- FunctionTensors.cpp - Names and layouts of a function's tensors ----===//

#include "codegen/Transforms/FunctionTensors.h"
#include "dialects/IR/RudnnOps.h"

#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::rudnn;

Value mlir::rudnn::throughCasts(Value value) {
  while (auto cast = value.getDefiningOp<tensor::CastOp>())
    value = cast.getSource();
  return value;
}

namespace {

struct ContractEntry {
  const ::rudnn::TensorContract *tensor = nullptr;
  OperatorOpInterface op;
};

/// The argument of `func` that `entry`'s operand `operand` is, if that
/// operand is one (seen through casts).
BlockArgument argumentFor(func::FuncOp func, ContractEntry entry,
                          std::string_view operand) {
  const int k =
      operand.empty() ? -1 : entry.op.getOperatorContract().operandIndex(operand);
  Value value = k < 0 ? Value() : entry.op.getContractOperand(k);
  auto argument = dyn_cast_or_null<BlockArgument>(
      value ? throughCasts(value) : value); // absent when optional
  return argument && argument.getOwner()->getParentOp() == func
             ? argument
             : BlockArgument();
}

} // namespace

void mlir::rudnn::nameFunctionTensors(func::FuncOp func) {
  if (func.isExternal())
    return;
  llvm::DenseMap<Value, ContractEntry> operands, results;
  func.walk([&](OperatorOpInterface op) {
    const ::rudnn::OperatorContract &contract = op.getOperatorContract();
    for (unsigned k = 0; k < contract.operands.size(); ++k)
      if (Value value = op.getContractOperand(k))
        operands.try_emplace(value, ContractEntry{&contract.operands[k], op});
    for (unsigned k = 0; k < contract.results.size(); ++k)
      if (Value value = op.getContractResult(k))
        results.try_emplace(value, ContractEntry{&contract.results[k], op});
  });
  MLIRContext *context = func.getContext();
  llvm::StringSet<> taken;
  auto unique = [&](std::string name) {
    std::string candidate = name;
    for (int i = 1; !taken.insert(candidate).second; ++i)
      candidate = name + "_" + std::to_string(i);
    return candidate;
  };
  // Given names first: they are kept as they are.
  for (unsigned i = 0; i < func.getNumArguments(); ++i)
    if (auto name =
            func.getArgAttrOfType<StringAttr>(i, RudnnDialect::kNameAttrName))
      taken.insert(name.getValue());
  for (unsigned i = 0; i < func.getNumResults(); ++i)
    if (auto name = func.getResultAttrOfType<StringAttr>(
            i, RudnnDialect::kNameAttrName))
      taken.insert(name.getValue());

  for (unsigned i = 0; i < func.getNumArguments(); ++i) {
    auto it = operands.find(func.getArgument(i));
    const ::rudnn::TensorContract *tensor =
        it == operands.end() ? nullptr : it->second.tensor;
    if (!func.getArgAttr(i, RudnnDialect::kNameAttrName))
      func.setArgAttr(
          i, RudnnDialect::kNameAttrName,
          StringAttr::get(context, unique(tensor ? std::string(tensor->name)
                                                 : "arg" + std::to_string(i))));
    if (tensor && !func.getArgAttr(i, RudnnDialect::kLayoutAttrName))
      func.setArgAttr(i, RudnnDialect::kLayoutAttrName,
                      StringAttr::get(context, tensor->layout));
  }
  auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
  for (unsigned i = 0; i < func.getNumResults(); ++i) {
    auto it = results.find(throughCasts(ret.getOperand(i)));
    ContractEntry *entry = it == results.end() ? nullptr : &it->second;
    // An operand updated in place is returned under its own name.
    if (BlockArgument updated =
            entry ? argumentFor(func, *entry, entry->tensor->updates)
                  : BlockArgument();
        updated && !func.getResultAttr(i, RudnnDialect::kNameAttrName))
      func.setResultAttr(
          i, RudnnDialect::kNameAttrName,
          func.getArgAttr(updated.getArgNumber(), RudnnDialect::kNameAttrName));
    if (!func.getResultAttr(i, RudnnDialect::kNameAttrName))
      func.setResultAttr(
          i, RudnnDialect::kNameAttrName,
          StringAttr::get(context,
                          unique(entry ? std::string(entry->tensor->name)
                                       : "result" + std::to_string(i))));
    if (!entry)
      continue;
    if (!func.getResultAttr(i, RudnnDialect::kLayoutAttrName))
      func.setResultAttr(i, RudnnDialect::kLayoutAttrName,
                         StringAttr::get(context, entry->tensor->layout));
    // A result the contract lets be written over one of its operands (or
    // updates in place), when that operand is an argument.
    if (func.getResultAttr(i, RudnnDialect::kAliasesAttrName))
      continue;
    if (BlockArgument over = argumentFor(func, *entry,
                                         entry->tensor->inPlaceOf.empty()
                                             ? entry->tensor->updates
                                             : entry->tensor->inPlaceOf))
      func.setResultAttr(
          i, RudnnDialect::kAliasesAttrName,
          func.getArgAttr(over.getArgNumber(), RudnnDialect::kNameAttrName));
  }
}
