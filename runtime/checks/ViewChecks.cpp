//===- ViewChecks.cpp - Validating tensor views of any operator -----------===//

#include "runtime/checks/ViewChecks.h"

#include "rudnn/errors.h"

#include <algorithm>
#include <sstream>

using namespace rudnn;

namespace {

std::string hex(uintptr_t address) {
  std::ostringstream out;
  out << "0x" << std::hex << address;
  return out.str();
}

std::string rangeText(const ByteRange &range) {
  return "[" + hex(range.first) + ", " + hex(range.last) + "]";
}

[[noreturn]] void overflow(std::string_view name, const TensorView &view,
                           const std::string &what) {
  throw InvalidArgument("'" + std::string(name) + "' " + what + ", got " +
                        view.describe());
}

bool meets(const ByteRange &a, const ByteRange &b) {
  return !a.empty && !b.empty && a.first <= b.last && b.first <= a.last;
}

} // namespace

ByteRange rudnn::checkedByteRange(std::string_view nameView,
                                  const TensorView &view) {
  // Named only on a fault: the common path allocates nothing.
  auto name = [&] { return std::string(nameView); };
  if (view.strides.size() != view.shape.size())
    throw InvalidArgument(
        "'" + name() + "' has " + std::to_string(view.strides.size()) +
        " strides for rank " + std::to_string(view.shape.size()));
  bool empty = false;
  for (size_t i = 0; i < view.shape.size(); ++i) {
    if (view.shape[i] < 0)
      throw InvalidArgument("'" + name() + "' has a negative dim, got " +
                            view.describe());
    // Kernels index forward from the data pointer.
    if (view.strides[i] < 0)
      throw InvalidArgument("'" + name() + "' has a negative stride, got " +
                            view.describe());
    empty = empty || view.shape[i] == 0;
  }
  if (empty)
    return {};
  // Kernels load whole elements: a pointer between two faults on a GPU.
  const auto elementBytes = static_cast<uintptr_t>(dtypeSize(view.dtype));
  if (reinterpret_cast<uintptr_t>(view.data) % elementBytes != 0)
    throw InvalidArgument("'" + name() + "' has a data pointer " +
                          hex(reinterpret_cast<uintptr_t>(view.data)) +
                          " that is not a multiple of its " +
                          std::to_string(elementBytes) +
                          "-byte elements: " + view.describe());
  int64_t largest = 0;
  for (size_t i = 0; i < view.shape.size(); ++i) {
    int64_t term;
    if (__builtin_mul_overflow(view.shape[i] - 1, view.strides[i], &term) ||
        __builtin_add_overflow(largest, term, &largest))
      overflow(nameView, view,
               "has a largest element offset, the sum of (dim - 1) * "
               "stride, that overflows int64");
  }
  int64_t elements, bytes;
  if (__builtin_add_overflow(largest, 1, &elements) ||
      __builtin_mul_overflow(
          elements, static_cast<int64_t>(dtypeSize(view.dtype)), &bytes))
    overflow(nameView, view, "has an extent in bytes that overflows int64");
  ByteRange range;
  range.empty = false;
  range.first = reinterpret_cast<uintptr_t>(view.data);
  if (__builtin_add_overflow(range.first, static_cast<uintptr_t>(bytes - 1),
                             &range.last))
    overflow(nameView, view,
             "runs past the end of the address space (" +
                 std::to_string(bytes) + " bytes from " + hex(range.first) +
                 ")");
  return range;
}

void rudnn::checkNoSelfOverlap(std::string_view nameView,
                               const TensorView &view) {
  auto name = [&] { return std::string(nameView); };
  // Also rules out overflow in the sums below.
  if (checkedByteRange(nameView, view).empty)
    return;
  std::vector<std::pair<int64_t, size_t>> dims; // (stride, dim index)
  for (size_t i = 0; i < view.shape.size(); ++i)
    if (view.shape[i] > 1)
      dims.push_back({view.strides[i], i});
  std::sort(dims.begin(), dims.end());
  int64_t span = 1; // elements the dims inside the current one reach
  for (auto [stride, i] : dims) {
    if (stride < span)
      throw InvalidArgument(
          "'" + name() + "' overlaps itself: dim " + std::to_string(i) +
          " (size " + std::to_string(view.shape[i]) + ", stride " +
          std::to_string(stride) + ") steps inside the " +
          std::to_string(span) +
          " elements its inner dims span; an output needs distinct elements, "
          "got " +
          view.describe());
    span += (view.shape[i] - 1) * stride;
  }
}

bool rudnn::sameView(const TensorView &a, const TensorView &b) {
  return a.data == b.data && a.dtype == b.dtype && a.shape == b.shape &&
         a.strides == b.strides;
}

