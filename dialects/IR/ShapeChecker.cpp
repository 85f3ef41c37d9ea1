//===- ShapeChecker.cpp - Named-dimension checks for verifiers ------------===//

#include "dialects/IR/ShapeChecker.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using namespace mlir::rudnn;

/// "BTHK" -> "[B, T, H, K]".
static std::string formatLayout(StringRef layout) {
  std::string text = "[";
  for (auto [i, dim] : llvm::enumerate(layout)) {
    if (i)
      text += ", ";
    text += dim;
  }
  return text + "]";
}

LogicalResult ShapeChecker::check(StringRef name, Value value,
                                  StringRef layout) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return op->emitOpError()
           << "'" << name << "' must be a ranked tensor "
           << formatLayout(layout) << ", got " << value.getType();
  if (type.getRank() != static_cast<int64_t>(layout.size()))
    return op->emitOpError()
           << "'" << name << "' must have rank " << layout.size() << " "
           << formatLayout(layout) << ", got rank " << type.getRank();

  for (auto [index, dim] : llvm::enumerate(layout)) {
    int64_t size = type.getDimSize(index);
    if (ShapedType::isDynamic(size)) {
      if (staticDims.contains(dim))
        return op->emitOpError() << "'" << name << "' dim " << index << " ("
                                 << dim << ") must be static";
      continue;
    }
    auto [it, inserted] = bound.try_emplace(dim, Binding{size, name});
    if (!inserted && it->second.size != size)
      return op->emitOpError()
             << "'" << name << "' dim " << index << " (" << dim << ") is "
             << size << ", expected " << it->second.size << " as in '"
             << it->second.operand << "'";
  }
  return success();
}

std::optional<int64_t> ShapeChecker::lookup(char dim) const {
  auto it = bound.find(dim);
  if (it == bound.end())
    return std::nullopt;
  return it->second.size;
}

static Type elementTypeOf(Value value) {
  return cast<ShapedType>(value.getType()).getElementType();
}

LogicalResult mlir::rudnn::checkFloatElementType(Operation *op, StringRef name,
                                                 Value value) {
  Type type = elementTypeOf(value);
  if (type.isF32() || type.isF16() || type.isBF16())
    return success();
  return op->emitOpError() << "'" << name
                           << "' element type must be f32, f16 or bf16, got "
                           << type;
}

LogicalResult mlir::rudnn::checkF32ElementType(Operation *op, StringRef name,
                                               Value value) {
  Type type = elementTypeOf(value);
  if (type.isF32())
    return success();
  return op->emitOpError() << "'" << name << "' element type must be f32, got "
                           << type;
}

LogicalResult mlir::rudnn::checkIntegerElementType(Operation *op,
                                                   StringRef name, Value value,
                                                   unsigned width) {
  Type type = elementTypeOf(value);
  if (type.isSignlessInteger(width))
    return success();
  return op->emitOpError() << "'" << name << "' element type must be i" << width
                           << ", got " << type;
}

LogicalResult mlir::rudnn::checkSameElementType(Operation *op, StringRef name,
                                                Value value, StringRef refName,
                                                Value ref) {
  Type type = elementTypeOf(value);
  Type expected = elementTypeOf(ref);
  if (type == expected)
    return success();
  return op->emitOpError() << "'" << name << "' element type must be "
                           << expected << " as '" << refName << "', got "
                           << type;
}
