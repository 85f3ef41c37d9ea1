//===- RudnnInterfaces.cpp - The extension points of rudnn ----------------===//

#include "dialects/IR/RudnnInterfaces.h"

using namespace mlir;
using namespace mlir::rudnn;

#include "dialects/IR/RudnnInterfaces.cpp.inc"

LogicalResult mlir::rudnn::verifyContract(
    Operation *op, const ::rudnn::OperatorContract &contract,
    llvm::function_ref<Value(unsigned)> operand,
    llvm::function_ref<Value(unsigned)> result, ShapeChecker &shapes) {
  auto valueNamed = [&](std::string_view name) -> Value {
    if (int i = contract.operandIndex(name); i >= 0)
      return operand(i);
    if (int i = contract.resultIndex(name); i >= 0)
      return result(i);
    return {};
  };
  auto check = [&](const ::rudnn::TensorContract &tensor,
                   Value value) -> LogicalResult {
    StringRef name(tensor.name.data(), tensor.name.size());
    if (!value)
      return tensor.optional ? success()
                             : op->emitOpError() << "requires '" << name << "'";
    if (failed(shapes.check(
            name, value,
            StringRef(tensor.layout.data(), tensor.layout.size()))))
      return failure();
    switch (tensor.element) {
    case ::rudnn::ElementRule::Float:
      return checkFloatElementType(op, name, value);
    case ::rudnn::ElementRule::F32:
      return checkF32ElementType(op, name, value);
    case ::rudnn::ElementRule::I32:
      return checkIntegerElementType(op, name, value, 32);
    case ::rudnn::ElementRule::Bool:
      return checkIntegerElementType(op, name, value, 1);
    case ::rudnn::ElementRule::SameAs: {
      Value ref = valueNamed(tensor.sameAs);
      if (!ref)
        return success(); // an absent optional operand fixes nothing
      return checkSameElementType(
          op, name, value,
          StringRef(tensor.sameAs.data(), tensor.sameAs.size()), ref);
    }
    }
    return success();
  };
  // The dims' own rules, once the operands fixed them and again once the
  // results did (a dim only they fix, as an LSTM's states).
  auto checkDims = [&]() -> LogicalResult {
    for (const ::rudnn::DimContract &dim : contract.dims) {
      std::optional<int64_t> size = shapes.lookup(dim.letter);
      if (size && (*size < dim.min || *size > dim.max))
        return op->emitOpError()
               << StringRef(dim.kind.data(), dim.kind.size()) << " "
               << dim.letter << " is " << *size << ", expected " << dim.min
               << " to " << dim.max;
      const ::rudnn::DimContract *divisor =
          dim.multipleOf ? contract.dim(dim.multipleOf) : nullptr;
      std::optional<int64_t> parts =
          divisor ? shapes.lookup(divisor->letter) : std::nullopt;
      if (size && parts && *parts > 0 && *size % *parts != 0)
        return op->emitOpError()
               << StringRef(dim.kind.data(), dim.kind.size()) << " "
               << dim.letter << " = " << *size << " must be a multiple of the "
               << StringRef(divisor->kind.data(), divisor->kind.size()) << " "
               << divisor->letter << " = " << *parts;
      const ::rudnn::DimContract *base =
          dim.timesOf ? contract.dim(dim.timesOf) : nullptr;
      std::optional<int64_t> baseSize =
          base ? shapes.lookup(base->letter) : std::nullopt;
      if (size && baseSize && *size != dim.times * *baseSize + dim.plus)
        return op->emitOpError()
               << StringRef(dim.kind.data(), dim.kind.size()) << " "
               << dim.letter << " = " << *size << " must be " << dim.times
               << " × the " << StringRef(base->kind.data(), base->kind.size())
               << " " << base->letter << " = " << *baseSize
               << (dim.plus ? " + " + std::to_string(dim.plus) : "");
    }
    return success();
  };
  for (auto [index, tensor] : llvm::enumerate(contract.operands))
    if (failed(check(tensor, operand(index))))
      return failure();
  if (failed(checkDims()))
    return failure();
  for (auto [index, tensor] : llvm::enumerate(contract.results))
    if (failed(check(tensor, result(index))))
      return failure();
  return checkDims();
}

LogicalResult mlir::rudnn::verifyOperatorContract(OperatorOpInterface op,
                                                  ShapeChecker &shapes) {
  return verifyContract(
      op, op.getOperatorContract(),
      [&](unsigned i) { return op.getContractOperand(i); },
      [&](unsigned i) { return op.getContractResult(i); }, shapes);
}

Operation *mlir::rudnn::buildWithOperandGroups(
    OpBuilder &builder, Location loc, StringRef name, ArrayRef<Value> operands,
    ArrayRef<int32_t> groups, ArrayRef<Type> results,
    ArrayRef<NamedAttribute> attributes) {
  OperationState state(loc, name);
  for (Value operand : operands)
    if (operand)
      state.addOperands(operand);
  state.addTypes(results);
  state.addAttributes(attributes);
  if (state.name.hasTrait<OpTrait::AttrSizedOperandSegments>())
    state.addAttribute("operandSegmentSizes",
                       builder.getDenseI32ArrayAttr(groups));
  return builder.create(state);
}

Operation *mlir::rudnn::buildByContractGroups(
    OpBuilder &builder, Location loc, StringRef name, ArrayRef<Value> operands,
    ArrayRef<Type> results, ArrayRef<NamedAttribute> attributes) {
  llvm::SmallVector<int32_t> groups;
  for (Value operand : operands)
    groups.push_back(operand ? 1 : 0);
  return buildWithOperandGroups(builder, loc, name, operands, groups, results,
                                attributes);
}
