//===- SourceLimits.cpp - What IR text rudnn agrees to parse --------------===//

#include "dialects/IR/SourceLimits.h"

#include "mlir/Parser/Parser.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <string>

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

std::optional<size_t> mlir::rudnn::findExcessNesting(llvm::StringRef text) {
  int depth = 0, angles = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '"') { // a string literal, with its escapes
      for (++i; i < text.size() && text[i] != '"'; ++i)
        if (text[i] == '\\')
          ++i;
      continue;
    }
    if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      i = text.find('\n', i);
      if (i == llvm::StringRef::npos)
        break;
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

OwningOpRef<ModuleOp>
mlir::rudnn::parseRudnnSource(const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
                              MLIRContext *context) {
  const llvm::MemoryBuffer &buffer =
      *sourceMgr->getMemoryBuffer(sourceMgr->getMainFileID());
  if (std::optional<size_t> at = findExcessNesting(buffer.getBuffer())) {
    auto [line, column] = sourceMgr->getLineAndColumn(
        llvm::SMLoc::getFromPointer(buffer.getBufferStart() + *at));
    emitError(FileLineColLoc::get(context, buffer.getBufferIdentifier(), line,
                                  column))
        << excessNestingMessage();
    return nullptr;
  }
  return parseSourceFile<ModuleOp>(sourceMgr, context);
}
