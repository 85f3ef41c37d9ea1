//===- ContractChecks.cpp - A call's views against its contract -----------===//

#include "runtime/checks/ContractChecks.h"
#include "runtime/checks/ViewChecks.h"

#include "rudnn/errors.h"

#include <sstream>

using namespace rudnn;

namespace {

std::string shapeText(const std::vector<int64_t> &shape) {
  std::ostringstream out;
  out << "[";
  for (size_t i = 0; i < shape.size(); ++i)
    out << (i ? ", " : "") << shape[i];
  return out.str() + "]";
}

std::string layoutText(std::string_view layout) {
  std::string text = "[";
  for (size_t i = 0; i < layout.size(); ++i)
    text += (i ? ", " : "") + std::string(1, layout[i]);
  return text + "]";
}

bool isFloat(DType dtype) {
  return dtype == DType::F32 || dtype == DType::F16 || dtype == DType::BF16;
}

class CallChecker {
public:
  CallChecker(const OperatorContract &contract,
              const std::vector<const TensorView *> &operands,
              const std::vector<const TensorView *> &results, DimSizes &sizes)
      : contract(contract), operands(operands), results(results), sizes(sizes) {
  }

  void check(const TensorContract &tensor, const TensorView &view) {
    const std::string name(tensor.name);
    if (!view.data)
      throw InvalidArgument("'" + name + "' has no data pointer");
    if (view.shape.size() != tensor.layout.size())
      throw InvalidArgument("'" + name + "' must have rank " +
                            std::to_string(tensor.layout.size()) + " " +
                            layoutText(tensor.layout) + ", got " +
                            shapeText(view.shape));
    bindDims(name, tensor.layout, view);
    checkElements(tensor, view);
    checkPacking(name, tensor.packing, view);
  }

private:
  void bindDims(const std::string &name, std::string_view layout,
                const TensorView &view) {
    bool mismatch = false;
    for (size_t i = 0; i < layout.size(); ++i)
      mismatch |= sizes.bindOrCompare(layout[i], view.shape[i]);
    if (mismatch) {
      std::vector<int64_t> expected = view.shape;
      for (size_t i = 0; i < layout.size(); ++i)
        expected[i] = sizes[layout[i]];
      throw InvalidArgument("'" + name + "' must have shape " +
                            shapeText(expected) + ", got " +
                            shapeText(view.shape));
    }
    for (size_t i = 0; i < layout.size(); ++i) {
      const DimContract *dim = contract.dim(layout[i]);
      const int64_t min = dim ? dim->min : 1;
      const int64_t max = dim ? dim->max : INT64_MAX;
      if (view.shape[i] >= min && view.shape[i] <= max)
        continue;
      if (dim && dim->isStatic)
        throw InvalidArgument(std::string(dim->kind) + " " + layout[i] +
                              " is " + std::to_string(view.shape[i]) +
                              ", expected " + std::to_string(min) + " to " +
                              std::to_string(max));
      throw InvalidArgument("'" + name + "' dim " + std::to_string(i) + " (" +
                            layout[i] + ") must be at least " +
                            std::to_string(min) + ", got " +
                            shapeText(view.shape));
    }
  }

  void checkElements(const TensorContract &tensor, const TensorView &view) {
    const std::string name(tensor.name);
    switch (tensor.element) {
    case ElementRule::Float:
      if (!isFloat(view.dtype))
        throw InvalidArgument("'" + name + "' must be f32, f16 or bf16, got " +
                              dtypeName(view.dtype));
      return;
    case ElementRule::F32:
      if (view.dtype != DType::F32)
        throw InvalidArgument("'" + name + "' must be f32, got " +
                              dtypeName(view.dtype));
      return;
    case ElementRule::I32:
    case ElementRule::Bool: {
      const DType want =
          tensor.element == ElementRule::I32 ? DType::I32 : DType::Bool;
      if (view.dtype != want)
        throw InvalidArgument("'" + name + "' must be " + dtypeName(want) +
                              ", got " + dtypeName(view.dtype));
      return;
    }
    case ElementRule::SameAs:
      if (const TensorView *ref = named(tensor.sameAs);
          ref && ref->dtype != view.dtype)
        throw InvalidArgument("'" + name + "' must be " +
                              dtypeName(ref->dtype) + ", got " +
                              dtypeName(view.dtype));
      return;
    }
  }

