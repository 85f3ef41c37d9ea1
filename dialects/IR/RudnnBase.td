//===- RudnnBase.td - The rudnn dialect --------------------*- tablegen -*-===//
//
// The dialect definition shared by the attribute and op files.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_BASE_TD
#define RUDNN_BASE_TD

include "mlir/IR/OpBase.td"

def Rudnn_Dialect : Dialect {
  let name = "rudnn";
  let cppNamespace = "::mlir::rudnn";
  let summary = "Deep-learning sequence operators compiled to CUDA kernels";
  let description = [{
    The `rudnn` dialect describes sequence operators (Kimi Delta Attention,
    tiled attention, LSTM, normalisations) on builtin tensors with value
    semantics. Feature dimensions are static; batch, heads and sequence
    lengths may be dynamic, so one compiled plan serves every batch size and
    sequence length. `rudnn-specialize` binds a `#rudnn.target` to the module
    and chooses every compile-time parameter left open.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
  let extraClassDeclaration = [{
    /// Name of the module attribute holding the `#rudnn.target`.
    static constexpr ::llvm::StringLiteral kTargetAttrName = "rudnn.target";

    /// Name of the argument/result attribute naming a tensor for tools
    /// (`rudnn-run` reads `<name>.npy` for it).
    static constexpr ::llvm::StringLiteral kNameAttrName = "rudnn.name";

    /// Name of the argument/result attribute giving a tensor's layout
    /// letters ("BTHK"), from its operator's contract. Within a function a
    /// letter is one size: plans read it from the first tensor laid out
    /// with it.
    static constexpr ::llvm::StringLiteral kLayoutAttrName = "rudnn.layout";

    /// Name of the result attribute naming the argument a result may be
    /// written over (an update in place, e.g. a final state over the
    /// initial state).
    static constexpr ::llvm::StringLiteral kAliasesAttrName = "rudnn.aliases";

    /// Name of the argument/result attribute promising a view's alignment
    /// in bytes (a power of two, at least 16): its data pointer and every
    /// stride but the innermost (which is 1) are multiples of it, so its
    /// rows move by 16-byte copies alone. Calls check the promise.
    static constexpr ::llvm::StringLiteral kAlignAttrName = "rudnn.align";

    /// Name of the unit attribute an operator's decomposition puts on its
    /// primitives when every view their kernels copy promises 16-byte
    /// alignment: the kernels are compiled without an element-wise path.
    static constexpr ::llvm::StringLiteral kAlignedViewsAttrName =
        "rudnn.aligned_views";

    /// Name of the unit attribute an operator's decomposition puts on its
    /// primitives when every result their kernels store is returned with a
    /// promise of 16-byte alignment: the stores need no element-wise path
    /// (and may go through tensor maps).
    static constexpr ::llvm::StringLiteral kAlignedOutputsAttrName =
        "rudnn.aligned_outputs";

    void registerAttributes();
  }];
}

class Rudnn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Rudnn_Dialect, mnemonic, traits>;

#endif // RUDNN_BASE_TD
