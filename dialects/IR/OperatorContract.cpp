//===- OperatorContract.cpp - What an operator takes and returns ----------===//

#include "dialects/IR/OperatorContract.h"

#include <algorithm>

using namespace rudnn;

const DimContract *OperatorContract::dim(char letter) const {
  for (const DimContract &d : dims)
    if (d.letter == letter)
      return &d;
  return nullptr;
}

static int indexOf(const std::vector<TensorContract> &tensors,
                   std::string_view name) {
  for (size_t i = 0; i < tensors.size(); ++i)
    if (tensors[i].name == name)
      return static_cast<int>(i);
  return -1;
}

int OperatorContract::operandIndex(std::string_view name) const {
  return indexOf(operands, name);
}

int OperatorContract::resultIndex(std::string_view name) const {
  return indexOf(results, name);
}

std::string OperatorContract::staticDims() const {
  std::string letters;
  for (const DimContract &d : dims)
    if (d.isStatic)
      letters += d.letter;
  return letters;
}

std::string OperatorContract::describe(const TensorContract &tensor) {
  switch (tensor.element) {
  case ElementRule::Float:
    return "f32, f16 or bf16";
  case ElementRule::F32:
    return "f32";
  case ElementRule::SameAs:
    return "as '" + std::string(tensor.sameAs) + "'";
  case ElementRule::I32:
    return "i32";
  case ElementRule::Bool:
    return "i1";
  }
  return "";
}

std::string OperatorContract::format() const {
  std::string text = std::string(op) + ": " + std::string(summary) + "\n";
  text += "  dims:";
  for (const DimContract &d : dims) {
    text += std::string(&d == &dims.front() ? " " : ", ") + d.letter + " (" +
            std::string(d.doc);
    if (d.isStatic)
      text += ", static";
    if (d.min == d.max)
      text += ", " + std::to_string(d.min);
    else if (d.min != 1 || d.max != INT64_MAX)
      text += ", " + std::to_string(d.min) + " to " + std::to_string(d.max);
    text += ")";
  }
  text += "\n";
  auto list = [&](const char *title, const std::vector<TensorContract> &all) {
    text += std::string("  ") + title + ":\n";
    for (const TensorContract &t : all) {
      std::string letters = "[";
      for (size_t i = 0; i < t.layout.size(); ++i)
        letters += (i ? ", " : "") + std::string(1, t.layout[i]);
      letters += "]";
      std::string line = "    " + std::string(t.name);
      line.resize(std::max<size_t>(line.size() + 1, 22), ' ');
      line += letters;
      line.resize(std::max<size_t>(line.size() + 1, 40), ' ');
      line += describe(t) + (t.optional ? ", optional" : "");
      if (!t.doc.empty())
        line += ": " + std::string(t.doc);
      text += line + "\n";
    }
  };
  list("operands", operands);
  list("results", results);
  return text;
}

int64_t CallDescription::integer(std::string_view name,
                                 int64_t otherwise) const {
  for (const auto &[key, value] : integers)
    if (key == name)
      return value;
  return otherwise;
}

size_t CallDescription::rank(std::string_view name) const {
  for (const auto &[key, value] : ranks)
    if (key == name)
      return value;
  return 0;
}

bool CallDescription::gives(std::string_view name) const {
  for (const auto &entry : ranks)
    if (entry.first == name)
      return true;
  return false;
}

SampleRule rudnn::sampleRuleOf(const TensorContract &tensor) {
  using Draw = SampleRule::Draw;
  SampleRule rule;
  const std::string counts(tensor.counts ? 1 : 0, tensor.counts);
  auto between = [&](Draw draw, double low, double high) {
    rule.draw = draw;
    rule.low = low;
    rule.high = high;
  };
  auto integers = [&](Draw draw, std::string upTo, char less) {
    rule.draw = draw;
    rule.upTo = std::move(upTo);
    rule.less = less;
  };
  switch (tensor.sample) {
  case Sample::Normal:
    break;
  case Sample::HalfNormal:
    rule.scale = 0.5;
    break;
  case Sample::LogDecay:
    between(Draw::Uniform, 0, -1);
    break;
  case Sample::Probability:
    between(Draw::Uniform, 0.05, 0.95);
    break;
  case Sample::UnitRows:
    rule.unitRows = true;
    break;
  case Sample::Lengths:
    integers(Draw::Integers, counts, 0);
    break;
  case Sample::Offsets:
    integers(Draw::Integers, counts, 0);
    rule.sorted = true;
    break;
  case Sample::Mask:
    between(Draw::Bernoulli, 0.75, 1);
    break;
  case Sample::CacheLengths:
    integers(Draw::Integers, std::string(tensor.room), tensor.counts);
    break;
  case Sample::Pages:
    integers(Draw::Permutation, counts, 0);
    break;
  }
  return rule;
}
