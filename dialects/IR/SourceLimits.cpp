//===- SourceLimits.cpp - What IR text rudnn agrees to parse --------------===//

#include "dialects/IR/SourceLimits.h"

#include "mlir/Parser/Parser.h"

#include <string>

using namespace mlir;

std::string mlir::rudnn::excessNestingMessage() {
  return "nesting deeper than " + std::to_string(kMaxNestingDepth) +
         " levels: rudnn does not parse this text";
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
