//===- RudnnAttrs.td - rudnn attributes --------------------*- tablegen -*-===//

#ifndef RUDNN_ATTRS_TD
#define RUDNN_ATTRS_TD

include "dialects/IR/RudnnBase.td"
include "mlir/IR/AttrTypeBase.td"

def Rudnn_TargetAttr : AttrDef<Rudnn_Dialect, "Target"> {
  let mnemonic = "target";
  let summary = "The GPU a module is specialized for";
  let description = [{
    Describes the device every kernel of a module is generated for: the
    architecture (`sm_80`, `sm_90`, `sm_90a`, ...), the lanes of a warp, the
    shared memory one block may use (bytes, with the opt-in carve-out) and the
    number of streaming multiprocessors. Attached to the module by
    `rudnn-specialize` as `rudnn.target`.

    ```mlir
    module attributes {rudnn.target = #rudnn.target<arch = "sm_90", lanes = 32,
                                                     smem_per_block = 232448,
                                                     sm_count = 132>} {}
    ```
  }];
  let parameters = (ins
    StringRefParameter<"architecture, e.g. sm_90">:$arch,
    "int64_t":$lanes,
    "int64_t":$smem_per_block,
    "int64_t":$sm_count);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The compute capability encoded in `arch`, e.g. 90 for "sm_90a".
    int64_t getComputeCapability() const;
  }];
}

def Rudnn_SizeAttr : AttrDef<Rudnn_Dialect, "Size"> {
  let mnemonic = "size";
  let summary = "A size known once a plan's run-time parameters are";
  let description = [{
    `ceil(constant · Π params / divisor)`, the parameters named as in the
    enclosing `rudnn.plan` (batch, length, heads, chunk count, strides, …),
    so one plan serves every size.

    ```mlir
    #rudnn.size<constant = 37120, params = ["N", "B", "H"], divisor = 1>
    ```
  }];
  let parameters = (ins "int64_t":$constant, "ArrayAttr":$params,
                        "int64_t":$divisor);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Rudnn_ParamAttr : AttrDef<Rudnn_Dialect, "Param"> {
  let mnemonic = "param";
  let summary = "A kernel argument taken from a plan parameter";
  let description = [{
    The value of plan parameter `name`, passed as a `bits`-bit integer.

    ```mlir
    #rudnn.param<name = "B", bits = 32>
    ```
  }];
  let parameters = (ins StringRefParameter<"parameter name">:$name,
                        "int64_t":$bits);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Rudnn_TensorMapAttr : AttrDef<Rudnn_Dialect, "TensorMap"> {
  let mnemonic = "tensor_map";
  let summary = "A kernel argument: a TMA tensor map over a plan buffer";
  let description = [{
    The 128-byte tensor map (CUtensorMap) of buffer `buffer`, encoded by
    the runtime at each call from the bound address and the call's dims and
    strides, passed by value. `dims` (innermost first; the innermost
    contiguous) and `strides` (in elements, of dims 1 and up) are i64
    constants or `#rudnn.param`s; `box` is the tile one load brings into
    shared memory, swizzled by `swizzle_bytes` (0, 32, 64 or 128).

    ```mlir
    #rudnn.tensor_map<buffer = "q", element_bytes = 2,
        dims = [128 : i64, #rudnn.param<name = "T", bits = 32>, ...],
        strides = [#rudnn.param<name = "q_stride1", bits = 64>, ...],
        box = array<i64: 64, 128, 1, 1>, swizzle_bytes = 128>
    ```
  }];
  let parameters = (ins StringRefParameter<"buffer name">:$buffer,
                        "int64_t":$element_bytes, "ArrayAttr":$dims,
                        "ArrayAttr":$strides, "DenseI64ArrayAttr":$box,
                        "int64_t":$swizzle_bytes);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Rudnn_DimSourceAttr : AttrDef<Rudnn_Dialect, "DimSource"> {
  let mnemonic = "dim";
  let summary = "A plan parameter read from a bound buffer's shape";
  let description = [{
    The size of dim `index` of the tensor bound to `buffer`, divided by
    `divisor` rounding up: `ceil(shape[index] / divisor)`. A plan whose
    parameters all have sources needs only its buffers' views at a call.

    ```mlir
    #rudnn.dim<buffer = "q", index = 1, divisor = 64>   // ceil(T / 64)
    ```
  }];
  let parameters = (ins StringRefParameter<"buffer name">:$buffer,
                        "int64_t":$index, "int64_t":$divisor);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Rudnn_StrideSourceAttr : AttrDef<Rudnn_Dialect, "StrideSource"> {
  let mnemonic = "stride";
  let summary = "A plan parameter read from a bound buffer's strides";
  let description = [{
    The stride, in elements, of dim `index` of the tensor bound to `buffer`.

    ```mlir
    #rudnn.stride<buffer = "q", index = 0>
    ```
  }];
  let parameters = (ins StringRefParameter<"buffer name">:$buffer,
                        "int64_t":$index);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Rudnn_SplitSourceAttr : AttrDef<Rudnn_Dialect, "SplitSource"> {
  let mnemonic = "split";
  let summary = "A plan parameter the runtime chooses: a split count";
  let description = [{
    How many parts to split each unit of work into so that a launch fills
    the device: `clamp(ceil(target / blocks), 1, max)`, with `blocks` the
    launch's blocks before splitting and `max` the most parts that still
    have work (both sizes of the parameters before it), `target` the blocks
    that fill the plan's device (its SMs times the blocks each runs at
    once). Split-KV decoding sizes its grid and partial results by it.

    ```mlir
    #rudnn.split<blocks = #rudnn.size<constant = 1, params = ["B", "H"],
        divisor = 1>, target = 264, max = #rudnn.size<constant = 1,
        params = ["T"], divisor = 256>>
    ```
  }];
  let parameters = (ins Rudnn_SizeAttr:$blocks, "int64_t":$target,
                        Rudnn_SizeAttr:$max);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

def Rudnn_SumSourceAttr : AttrDef<Rudnn_Dialect, "SumSource"> {
  let mnemonic = "sum";
  let summary = "A plan parameter: the sum of sizes of the ones before it";
  let description = [{
    `Σ terms`, each a `#rudnn.size` of the parameters before it: a bound
    no product states, such as the chunks of packed sequences (at most
    `ceil(T / chunk)` plus one per sequence).

    ```mlir
    #rudnn.sum<terms = [#rudnn.size<constant = 1, params = ["N"], divisor = 1>,
                        #rudnn.size<constant = 1, params = ["C"], divisor = 1>]>
    ```
  }];
  let parameters = (ins "ArrayAttr":$terms);
  let assemblyFormat = "`<` struct(params) `>`";
  let genVerifyDecl = 1;
}

#endif // RUDNN_ATTRS_TD
