//===- SourceLimits.cpp - What IR text rudnn agrees to parse --------------===//

#include "dialects/IR/SourceLimits.h"

#include "mlir/Parser/Parser.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"

#include <string>
#include <vector>

using namespace mlir;

std::string mlir::rudnn::excessNestingMessage() {
  return "nesting deeper than " + std::to_string(kMaxNestingDepth) +
         " levels, or a result number past " +
         std::to_string(kMaxResultNumber) + ": rudnn does not parse this text";
}

/// Whether the SSA name starting at `text[at]` ('%') carries a result
/// number or group size (`#N`, `:N`) past rudnn::kMaxResultNumber.
static bool hasExcessResultNumber(llvm::StringRef text, size_t at) {
  size_t i = at + 1;
  while (i < text.size() &&
         (llvm::isAlnum(text[i]) || llvm::StringRef("_$.-").contains(text[i])))
    ++i;
  if (i + 1 >= text.size() || (text[i] != '#' && text[i] != ':') ||
      !llvm::isDigit(text[i + 1]))
    return false;
  uint64_t number = 0;
  for (++i; i < text.size() && llvm::isDigit(text[i]); ++i)
    if ((number = number * 10 + (text[i] - '0')) > rudnn::kMaxResultNumber)
      return true;
  return false;
}

/// At a string literal (with its escapes) or a `//` comment starting at
/// `text[i]`: the index of its last character, for a scanner to step past.
static std::optional<size_t> skipLiteral(llvm::StringRef text, size_t i) {
  if (text[i] == '"') {
    for (++i; i < text.size() && text[i] != '"'; ++i)
      if (text[i] == '\\')
        ++i;
    return i;
  }
  if (text[i] == '/' && i + 1 < text.size() && text[i + 1] == '/') {
    const size_t end = text.find('\n', i);
    return end == llvm::StringRef::npos ? text.size() : end;
  }
  return std::nullopt;
}

std::optional<size_t> mlir::rudnn::findExcessNesting(llvm::StringRef text) {
  int depth = 0, angles = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (std::optional<size_t> past = skipLiteral(text, i)) {
      i = *past;
      continue;
    }
    if (c == '%' && hasExcessResultNumber(text, i))
      return i;
    if (c == '(' || c == '[' || c == '{' || c == '<') {
      angles += c == '<';
      if (++depth > kMaxNestingDepth)
        return i;
    } else if (c == ')' || c == ']' || c == '}') {
      depth -= depth > 0;
    } else if (c == '>' && angles > 0 && !(i > 0 && text[i - 1] == '-')) {
      // '->' and comparisons such as '>=' close nothing.
      --angles;
      depth -= depth > 0;
    }
  }
  return std::nullopt;
}

/// The end of the SSA name starting at `text[at]` ('%').
static size_t nameEnd(llvm::StringRef text, size_t at) {
  size_t i = at + 1;
  while (i < text.size() &&
         (llvm::isAlnum(text[i]) || llvm::StringRef("_$.-").contains(text[i])))
    ++i;
  return i;
}

/// Past `:N` (a result group's size) at `i`, if there.
static size_t skipGroupSize(llvm::StringRef text, size_t i) {
  if (i + 1 < text.size() && text[i] == ':' && llvm::isDigit(text[i + 1]))
    for (++i; i < text.size() && llvm::isDigit(text[i]);)
      ++i;
  return i;
}

static size_t skipSpaces(llvm::StringRef text, size_t i) {
  while (i < text.size() && llvm::isSpace(text[i]))
    ++i;
  return i;
}

/// Whether `text[at]` sits in an argument list: the list's unmatched '('
/// before it follows a function's or a block's name (`@f(`, `^bb0(`).
static bool inArgumentList(llvm::StringRef text, size_t at) {
  int depth = 0;
  for (size_t i = at; i-- > 0;) {
    const char c = text[i];
    if (c == ')' || c == ']' || c == '}' || c == '>')
      ++depth;
    else if (c == '[' || c == '{' || c == '<')
      depth -= depth > 0;
    else if (c == '(' && depth-- == 0) {
      size_t name = i;
      while (name > 0 && (llvm::isAlnum(text[name - 1]) ||
                          llvm::StringRef("_$.-").contains(text[name - 1])))
        --name;
      return name > 0 && name < i &&
             (text[name - 1] == '@' || text[name - 1] == '^');
    }
  }
  return false;
}