void rudnn::checkViewAliasing(
    const std::vector<NamedView> &inputs, const std::vector<NamedView> &outputs,
    const std::vector<std::pair<std::string_view, std::string_view>> &inPlace) {
  std::vector<ByteRange> in, out;
  for (const NamedView &input : inputs)
    in.push_back(checkedByteRange(input.name, *input.view));
  for (const NamedView &output : outputs) {
    checkNoSelfOverlap(output.name, *output.view);
    out.push_back(checkedByteRange(output.name, *output.view));
  }
  auto overlapError = [&](const NamedView &a, const ByteRange &ra,
                          const NamedView &b, const ByteRange &rb,
                          const std::string &why) {
    return InvalidArgument("'" + std::string(a.name) + "' overlaps '" +
                           std::string(b.name) + "': bytes " + rangeText(ra) +
                           " and " + rangeText(rb) + "; " + why);
  };
  for (size_t i = 0; i < outputs.size(); ++i) {
    for (size_t j = 0; j < i; ++j)
      if (meets(out[i], out[j]))
        throw overlapError(outputs[i], out[i], outputs[j], out[j],
                           "outputs may not share memory");
    for (size_t j = 0; j < inputs.size(); ++j) {
      if (!meets(out[i], in[j]))
        continue;
      bool pair = std::find(inPlace.begin(), inPlace.end(),
                            std::pair{outputs[i].name, inputs[j].name}) !=
                  inPlace.end();
      if (pair && sameView(*outputs[i].view, *inputs[j].view))
        continue;
      throw overlapError(outputs[i], out[i], inputs[j], in[j],
                         pair ? "in place, it must be exactly the same view "
                                "(pointer, dtype, shape and strides)"
                              : "an output may not share memory with an "
                                "input");
    }
  }
}

namespace {
/// Why `view` breaks the alignment promise `bytes`, or empty.
std::string misalignment(const TensorView &view, int64_t bytes) {
  if (reinterpret_cast<uintptr_t>(view.data) % static_cast<uintptr_t>(bytes))
    return "its data pointer " + hex(reinterpret_cast<uintptr_t>(view.data)) +
           " is not a multiple of " + std::to_string(bytes);
  const int64_t element = static_cast<int64_t>(dtypeSize(view.dtype));
  const size_t rank = view.shape.size();
  if (rank && view.strides.size() == rank && view.strides.back() != 1 &&
      view.shape.back() != 1)
    return "its innermost stride is " + std::to_string(view.strides.back()) +
           ", not 1";
  // Modulo `bytes` first: a stride past int64 in bytes (refused by the
  // contract checks, which may come later) must not overflow here.
  for (size_t d = 0; d + 1 < rank && d < view.strides.size(); ++d)
    if (view.shape[d] != 1 && ((view.strides[d] % bytes) * element) % bytes)
      return "its stride along dim " + std::to_string(d) + " (" +
             std::to_string(view.strides[d]) + " elements of " +
             std::to_string(element) + " bytes) is not a multiple of " +
             std::to_string(bytes) + " bytes";
  return {};
}
} // namespace

bool rudnn::hasAlignedRows(const TensorView &view, int64_t bytes) {
  return misalignment(view, bytes).empty();
}

void rudnn::checkAlignedRows(std::string_view name, const TensorView &view,
                             int64_t bytes) {
  const std::string why = misalignment(view, bytes);
  if (!why.empty())
    throw InvalidArgument(
        "'" + std::string(name) + "' promises " + std::to_string(bytes) +
        "-byte aligned rows (rudnn.align = " + std::to_string(bytes) +
        "), but " + why + ": " + view.describe());
}

void rudnn::checkDeclared(const std::vector<TensorInfo> &declared,
                          const std::vector<TensorView> &views,
                          const char *what) {
  if (views.size() != declared.size())
    throw InvalidArgument(std::string("expected ") +
                          std::to_string(declared.size()) + " " + what +
                          ", got " + std::to_string(views.size()));
  for (size_t i = 0; i < views.size(); ++i) {
    const TensorInfo &info = declared[i];
    const TensorView &view = views[i];
    if (view.dtype != info.dtype)
      throw InvalidArgument("'" + info.name + "' must be " +
                            dtypeName(info.dtype) + ", got " +
                            dtypeName(view.dtype));
    if (view.shape.size() != info.shape.size())
      throw InvalidArgument("'" + info.name + "' must have rank " +
                            std::to_string(info.shape.size()) + ", got " +
                            view.describe());
    for (size_t d = 0; d < view.shape.size(); ++d)
      if (info.shape[d] >= 0 && view.shape[d] != info.shape[d])
        throw InvalidArgument("'" + info.name + "' dim " + std::to_string(d) +
                              " must be " + std::to_string(info.shape[d]) +
                              ", got " + view.describe());
    if (info.align)
      checkAlignedRows(info.name, view, info.align);
  }
}
