//===- TestSupport.h - Building rudnn IR in unit tests ----------*- C++ -*-===//

#ifndef RUDNN_TEST_UNIT_TESTSUPPORT_H
#define RUDNN_TEST_UNIT_TESTSUPPORT_H

#include "codegen/InitRudnn.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

namespace rudnn::test {

/// A module holding one function whose arguments tests create on demand, with
/// every diagnostic captured instead of printed.
class IRTest : public ::testing::Test {
protected:
  IRTest() : context(makeRegistry()), builder(&context) {
    context.loadAllAvailableDialects();
    module = mlir::ModuleOp::create(builder.getUnknownLoc());
    builder.setInsertionPointToEnd(module->getBody());
    auto func = builder.create<mlir::func::FuncOp>(
        builder.getUnknownLoc(), "f", builder.getFunctionType({}, {}));
    body = func.addEntryBlock();
    builder.setInsertionPointToEnd(body);
    handler.emplace(&context, [this](mlir::Diagnostic &diagnostic) {
      diagnostics += diagnostic.str() + "\n";
      return mlir::success();
    });
  }

  static mlir::DialectRegistry makeRegistry() {
    mlir::DialectRegistry registry;
    mlir::rudnn::registerRudnnDialects(registry);
    return registry;
  }

  /// A new argument of the function, of type `tensor<shape x element>`.
  mlir::Value tensor(llvm::ArrayRef<int64_t> shape, mlir::Type element) {
    return body->addArgument(mlir::RankedTensorType::get(shape, element),
                             builder.getUnknownLoc());
  }

  /// Ends the function with a return and gives it its arguments' signature,
  /// so the module as a whole verifies.
  void finishFunction() {
    builder.create<mlir::func::ReturnOp>(builder.getUnknownLoc());
    auto func = mlir::cast<mlir::func::FuncOp>(body->getParentOp());
    func.setFunctionType(builder.getFunctionType(body->getArgumentTypes(), {}));
  }

  /// Verifies `op` and returns its diagnostics ("" when it verifies).
  std::string verify(mlir::Operation *op) {
    diagnostics.clear();
    bool ok = mlir::succeeded(mlir::verify(op));
    EXPECT_EQ(ok, diagnostics.empty()) << diagnostics;
    return diagnostics;
  }

  static constexpr int64_t kDyn = mlir::ShapedType::kDynamic;

  mlir::MLIRContext context;
  mlir::OpBuilder builder;
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::Block *body = nullptr;
  std::string diagnostics;
  std::optional<mlir::ScopedDiagnosticHandler> handler;
};

} // namespace rudnn::test

#endif // RUDNN_TEST_UNIT_TESTSUPPORT_H
