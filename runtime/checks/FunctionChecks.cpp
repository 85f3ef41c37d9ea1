//===- FunctionChecks.cpp - What a function's calls are checked against ---===//

#include "runtime/checks/FunctionChecks.h"
#include "runtime/checks/ContractChecks.h"
#include "runtime/checks/ViewChecks.h"

#include "rudnn/errors.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>

using namespace rudnn;
using namespace rudnn::runtime;

namespace {

/// Operator `op`'s operand and result views, null where none binds.
void operatorViews(const OperatorCheck &op,
                   const std::vector<TensorView> &arguments,
                   const std::vector<TensorView> &results,
                   std::vector<const TensorView *> &operands,
                   std::vector<const TensorView *> &outputs) {
  operands.clear();
  outputs.clear();
  for (int i : op.operandArgument)
    operands.push_back(i < 0 ? nullptr : &arguments[i]);
  for (int i : op.resultOf)
    outputs.push_back(i < 0 ? nullptr : &results[i]);
}

} // namespace

void FunctionChecks::checkCall(const std::vector<TensorView> &argumentViews,
                               const std::vector<TensorView> &resultViews,
                               bool valuesOnHost) const {
  checkDeclared(arguments, argumentViews, "arguments");
  checkDeclared(results, resultViews, "results");
  // Kept per thread, so a repeated call allocates none.
  thread_local std::vector<const TensorView *> operands, outputs;
  for (const OperatorCheck &op : operators) {
    operatorViews(op, argumentViews, resultViews, operands, outputs);
    const DimSizes dims = rudnn::checkCall(op.contract, operands, outputs);
    if (valuesOnHost)
      checkIndexValues(op.contract, operands, dims);
  }
  if (operators.size() <= 1)
    return;
  std::vector<NamedView> inputs, written;
  for (size_t i = 0; i < argumentViews.size(); ++i)
    inputs.push_back({arguments[i].name, &argumentViews[i]});
  for (size_t i = 0; i < resultViews.size(); ++i)
    written.push_back({results[i].name, &resultViews[i]});
  std::vector<std::pair<std::string_view, std::string_view>> pairs;
  for (const auto &[result, argument] : inPlace)
    pairs.emplace_back(result, argument);
  checkViewAliasing(inputs, written, pairs);
}

void FunctionChecks::checkParamLetters(
    const Plan &plan, const std::vector<int64_t> &params,
    const std::vector<TensorView> &argumentViews,
    const std::vector<TensorView> &resultViews) const {
  std::vector<const TensorView *> operands, outputs;
  auto check = [&](const std::vector<TensorContract> &tensors,
                   const std::vector<const TensorView *> &views) {
    for (size_t p = 0; p < plan.params.size(); ++p) {
      if (plan.params[p].size() != 1)
        continue;
      const char letter = plan.params[p][0];
      for (size_t k = 0; k < tensors.size(); ++k) {
        if (!views[k])
          continue;
        const std::string_view layout = tensors[k].layout;
        for (size_t d = 0; d < layout.size(); ++d)
          if (layout[d] == letter && views[k]->shape[d] != params[p])
            throw InvalidArgument("'" + std::string(tensors[k].name) +
                                  "' dim " + std::to_string(d) + " (" + letter +
                                  ") must be " + std::to_string(params[p]) +
                                  ", got " + views[k]->describe());
      }
    }
  };
  for (const OperatorCheck &op : operators) {
    operatorViews(op, argumentViews, resultViews, operands, outputs);
    check(op.contract.operands, operands);
    check(op.contract.results, outputs);
  }
}

std::vector<int> FunctionChecks::bufferSources(const Plan &plan) const {
  std::vector<int> sources;
  for (const PlanBuffer &buffer : plan.buffers) {
    int source = -1;
    if (buffer.access != BufferAccess::Workspace) {
      for (size_t i = 0; i < arguments.size() && source < 0; ++i)
        if (arguments[i].name == buffer.name)
          source = static_cast<int>(i);
      for (size_t i = 0; i < results.size() && source < 0; ++i)
        if (results[i].name == buffer.name)
          source = static_cast<int>(arguments.size() + i);
    }
    sources.push_back(source);
  }
  return sources;
}

std::vector<const TensorView *>
FunctionChecks::bufferViews(const std::vector<int> &sources,
                            const std::vector<TensorView> &argumentViews,
                            const std::vector<TensorView> &resultViews) {
  std::vector<const TensorView *> views;
  views.reserve(sources.size());
  for (int source : sources)
    views.push_back(source < 0 ? nullptr
                    : source < static_cast<int>(argumentViews.size())
                        ? &argumentViews[source]
                        : &resultViews[source - argumentViews.size()]);
  return views;
}

std::vector<std::vector<int64_t>> FunctionChecks::resultShapes(
    const Plan &plan, const std::vector<TensorView> &argumentViews) const {
  checkDeclared(arguments, argumentViews, "arguments");
  std::map<char, int64_t> letters;
  for (size_t i = 0; i < argumentViews.size(); ++i)
    for (size_t d = 0; d < arguments[i].layout.size(); ++d)
      letters.emplace(arguments[i].layout[d], argumentViews[i].shape[d]);
  // Parameters read from results are not known yet: only those from the
  // arguments count.
  std::vector<runtime::BufferShape> bound(plan.buffers.size());
  for (size_t b = 0; b < plan.buffers.size(); ++b)
    for (size_t i = 0; i < argumentViews.size(); ++i)
      if (plan.buffers[b].name == arguments[i].name)
        bound[b] = {&argumentViews[i].shape, &argumentViews[i].strides};
  for (size_t p = 0; p < plan.params.size() && p < plan.paramSources.size();
       ++p)
    if (plan.params[p].size() == 1)
      if (std::optional<int64_t> value = plan.paramValue(p, bound))
        letters.emplace(plan.params[p][0], *value);
  // Sizes the contracts fix from those known (packed sequences' count from
  // their offsets' length).
  for (const OperatorCheck &check : operators) {
    DimSizes dims;
    for (const auto &[letter, size] : letters)
      dims.bind(letter, size);
    deriveDims(check.contract, dims);
    for (const DimContract &dim : check.contract.dims)
      if (dims.has(dim.letter))
        letters.emplace(dim.letter, dims[dim.letter]);
  }
  std::vector<std::vector<int64_t>> shapes;
  for (const TensorInfo &result : results) {
    std::vector<int64_t> shape = result.shape;
    for (size_t d = 0; d < shape.size(); ++d) {
      if (shape[d] >= 0)
        continue;
      auto it = d < result.layout.size() ? letters.find(result.layout[d])
                                         : letters.end();
      if (it == letters.end())
        throw Unsupported("the size of '" + result.name + "' dim " +
                          std::to_string(d) +
                          " is not known from the "
                          "arguments");
      shape[d] = it->second;
    }
    shapes.push_back(shape);
  }
  return shapes;
}
