//===- RudnnInterfaces.td - The extension points of rudnn --*- tablegen -*-===//
//
// What an operator implements so that every pass is a generic driver:
// rudnn-specialize calls `specialize`, rudnn-decompose calls `decompose`,
// and the verifier, the JIT API's checks and rudnn-run read `getContract`.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_INTERFACES_TD
#define RUDNN_INTERFACES_TD

include "mlir/IR/OpBase.td"

def Rudnn_OperatorOpInterface : OpInterface<"OperatorOpInterface"> {
  let cppNamespace = "::mlir::rudnn";
  let description = [{
    An operator op: what users write. Its contract names every operand and
    result in ODS order with its layout letters and element types
    (`OperatorContract.h`); `verifyOperatorContract` checks an op against it
    and each verifier adds the rules a table cannot say.

    ```c++
    for (auto op : module.getOps<OperatorOpInterface>())
      if (failed(op.specialize(target, options))) ...
    ```
  }];
  let methods = [
    StaticInterfaceMethod<
      "The operator's contract, shared with code that builds no IR.",
      "const ::rudnn::OperatorContract &", "getContract">,
    InterfaceMethod<
      "The value of operand `index` of the contract, null when an optional "
      "one is absent.",
      "::mlir::Value", "getContractOperand", (ins "unsigned":$index), [{}],
      [{
        auto group = $_op.getODSOperands(index);
        return group.empty() ? ::mlir::Value() : group.front();
      }]>,
    InterfaceMethod<
      "The value of result `index` of the contract, null when an optional "
      "one is absent.",
      "::mlir::Value", "getContractResult", (ins "unsigned":$index), [{}],
      [{
        auto group = $_op.getODSResults(index);
        return group.empty() ? ::mlir::Value() : group.front();
      }]>,
    InterfaceMethod<
      "Chooses every compile-time parameter left open (chunk and tile sizes, "
      "scale) for `target`; `options` may force some.",
      "::mlir::LogicalResult", "specialize",
      (ins "::mlir::rudnn::TargetAttr":$target,
           "const ::mlir::rudnn::SpecializeOptions &":$options)>,
    InterfaceMethod<
      "Builds the primitives computing the op before it and replaces its "
      "results by theirs; the caller erases the op. Runs after specialize.",
      "::mlir::LogicalResult", "decompose",
      (ins "::mlir::OpBuilder &":$builder)>,
  ];
}

#endif // RUDNN_INTERFACES_TD