  void checkPacking(const std::string &name, Packing packing,
                    const TensorView &view) {
    if (view.strides.size() != view.shape.size())
      throw InvalidArgument(
          "'" + name + "' has " + std::to_string(view.strides.size()) +
          " strides for rank " + std::to_string(view.shape.size()));
    if (packing != Packing::AnyStrides && !view.strides.empty() &&
        view.strides.back() != 1)
      throw InvalidArgument("'" + name +
                            "' must be contiguous in its innermost dim, got "
                            "stride " +
                            std::to_string(view.strides.back()));
    checkedByteRange(name, view);
    if (packing == Packing::Dense &&
        view.strides !=
            TensorView::contiguous(view.data, view.dtype, view.shape).strides)
      throw InvalidArgument("'" + name + "' must be dense row-major, got " +
                            view.describe());
  }

  const TensorView *named(std::string_view name) const {
    if (int i = contract.operandIndex(name); i >= 0)
      return i < static_cast<int>(operands.size()) ? operands[i] : nullptr;
    if (int i = contract.resultIndex(name); i >= 0)
      return i < static_cast<int>(results.size()) ? results[i] : nullptr;
    return nullptr;
  }

  const OperatorContract &contract;
  const std::vector<const TensorView *> &operands, &results;
  DimSizes &sizes;
};

} // namespace

int64_t DimSizes::operator[](char letter) const {
  if (!has(letter))
    throw Error(Status::Internal,
                std::string("no size bound to dim ") + letter);
  return sizes[static_cast<unsigned char>(letter) % kLetters];
}

namespace {

/// Binds `dim` when it counts pieces of a known dim and is unbound; whether
/// it did.
bool bindPieces(const DimContract &dim, DimSizes &dims) {
  std::optional<int64_t> pieces = dim.piecesFrom(dims);
  if (!pieces || dims.has(dim.letter))
    return false;
  dims.bind(dim.letter, *pieces);
  return true;
}

} // namespace

void rudnn::deriveDims(const OperatorContract &contract, DimSizes &dims) {
  for (bool changed = true; changed;) {
    changed = false;
    for (const DimContract &dim : contract.dims) {
      if (!dims.has(dim.letter) && dim.min == dim.max) {
        dims.bind(dim.letter, dim.min);
        changed = true;
      }
      changed |= bindPieces(dim, dims);
      if (!dim.timesOf || !contract.dim(dim.timesOf))
        continue;
      if (!dims.has(dim.letter) && dims.has(dim.timesOf)) {
        dims.bind(dim.letter, dim.times * dims[dim.timesOf] + dim.plus);
        changed = true;
      } else if (dims.has(dim.letter) && !dims.has(dim.timesOf) &&
                 dim.times > 0 && dims[dim.letter] >= dim.plus &&
                 (dims[dim.letter] - dim.plus) % dim.times == 0) {
        dims.bind(dim.timesOf, (dims[dim.letter] - dim.plus) / dim.times);
        changed = true;
      }
    }
  }
}

