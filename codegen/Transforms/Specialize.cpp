//===- Specialize.cpp - Bind the target, choose open parameters -----------===//

#include "codegen/Transforms/Passes.h"
#include "dialects/IR/RudnnOps.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace mlir::rudnn {
#define GEN_PASS_DEF_RUDNNSPECIALIZE
#include "codegen/Transforms/Passes.h.inc"
} // namespace mlir::rudnn

using namespace mlir;
using namespace mlir::rudnn;

namespace {

/// Whether some operator op of the context declares the attribute `name`.
bool anyOperatorDeclares(MLIRContext *context, StringRef name) {
  for (RegisteredOperationName op : context->getRegisteredOperations())
    if (op.hasInterface<OperatorOpInterface>() &&
        llvm::is_contained(op.getAttributeNames(),
                           StringAttr::get(context, name)))
      return true;
  return false;
}

/// The `set` option's entries as attributes, each name=value with value
/// MLIR attribute syntax; failure (diagnosed) for an entry that is not one,
/// or names an attribute no operator op has.
FailureOr<SmallVector<NamedAttribute>>
parseForced(ModuleOp module, ArrayRef<std::string> entries) {
  MLIRContext *context = module.getContext();
  SmallVector<NamedAttribute> forced;
  for (StringRef entry : entries) {
    auto [name, text] = entry.split('=');
    if (name.empty() || text.empty())
      return module.emitError()
             << "'set' takes name=value entries, got '" << entry << "'";
    if (!anyOperatorDeclares(context, name))
      return module.emitError()
             << "'set': no rudnn operator has an attribute '" << name << "'";
    Attribute value = parseAttribute(text, context);
    if (!value)
      return module.emitError() << "'set': the value of '" << name << "', '"
                                << text << "', is no MLIR attribute";
    forced.push_back(NamedAttribute(StringAttr::get(context, name), value));
  }
  return forced;
}

/// Sets each forced attribute `op` declares and leaves open.
void applyForced(Operation *op, ArrayRef<NamedAttribute> forced) {
  ArrayRef<StringAttr> declared = op->getName().getAttributeNames();
  for (NamedAttribute attribute : forced)
    if (llvm::is_contained(declared, attribute.getName()) &&
        !op->hasAttr(attribute.getName()))
      op->setAttr(attribute.getName(), attribute.getValue());
}

/// A function whose returned values changed type (a size an op fixed)
/// returns the new types.
void matchReturnedTypes(func::FuncOp func) {
  if (func.isExternal())
    return;
  Operation *terminator = func.getBody().back().getTerminator();
  auto returned = terminator->getOperandTypes();
  if (llvm::equal(returned, func.getResultTypes()))
    return;
  func.setType(FunctionType::get(func.getContext(), func.getArgumentTypes(),
                                 SmallVector<Type>(returned)));
}

struct SpecializePass
    : public mlir::rudnn::impl::RudnnSpecializeBase<SpecializePass> {
  using RudnnSpecializeBase::RudnnSpecializeBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    TargetAttr target = TargetAttr::getChecked(
        [&] { return module.emitError(); }, module.getContext(),
        StringRef(arch.getValue()), lanes.getValue(), smemPerBlock.getValue(),
        smCount.getValue());
    if (!target)
      return signalPassFailure();
    module->setAttr(RudnnDialect::kTargetAttrName, target);

    FailureOr<SmallVector<NamedAttribute>> forced = parseForced(module, set);
    if (failed(forced))
      return signalPassFailure();
    WalkResult result = module.walk([&](OperatorOpInterface op) {
      applyForced(op, *forced);
      return failed(op.specialize(target)) ? WalkResult::interrupt()
                                           : WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    module.walk(matchReturnedTypes);
  }
};

} // namespace
