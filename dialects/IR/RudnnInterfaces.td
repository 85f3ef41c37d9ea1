//===- RudnnInterfaces.td - The extension points of rudnn --*- tablegen -*-===//
//
// What an operator implements so that every pass is a generic driver:
// rudnn-specialize calls `specialize`, rudnn-decompose calls `decompose`,
// and the verifier, the JIT API's checks and rudnn-run read `getContract`.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_INTERFACES_TD
#define RUDNN_INTERFACES_TD

include "dialects/IR/RudnnBase.td"
include "mlir/IR/OpBase.td"

def Rudnn_OperatorOpInterface : OpInterface<"OperatorOpInterface"> {
  let cppNamespace = "::mlir::rudnn";
  let description = [{
    An operator op: what users write. Its contract names every operand and
    result in ODS order with its layout letters and element types
    (`OperatorContract.h`); `verifyOperatorContract` checks an op against it
    and each verifier adds the rules a table cannot say.

    ```c++
    module.walk([&](OperatorOpInterface op) {
      if (failed(op.specialize(target))) ...
    });
    ```
  }];
  let methods = [
    StaticInterfaceMethod<
        "The operator's contract, shared with code that builds no IR (for an "
        "operator whose operands depend on its attributes, its simplest form).",
        "const ::rudnn::OperatorContract &", "getContract">,
    StaticInterfaceMethod<
        "The contract of a call of this operator, before any IR exists: "
        "chosen by its attributes and the tensors it gives, as "
        "getOperatorContract chooses it for a built op.",
        "const ::rudnn::OperatorContract &", "getCallContract",
        (ins "const ::rudnn::CallDescription &"
         : $call),
        [{}], [{ return ConcreteOp::getContract(); }]>,
    StaticInterfaceMethod<
        "Builds the op from its contract's operands (null where an optional "
        "one is absent) and results' types, in the contract's order, and "
        "`attributes` (what the generic operator call builds). By default "
        "each contract entry is one ODS operand or result group.",
        "::mlir::Operation *", "buildFromContract",
        (ins "::mlir::OpBuilder &"
         : $builder, "::mlir::Location"
         : $loc, "const ::rudnn::OperatorContract &"
         : $contract, "::llvm::ArrayRef<::mlir::Value>"
         : $operands, "::llvm::ArrayRef<::mlir::Type>"
         : $results, "::llvm::ArrayRef<::mlir::NamedAttribute>"
         : $attributes),
        [{}], [{
          return ::mlir::rudnn::buildByContractGroups(
              builder, loc, ConcreteOp::getOperationName(), operands, results,
              attributes);
        }]>,
    InterfaceMethod<
        "The contract of this op: its operands may depend on its attributes "
        "(an LSTM's weights per layer and direction).",
        "const ::rudnn::OperatorContract &", "getOperatorContract", (ins), [{}],
        [{ return ConcreteOp::getContract(); }]>,
    InterfaceMethod<
        "The value of operand `index` of the contract, null when an optional "
        "one is absent.",
        "::mlir::Value", "getContractOperand",
        (ins "unsigned"
         : $index),
        [{}], [{
          auto group = $_op.getODSOperands(index);
          return group.empty() ? ::mlir::Value() : group.front();
        }]>,
    InterfaceMethod<
        "The value of result `index` of the contract, null when an optional "
        "one is absent.",
        "::mlir::Value", "getContractResult",
        (ins "unsigned"
         : $index),
        [{}], [{
          auto group = $_op.getODSResults(index);
          return group.empty() ? ::mlir::Value() : group.front();
        }]>,
    InterfaceMethod<
        "Chooses every compile-time parameter left open (chunk and tile sizes, "
        "scale) for `target`, keeping those already set (by the IR or by "
        "rudnn-specialize's `set` option), and fixes the result sizes that "
        "depend on them.",
        "::mlir::LogicalResult", "specialize",
        (ins "::mlir::rudnn::TargetAttr":$target)>,
    InterfaceMethod<
        "Builds the primitives computing the op before it and replaces its "
        "results by theirs; the caller erases the op. Runs after specialize.",
        "::mlir::LogicalResult", "decompose",
        (ins "::mlir::OpBuilder &"
         : $builder)>,
  ];
}

// An operator whose family writes its interface methods once for all of its
// operators. The methods defined here call the family's function templates
// with the op: `verify<family>(op)`, `specialize<family>(op, target)` and
// `decompose<family>(op, builder)`; the family's source that includes its
// generated op classes defines them first. `contract` is the expression
// getContract returns; `familyDefinitions` adds methods of the family's own.
class Rudnn_FamilyOperatorOp<string mnemonic, string family, string contract,
                             list<Trait> traits = []>
    : Rudnn_Op<mnemonic, traits> {
  // Whether the family verifies the op (otherwise the op defines verify).
  bit familyVerifies = 1;
  code familyDefinitions = "";
  let hasVerifier = 1;
  let extraClassDefinition = [{
    const ::rudnn::OperatorContract &$cppClass::getContract() {
      return }] # contract # [{;
    }
    ::mlir::LogicalResult $cppClass::specialize(TargetAttr target) {
      return specialize}] # family # [{(*this, target);
    }
    ::mlir::LogicalResult $cppClass::decompose(::mlir::OpBuilder &builder) {
      return decompose}] # family # [{(*this, builder);
    }
  }] # !if(familyVerifies, [{
    ::mlir::LogicalResult $cppClass::verify() {
      return verify}] # family # [{(*this);
    }
  }], "") # familyDefinitions;
}

def Rudnn_PrimitiveOpInterface : OpInterface<"PrimitiveOpInterface"> {
  let cppNamespace = "::mlir::rudnn";
  let description = [{
    A primitive op: what operator ops decompose into and what kernels are
    made of. `rudnn-plan` outlines each run of connected primitives of one
    kernel group into a `rudnn.kernel` region and gives every value that
    crosses kernels a buffer (the caller's tensor, or workspace sized by
    `getResultStorage`). How the kernel's last primitive writes it is the
    code generator's interface (`KernelEmitOpInterface`), not the
    dialect's.

    ```c++
    for (auto op : func.getOps<PrimitiveOpInterface>())
      groups[op.getKernelGroup()].push_back(op);
    ```
  }];
  let methods = [
    InterfaceMethod<
        "The device-library building block computing the op: connected "
        "primitives of one group become one kernel.",
        "::llvm::StringRef", "getKernelGroup">,
    InterfaceMethod<"Where result `index` lives when another kernel reads it.",
                    "::mlir::rudnn::ResultStorage", "getResultStorage",
                    (ins "unsigned"
                     : $index)>,
    InterfaceMethod<
        "Where dim `dim` of result `index` comes from (a dim of an operand), "
        "for results held in the workspace and read by other operators.",
        "std::optional<::mlir::rudnn::DimRef>", "getResultDim",
        (ins "unsigned"
         : $index, "unsigned"
         : $dim),
        [{}], [{ return std::nullopt; }]>,
  ];
}

#endif // RUDNN_INTERFACES_TD