DimSizes rudnn::checkCall(const OperatorContract &contract,
                          const std::vector<const TensorView *> &operands,
                          const std::vector<const TensorView *> &results,
                          DimSizes bound) {
  if (operands.size() != contract.operands.size() ||
      results.size() != contract.results.size())
    throw Error(Status::Internal, std::string(contract.op) +
                                      ": the call does not match the "
                                      "contract's operand and result lists");
  CallChecker checker(contract, operands, results, bound);
  for (size_t i = 0; i < operands.size(); ++i) {
    const TensorContract &tensor = contract.operands[i];
    if (!operands[i]) {
      if (!tensor.optional)
        throw InvalidArgument("'" + std::string(tensor.name) + "' is missing");
      continue;
    }
    checker.check(tensor, *operands[i]);
    // Known as soon as its base is, so a tensor laid out with it is
    // checked against the whole expected shape.
    for (const DimContract &dim : contract.dims)
      bindPieces(dim, bound);
  }
  for (size_t i = 0; i < results.size(); ++i)
    if (results[i])
      checker.check(contract.results[i], *results[i]);
  for (const DimContract &dim : contract.dims) {
    const DimContract *divisor =
        dim.multipleOf ? contract.dim(dim.multipleOf) : nullptr;
    if (divisor && bound.has(dim.letter) && bound.has(divisor->letter) &&
        bound[divisor->letter] > 0 &&
        bound[dim.letter] % bound[divisor->letter] != 0)
      throw InvalidArgument(std::string(dim.kind) + " " + dim.letter + " = " +
                            std::to_string(bound[dim.letter]) +
                            " must be a multiple of the " +
                            std::string(divisor->kind) + " " + divisor->letter +
                            " = " + std::to_string(bound[divisor->letter]));
    const DimContract *base = dim.timesOf ? contract.dim(dim.timesOf) : nullptr;
    if (base && bound.has(dim.letter) && bound.has(base->letter) &&
        bound[dim.letter] != dim.times * bound[base->letter] + dim.plus)
      throw InvalidArgument(std::string(dim.kind) + " " + dim.letter + " = " +
                            std::to_string(bound[dim.letter]) + " must be " +
                            std::to_string(dim.times) + " × the " +
                            std::string(base->kind) + " " + base->letter +
                            " = " + std::to_string(bound[base->letter]) +
                            (dim.plus ? " + " + std::to_string(dim.plus) : ""));
    const std::optional<int64_t> pieces = dim.piecesFrom(bound);
    if (pieces && bound.has(dim.letter) && bound[dim.letter] != *pieces)
      throw InvalidArgument(
          std::string(dim.kind) + " " + dim.letter + " = " +
          std::to_string(bound[dim.letter]) + " must be " +
          std::to_string(*pieces) + " = ceil(" + dim.piecesOf + " = " +
          std::to_string(bound[dim.piecesOf]) + " / " +
          std::string(dim.perAttribute) + " " + std::to_string(dim.per) + ")" +
          (dim.plusOf ? std::string(" + ") + dim.plusOf + " = " +
                            std::to_string(bound[dim.plusOf])
                      : ""));
  }

  std::vector<NamedView> inputs, outputs;
  std::vector<std::pair<std::string_view, std::string_view>> inPlace;
  for (size_t i = 0; i < operands.size(); ++i)
    if (operands[i])
      inputs.push_back({contract.operands[i].name, operands[i]});
  for (size_t i = 0; i < results.size(); ++i) {
    if (!results[i])
      continue;
    const TensorContract &tensor = contract.results[i];
    outputs.push_back({tensor.name, results[i]});
    if (!tensor.inPlaceOf.empty())
      inPlace.emplace_back(tensor.name, tensor.inPlaceOf);
    if (!tensor.updates.empty()) {
      const int k = contract.operandIndex(tensor.updates);
      if (k >= 0 && operands[k] && !sameView(*results[i], *operands[k]))
        throw InvalidArgument("'" + std::string(tensor.name) +
                              "' is updated in place: pass the view of '" +
                              std::string(tensor.updates) + "' for it, got " +
                              results[i]->describe() + " and " +
                              operands[k]->describe());
      inPlace.emplace_back(tensor.name, tensor.updates);
    }
  }
  checkViewAliasing(inputs, outputs, inPlace);
  return bound;
}

void rudnn::checkIndexValues(const OperatorContract &contract,
                             const std::vector<const TensorView *> &operands,
                             const DimSizes &dims) {
  for (size_t i = 0; i < operands.size() && i < contract.operands.size(); ++i) {
    const TensorContract &tensor = contract.operands[i];
    const TensorView *view = operands[i];
    const bool offsets = tensor.sample == Sample::Offsets,
               lengths = tensor.sample == Sample::Lengths;
    if ((!offsets && !lengths) || !view || view->dtype != DType::I32 ||
        view->shape.size() != 1 || !dims.has(tensor.counts))
      continue;
    const int64_t count = view->shape[0], end = dims[tensor.counts];
    const int64_t stride = view->strides.empty() ? 1 : view->strides[0];
    const auto *values = static_cast<const int32_t *>(view->data);
    if (lengths) {
      for (int64_t n = 0; n < count; ++n)
        if (values[n * stride] < 0 || values[n * stride] > end)
          throw InvalidArgument(
              "'" + std::string(tensor.name) + "' entry " + std::to_string(n) +
              " is " + std::to_string(values[n * stride]) + ", outside 0 to " +
              tensor.counts + " = " + std::to_string(end));
      continue;
    }
    auto refuse = [&](int64_t entry, const std::string &why) {
      throw InvalidArgument(
          "'" + std::string(tensor.name) + "' must start at 0, never " +
          "decrease and end at " + tensor.counts + " = " + std::to_string(end) +
          ": entry " + std::to_string(entry) + " is " +
          std::to_string(values[entry * stride]) + ", " + why);
    };
    if (count == 0)
      continue;
    if (values[0] != 0)
      refuse(0, "not 0");
    for (int64_t n = 1; n < count; ++n) {
      const int32_t value = values[n * stride];
      if (value < values[(n - 1) * stride])
        refuse(n, "less than entry " + std::to_string(n - 1));
      if (value > end)
        refuse(n, "past " + std::string(1, tensor.counts));
    }
    if (values[(count - 1) * stride] != end)
      refuse(count - 1, "not " + std::string(1, tensor.counts) +
                            ": the tokens after it belong to no sequence");
  }
}
