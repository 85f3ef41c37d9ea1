//===- ElementTypes.h - MLIR element types as rudnn's DType -----*- C++ -*-===//

#ifndef RUDNN_DIALECTS_IR_ELEMENTTYPES_H
#define RUDNN_DIALECTS_IR_ELEMENTTYPES_H

#include "rudnn/types.h"

#include "mlir/IR/Types.h"

#include <optional>

namespace mlir::rudnn {

/// The DType of an element type rudnn handles (f32, f16, bf16, i32, i1);
/// none for any other.
inline std::optional<::rudnn::DType> dtypeOf(Type type) {
  using ::rudnn::DType;
  if (type.isF32())
    return DType::F32;
  if (type.isF16())
    return DType::F16;
  if (type.isBF16())
    return DType::BF16;
  if (type.isInteger(32))
    return DType::I32;
  if (type.isInteger(1))
    return DType::Bool;
  return std::nullopt;
}

} // namespace mlir::rudnn

#endif // RUDNN_DIALECTS_IR_ELEMENTTYPES_H
