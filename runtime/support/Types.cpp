//===- types.cpp - Element types and tensor views -------------------------===//

#include "rudnn/types.h"
#include "rudnn/errors.h"

#include <sstream>

using namespace rudnn;

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
