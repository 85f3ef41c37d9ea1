//===- Passes.td - rudnn passes ----------------------------*- tablegen -*-===//

#ifndef RUDNN_CODEGEN_TRANSFORMS_PASSES_TD
#define RUDNN_CODEGEN_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

def RudnnSpecialize : Pass<"rudnn-specialize", "::mlir::ModuleOp"> {
  let summary = "Bind the target and choose every compile-time parameter";
  let description = [{
    Attaches a `#rudnn.target` built from the pass options to the module (an
    existing one is replaced) and fills in every compile-time parameter an
    operator op leaves open:

    * an attribute named by the `set` option (`set=chunk=32`), on every
      operator op that declares it and leaves it open: forced before the
      op's policy chooses the rest, and checked by its verifier;
    * the rest by each op's policy, e.g. KDA's `chunk`, the largest of 64,
      32 and 16 at which every KDA kernel's shared memory fits
      `smem-per-block` for the op's K, V and input type, and its `scale`,
      K^-0.5. Values already on an op are kept.

    Result sizes that depend on a chosen value (the words of a KDA
    forward's saved tiles, fixed by its chunk) become static, and the
    functions returning them take the new types. Batch, heads and sequence
    lengths stay dynamic: changing them never changes the generated code.

    Before (`-rudnn-specialize`, H200 defaults):

    ```mlir
    func.func @f(%q: tensor<?x?x?x64xf32>, ...) -> ... {
      %o, %s = rudnn.kda %q, %k, %v, %g, %beta : (...) -> (...)
    }
    ```

    After:

    ```mlir
    module attributes {rudnn.target = #rudnn.target<arch = "sm_90", lanes = 32,
                       smem_per_block = 232448, sm_count = 132>} {
      func.func @f(%q: tensor<?x?x?x64xf32>, ...) -> ... {
        %o, %s = rudnn.kda %q, %k, %v, %g, %beta chunk 64 scale 1.250000e-01
            : (...) -> (...)
      }
    }
    ```
  }];
  let options = [
    Option<"arch", "arch", "std::string", /*default=*/"\"sm_90\"",
           "Target architecture (sm_80, sm_86, sm_89, sm_90, sm_90a, ...)">,
    Option<"lanes", "lanes", "int64_t", /*default=*/"32",
           "Lanes of a warp">,
    Option<"smemPerBlock", "smem-per-block", "int64_t", /*default=*/"232448",
           "Shared memory one block may use, in bytes (opt-in maximum)">,
    Option<"smCount", "sm-count", "int64_t", /*default=*/"132",
           "Number of streaming multiprocessors">,
    ListOption<"set", "set", "std::string",
               "Attributes to force, name=value (an MLIR attribute, e.g. "
               "chunk=32), on every operator op declaring one it leaves open">,
  ];
  let dependentDialects = ["::mlir::rudnn::RudnnDialect"];
}

def RudnnDecompose : Pass<"rudnn-decompose", "::mlir::ModuleOp"> {
  let summary = "Operator ops to chunked-recurrence primitives";
  let description = [{
    Rewrites each specialized `rudnn.kda` (chunk and scale set: run
    `rudnn-specialize` first) into the chunked-recurrence primitives: the
    in-chunk cumulative decay, the pairwise chunk matrices, the unit
    lower-triangular solve, the state propagation across chunks and the
    chunk output. A sequence statically one token long becomes one
    `rudnn.kda_recurrent` instead.

    Before:

    ```mlir
    %o, %s = rudnn.kda %q, %k, %v, %g, %beta chunk 64 scale 1.250000e-01
        : (...) -> (tensor<?x?x?x64xf32>, tensor<?x?x64x64xf32>)
    ```

    After:

    ```mlir
    %gamma = rudnn.chunk_decay %g chunk 64 : ... -> tensor<?x?x?x64x64xf32>
    %strict, %pairwise = rudnn.chunk_pairwise %q, %k, %beta, %gamma chunk 64
    %w, %u0 = rudnn.chunk_solve %strict, %k, %v, %beta, %gamma chunk 64
    %u, %boundaries, %s = rudnn.chunk_propagate %w, %u0, %k, %gamma chunk 64
    %o = rudnn.chunk_output %q, %gamma, %pairwise, %u, %boundaries chunk 64
        scale 1.250000e-01
    ```
  }];
  let dependentDialects = ["::mlir::rudnn::RudnnDialect",
                           "::mlir::tensor::TensorDialect"];
}

def RudnnPlan : Pass<"rudnn-plan", "::mlir::ModuleOp"> {
  let summary = "Group primitives into kernels; buffers, workspace, launches";
  let description = [{
    Replaces each function of primitives by a `rudnn.plan` of the same
    name, through the primitive interface alone:

    - consecutive primitives of one kernel group that feed each other are
      outlined into a `rudnn.kernel`, an isolated region over block
      arguments for what it reads, yielding what others read; a
      `rudnn.dim_switch` case's kernels are launched guarded by its range;
    - the kernel's last primitive emits it (`emitKernel`): the C++ signature
      comes from the bindings it asks for, the block and grid from it too;
      identical kernels are emitted once;
    - each value crossing kernels gets a buffer: `in` for an argument,
      `out` for a result (`aliases` where the contract allows an update in
      place), else packed workspace sized by `getResultStorage` (values kept
      in one layout share it); a result nobody reads binds a null pointer;
    - run-time parameters: a dim letter is read from the first argument laid
      out with it (`rudnn.layout`), strides from the bound views, and the
      dense strides of a tensor in the workspace derived from dims.

    Functions of several operators plan into one plan, intermediates in the
    workspace.

    Before (after `-rudnn-decompose`):

    ```mlir
    func.func @main(%q: tensor<1x100x2x16xf32> {rudnn.layout = "BTHK",
                                               rudnn.name = "q"}, ...) {
      %gamma = rudnn.chunk_decay %g chunk 64 : ...
      ...
      %o = rudnn.chunk_output ... chunk 64 scale 2.500000e-01 : ...
      return %o : ...
    }
    ```

    After:

    ```mlir
    rudnn.plan @main params ["N", "B", "H", "T", "q_stride0", ...]
        sources [#rudnn.dim<buffer = "q", index = 1, divisor = 64>, ...] {
      rudnn.buffer @q "in"
      rudnn.buffer @output "out"
      rudnn.buffer @tiles "workspace" bytes <constant = 57408,
          params = ["N", "B", "H"], divisor = 1>
      rudnn.kernel @kda_fwd_prepare_f32_f32_f32_k16_v16_c64 threads 128 {
      ^bb0(%g: tensor<1x100x2x16xf32>, ...):
        %gamma = rudnn.chunk_decay %g chunk 64 : ...
        ...
        rudnn.yield %gamma, %pairwise, %w, %u0 : ...
      }
      rudnn.launch @kda_fwd_prepare_f32_f32_f32_k16_v16_c64 grid [...]
          args [@q, @q, @q, @g, @beta, 0, 0, 0, 0, @tiles, ...]
      ...
    }
    ```
  }];
  let dependentDialects = ["::mlir::rudnn::RudnnDialect"];
}

#endif // RUDNN_CODEGEN_TRANSFORMS_PASSES_TD
