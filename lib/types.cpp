//===- types.cpp - Element types and tensor views -------------------------===//

#include "rudnn/types.h"
#include "rudnn/errors.h"

#include <sstream>

using namespace rudnn;

size_t rudnn::dtypeSize(DType dtype) {
  switch (dtype) {
  case DType::F32:
  case DType::I32:
    return 4;
  case DType::F16:
  case DType::BF16:
    return 2;
  case DType::Bool:
    return 1;
  }
  throw InvalidArgument("unknown dtype " +
                        std::to_string(static_cast<int>(dtype)));
}

const char *rudnn::dtypeName(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return "f32";
  case DType::F16:
    return "f16";
  case DType::BF16:
    return "bf16";
  case DType::I32:
    return "i32";
  case DType::Bool:
    return "bool";
  }
  return "unknown";
}

TensorView TensorView::contiguous(void *data, DType dtype,
                                  std::vector<int64_t> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;)
    strides[i - 1] = strides[i] * shape[i];
  return {data, dtype, std::move(shape), std::move(strides)};
}

int64_t TensorView::numel() const {
  int64_t count = 1;
  for (int64_t dim : shape)
    count *= dim;
  return count;
}

std::string TensorView::describe() const {
  std::ostringstream out;
  out << dtypeName(dtype) << "[";
  for (size_t i = 0; i < shape.size(); ++i)
    out << (i ? ", " : "") << shape[i];
  out << "] strides [";
  for (size_t i = 0; i < strides.size(); ++i)
    out << (i ? ", " : "") << strides[i];
  out << "]";
  return out.str();
}