/// Whether the name ending at `end` (its '%' at `at`) is defined there: a
/// result list ending in '=' follows, or it is an argument of a function or
/// a block, with a type after ':'.
static bool definesName(llvm::StringRef text, size_t at, size_t end) {
  size_t i = skipSpaces(text, skipGroupSize(text, end));
  for (size_t j = i; j < text.size() && text[j] == ',';) {
    j = skipSpaces(text, j + 1);
    if (j >= text.size() || text[j] != '%')
      break;
    j = skipSpaces(text, skipGroupSize(text, nameEnd(text, j)));
    if (j < text.size() && text[j] == '=')
      i = j;
  }
  if (i < text.size() && text[i] == '=' &&
      !(i + 1 < text.size() && text[i + 1] == '='))
    return true;
  return i < text.size() && text[i] == ':' && inArgumentList(text, at);
}

std::string mlir::rudnn::forwardReferenceMessage(llvm::StringRef name) {
  return "'" + name.str() +
         "' is used before it is defined: rudnn does not parse forward "
         "references";
}

/// Whether the region opening at `text[at]` ('{') belongs to an op whose
/// regions see no name from outside (rudnn.plan, rudnn.kernel): the op's
/// name is on the brace's line, before it.
static bool opensIsolatedRegion(llvm::StringRef text, size_t at) {
  const size_t line = text.find_last_of("\n{}", at == 0 ? 0 : at - 1);
  const llvm::StringRef header =
      text.slice(line == llvm::StringRef::npos ? 0 : line + 1, at);
  return header.contains("rudnn.plan") || header.contains("rudnn.kernel");
}

std::optional<size_t> mlir::rudnn::findForwardReference(llvm::StringRef text) {
  // The names each open region defines; a region of an isolated op sees
  // none of the enclosing ones.
  struct Scope {
    llvm::StringSet<> names;
    bool isolated = false;
  };
  std::vector<Scope> scopes(1);
  auto visible = [&](llvm::StringRef name) {
    for (size_t k = scopes.size(); k-- > 0;) {
      if (scopes[k].names.contains(name))
        return true;
      if (scopes[k].isolated)
        return false;
    }
    return false;
  };
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (std::optional<size_t> past = skipLiteral(text, i)) {
      i = *past;
      continue;
    }
    if (c == '{') {
      scopes.emplace_back();
      scopes.back().isolated = opensIsolatedRegion(text, i);
      continue;
    }
    if (c == '}') {
      if (scopes.size() > 1)
        scopes.pop_back();
      continue;
    }
    if (c != '%')
      continue;
    const size_t end = nameEnd(text, i);
    if (end == i + 1)
      continue;
    const llvm::StringRef name = text.slice(i, end);
    if (!visible(name)) {
      if (!definesName(text, i, end))
        return i;
      scopes.back().names.insert(name);
    }
    i = end - 1;
  }
  return std::nullopt;
}

std::optional<std::pair<size_t, std::string>>
mlir::rudnn::findRefusedSource(llvm::StringRef text) {
  if (std::optional<size_t> at = findExcessNesting(text))
    return std::make_pair(*at, excessNestingMessage());
  if (std::optional<size_t> at = findForwardReference(text))
    return std::make_pair(
        *at, forwardReferenceMessage(text.slice(*at, nameEnd(text, *at))));
  return std::nullopt;
}

OwningOpRef<ModuleOp>
mlir::rudnn::parseRudnnSource(const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
                              MLIRContext *context) {
  const llvm::MemoryBuffer &buffer =
      *sourceMgr->getMemoryBuffer(sourceMgr->getMainFileID());
  if (auto refused = findRefusedSource(buffer.getBuffer())) {
    auto [line, column] = sourceMgr->getLineAndColumn(
        llvm::SMLoc::getFromPointer(buffer.getBufferStart() + refused->first));
    emitError(FileLineColLoc::get(context, buffer.getBufferIdentifier(), line,
                                  column))
        << refused->second;
    return nullptr;
  }
  return parseSourceFile<ModuleOp>(sourceMgr, context);
}
