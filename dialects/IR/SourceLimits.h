//===- SourceLimits.h - What IR text rudnn agrees to parse ------*- C++ -*-===//
//
// MLIR's parser recurses once per level of nesting (types in types, regions
// in regions, nested attributes), so deep enough text overflows the stack.
// rudnn's tools refuse such text before parsing it, with a diagnostic.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_DIALECTS_IR_SOURCELIMITS_H
#define RUDNN_DIALECTS_IR_SOURCELIMITS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LogicalResult.h"

#include "llvm/Support/SourceMgr.h"

#include <memory>
#include <optional>
#include <string>
#include <utility>

namespace mlir::rudnn {

/// The deepest bracket nesting ((), [], {}, <> together) accepted in IR text:
/// real rudnn IR nests about 10 deep.
constexpr int kMaxNestingDepth = 256;

/// The largest result number or result-group size an SSA name may carry
/// (`%x#N`, `%x:N`): MLIR's parser sizes a vector by it before it looks
/// for the operation, so a huge one exhausts memory.
constexpr uint64_t kMaxResultNumber = 1 << 16;

/// The offset of the first bracket of `text` past kMaxNestingDepth, or of
/// the first result number past kMaxResultNumber, if any. String literals
/// and `//` comments do not count.
std::optional<size_t> findExcessNesting(llvm::StringRef text);

/// The message for text refused by findExcessNesting.
std::string excessNestingMessage();

/// The offset of the first SSA name used where no definition of it is
/// visible yet (a result, `%a, %b = …`, or an argument of a function or
/// block, `@f(%a: …`, `^bb0(%a: …`, earlier in the same or an enclosing
/// region; a region of rudnn.plan or rudnn.kernel sees no outer name), if
/// any. rudnn IR never needs such a forward reference (its regions have
/// one block), and MLIR 19's parser can free a region under one on invalid
/// text. String literals and `//` comments do not count.
std::optional<size_t> findForwardReference(llvm::StringRef text);

/// The message for text refused by findForwardReference at `name`.
std::string forwardReferenceMessage(llvm::StringRef name);

/// The first refusal of either kind: its offset and message.
std::optional<std::pair<size_t, std::string>>
findRefusedSource(llvm::StringRef text);

/// Parses and verifies the main buffer of `sourceMgr` as a module, after
/// refusing text that nests too deep. Diagnostics go to the context's
/// handlers.
OwningOpRef<ModuleOp>
parseRudnnSource(const std::shared_ptr<llvm::SourceMgr> &sourceMgr,
                 MLIRContext *context);

} // namespace mlir::rudnn

#endif // RUDNN_DIALECTS_IR_SOURCELIMITS_H
