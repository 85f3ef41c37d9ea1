//===- RudnnPlanOps.td - Kernels, buffers and plans --------*- tablegen -*-===//
//
// What `rudnn-plan` turns the primitives of a function into: the buffers an
// operator call touches, the kernels the primitives are grouped into (each
// with its launch geometry), and the ordered launches with their argument
// bindings. Sizes are `#rudnn.size` expressions over the plan's named
// run-time parameters. The runtime's plan is this op, one to one.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_PLAN_OPS_TD
#define RUDNN_PLAN_OPS_TD

include "dialects/IR/RudnnBase.td"
include "dialects/IR/RudnnAttrs.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/RegionKindInterface.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Rudnn_PlanOp : Rudnn_Op<"plan", [
    Symbol, SymbolTable, NoTerminator, SingleBlock, IsolatedFromAbove,
    NoRegionArguments, HasOnlyGraphRegion, RegionKindInterface]> {
  let summary = "The kernels, buffers and launches of an operator call";
  let description = [{
    Holds `rudnn.buffer`, `rudnn.kernel` and `rudnn.launch` ops, in launch
    order. `params` names the run-time parameters (batch, length, heads,
    chunk count, strides) that sizes and arguments refer to; `sources`, when
    present, says where each comes from at a call (`#rudnn.dim`,
    `#rudnn.stride` of a bound buffer, or a `#rudnn.size` of the parameters
    before it: the dense strides of a tensor in the workspace), so a caller
    passes only views.

    ```mlir
    rudnn.plan @main params ["B", "T", "H", "N"]
        sources [#rudnn.dim<buffer = "q", index = 0, divisor = 1>, ...,
                 #rudnn.dim<buffer = "q", index = 1, divisor = 64>] {
      rudnn.buffer @q "in"
      rudnn.buffer @tiles workspace bytes #rudnn.size<constant = 37120,
          params = ["N", "B", "H"], divisor = 1>
      rudnn.kernel @prepare threads 128 { ... }
      rudnn.launch @prepare grid [...] args [@q, ...]
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, StrArrayAttr:$params,
                       OptionalAttr<ArrayAttr>:$sources);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `params` $params (`sources` $sources^)? attr-dict-with-keyword
    $body
  }];
  // After the nested ops: launches are looked up by a `kernel` attribute
  // that only their own verifier guarantees.
  let hasRegionVerifier = 1;
}

def Rudnn_BufferOp : Rudnn_Op<"buffer", [Symbol, HasParent<"PlanOp">]> {
  let summary = "Memory a plan reads or writes";
  let description = [{
    `access` says how the plan touches it: `in` buffers are read, `out`
    buffers written, `inout` buffers read and updated in place (a cache
    appended to); all three are bound to the caller's tensors at each call.
    `workspace` buffers live in one allocation of the plan, `bytes` at
    `offset`. An `out` buffer that `aliases` an `in` buffer may be bound to
    the same memory (an update in place, e.g. a final state over the
    initial state).

    ```mlir
    rudnn.buffer @final_state "out" aliases @initial_state
    rudnn.buffer @boundaries "workspace"
        bytes #rudnn.size<constant = 16384, params = ["N", "B", "H"], divisor = 1>
        offset #rudnn.size<constant = 37120, params = ["N", "B", "H"], divisor = 1>
    ```

    A workspace buffer that only guarded launches touch (one case of a
    `rudnn.dim_switch`) carries their `guard`: a call the guard skips gives
    it no memory. A `zeroed` workspace buffer is filled with zeros before
    each call's launches (a kernel's own counters, such as the next tile a
    persistent grid hands out):

    ```mlir
    rudnn.buffer @tile_counter "workspace" zeroed
        bytes #rudnn.size<constant = 4, params = [], divisor = 1>
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, StrAttr:$access,
                       OptionalAttr<FlatSymbolRefAttr>:$aliases,
                       OptionalAttr<Rudnn_SizeAttr>:$bytes,
                       OptionalAttr<Rudnn_SizeAttr>:$offset,
                       OptionalAttr<StrAttr>:$guard,
                       OptionalAttr<I64Attr>:$guard_min,
                       OptionalAttr<I64Attr>:$guard_max,
                       UnitAttr:$zeroed);
  let assemblyFormat = [{
    $sym_name $access (`aliases` $aliases^)? (`zeroed` $zeroed^)?
    (`bytes` $bytes^)?
    (`offset` $offset^)? attr-dict
  }];
  let hasVerifier = 1;
}

def Rudnn_KernelOp : Rudnn_Op<"kernel", [
    Symbol, HasParent<"PlanOp">, IsolatedFromAbove, SingleBlock]> {
  let summary = "A kernel of a plan: the primitives it computes, outlined";
  let description = [{
    One generated kernel, outlined by `rudnn-plan` like a GPU kernel: its
    region holds the primitives it computes, over block arguments for the
    values it reads from other kernels or the caller, and yields the values
    other kernels or the caller read. The emitter asks the last primitive
    for the device code; the C++ signature is built from the bindings that
    code asks for. `threads` is the block size, `shared_bytes` the dynamic
    shared memory of each block (above 48 KiB the kernel opts in to the
    device's limit); a `cooperative` kernel is launched grid-synchronised
    (all its blocks resident at once). `memory_bytes` and `flops`, when the
    emitter models them, are what one launch must move to and from device
    memory at least and its floating-point operations, in the plan's dims:
    the kernel report's roofline; `streamed_bytes`, a second term of the
    bytes moved over other dims (attention's keys and values, read at least
    once per key-value head however many query tiles share them).
    `flops_per_exponential`, where the kernel
    also takes an exponential (a special-function unit instruction) every
    so many FLOPs (attention: one a query and key, 2·(D + E) FLOPs), adds
    that unit's throughput to the roofline (`exponentials` counts them
    directly where no fixed ratio does; `polynomial_exponentials` counts
    those formed by a polynomial on the FMA pipes instead, each a fixed
    number of FP32 instructions); `flops_per_shared_byte`, where
    its tensor-core operands come from shared memory (a byte every so many
    FLOPs), adds the shared memory's bandwidth; `flops_per_reduced_byte`,
    where it adds partial sums into global memory (reductions or
    read-modify-writes that meet in L2, a byte every so many FLOPs), adds
    the L2's; `flops_per_l2_byte`, where its blocks read operand tiles
    through L2 that other blocks read too (a GEMM's row and column tiles,
    a byte every so many FLOPs), adds those bytes to the L2's. A
    recurrence's `serial_steps` depend on one another: each a
    block reads `step_bytes` through L2 and computes `step_flops`, then
    waits at a grid barrier (or, one step a launch, is launched): the
    report's serial bound; `step_fixed_bytes`, a second term of a step's
    bytes over other dims (a block's weights: read once each pass of
    entries, or loaded on chip once a launch for all of them). A walk's
    steps inside one launch (KDA's state walks: a chunk a step) give
    instead `step_barriers` and `step_mma_chain`, the block barriers and
    dependent tensor-core instructions on a step's critical path: their
    latency adds to the step's compute, its bytes (prefetched) overlap
    both, and nothing waits between steps. `tf32`: its tensor-core work
    rounds fp32 operands to TF32, at half the 16-bit rate.

    ```mlir
    rudnn.kernel @kda_fwd_output_f32_f32_f32_k16_v16_c64 threads 128 {
    ^bb0(%q: tensor<?x?x?x16xf32>, %gamma: tensor<?x?x?x64x16xf32>, ...):
      %o = rudnn.chunk_output %q, %gamma, ... chunk 64 scale 2.5e-01 : ...
      rudnn.yield %o : tensor<?x?x?x16xf32>
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, I64Attr:$threads,
                       DefaultValuedAttr<I64Attr, "0">:$shared_bytes,
                       UnitAttr:$cooperative,
                       OptionalAttr<Rudnn_SizeAttr>:$memory_bytes,
                       OptionalAttr<Rudnn_SizeAttr>:$streamed_bytes,
                       OptionalAttr<Rudnn_SizeAttr>:$flops,
                       OptionalAttr<I64Attr>:$flops_per_exponential,
                       OptionalAttr<Rudnn_SizeAttr>:$exponentials,
                       OptionalAttr<Rudnn_SizeAttr>:$polynomial_exponentials,
                       OptionalAttr<I64Attr>:$flops_per_shared_byte,
                       OptionalAttr<I64Attr>:$flops_per_reduced_byte,
                       OptionalAttr<I64Attr>:$flops_per_l2_byte,
                       OptionalAttr<Rudnn_SizeAttr>:$serial_steps,
                       OptionalAttr<Rudnn_SizeAttr>:$step_bytes,
                       OptionalAttr<Rudnn_SizeAttr>:$step_flops,
                       OptionalAttr<Rudnn_SizeAttr>:$step_fixed_bytes,
                       OptionalAttr<I64Attr>:$step_barriers,
                       OptionalAttr<I64Attr>:$step_mma_chain,
                       UnitAttr:$tf32);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $sym_name `threads` $threads (`shared_bytes` $shared_bytes^)?
    (`cooperative` $cooperative^)? (`memory_bytes` $memory_bytes^)?
    (`streamed_bytes` $streamed_bytes^)? (`flops` $flops^)?
    (`flops_per_exponential` $flops_per_exponential^)?
    (`exponentials` $exponentials^)?
    (`polynomial_exponentials` $polynomial_exponentials^)?
    (`flops_per_shared_byte` $flops_per_shared_byte^)?
    (`flops_per_reduced_byte` $flops_per_reduced_byte^)?
    (`flops_per_l2_byte` $flops_per_l2_byte^)?
    (`serial_steps` $serial_steps^)? (`step_bytes` $step_bytes^)?
    (`step_flops` $step_flops^)? (`step_fixed_bytes` $step_fixed_bytes^)?
    (`step_barriers` $step_barriers^)? (`step_mma_chain` $step_mma_chain^)?
    (`tf32` $tf32^)? attr-dict-with-keyword
    $body
  }];
  let hasVerifier = 1;
}

def Rudnn_YieldOp : Rudnn_Op<"yield", [
    Pure, Terminator, ReturnLike,
    ParentOneOf<["KernelOp", "DimSwitchOp"]>]> {
  let summary = "The values a kernel or a dim_switch case produces";
  let description = [{
    ```mlir
    rudnn.yield %o, %s : tensor<?x?x?x16xf32>, tensor<?x?x16x16xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$values);
  let assemblyFormat = [{ attr-dict ($values^ `:` type($values))? }];
}

def Rudnn_DimSwitchOp : Rudnn_Op<"dim_switch", [
    RecursiveMemoryEffects, NoRegionArguments]> {
  let summary = "Alternatives chosen per call by a run-time dim";
  let description = [{
    Case `i` computes the results when dim `index` of `value` lies in
    [`cases[i]`, `cases[i + 1]` − 1] (the last case has no upper bound), so
    one plan serves every size without a compile: `rudnn-plan` guards each
    case's launches by that range. An operator whose best kernels differ by
    a run-time size (a decode kernel for one token) decomposes into one.

    ```mlir
    %o, %s = rudnn.dim_switch %q[1] cases [1, 2]
        : tensor<?x?x?x64xf32> -> tensor<?x?x?x64xf32>, tensor<?x?x64x64xf32> {
      %o, %s = rudnn.kda_recurrent ...
      rudnn.yield %o, %s : ...
    }, {
      ...
    }
    ```
  }];
  let arguments = (ins AnyRankedTensor:$value, I64Attr:$index,
                       DenseI64ArrayAttr:$cases);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region VariadicRegion<SizedRegion<1>>:$alternatives);
  // Custom: the regions are parsed into the operation state, which outlives
  // a failed parse's forward references.
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def Rudnn_LaunchOp : Rudnn_Op<"launch", [HasParent<"PlanOp">]> {
  let summary = "One launch of a kernel with its argument bindings";
  let description = [{
    Launches `kernel` on `grid` (three `#rudnn.size`). Each entry of `args`
    binds one parameter of the kernel's signature, in order: a buffer
    (`@name`), a null pointer or zero (`0 : i64`), a parameter
    (`#rudnn.param`) or an f32 constant. With `guard`, the launch runs only
    while that parameter lies in [`guard_min`, `guard_max`]: plans carry
    alternatives (the decode kernel for T = 1) chosen per call. With
    `repeat`, the launch runs that parameter's value times in a row, each
    one passed its index as a last i32 argument: a kernel per time step of a
    recurrence, ordered on the stream.

    ```mlir
    rudnn.launch @recurrent grid [#rudnn.size<...>, #rudnn.size<...>,
        #rudnn.size<...>] args [@q, @k, 0 : i64, #rudnn.param<name = "B",
        bits = 32>, 1.250000e-01 : f32] {guard = "T", guard_min = 1,
        guard_max = 1}
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$kernel, ArrayAttr:$grid,
                       ArrayAttr:$args, OptionalAttr<StrAttr>:$guard,
                       OptionalAttr<I64Attr>:$guard_min,
                       OptionalAttr<I64Attr>:$guard_max,
                       OptionalAttr<StrAttr>:$repeat);
  let assemblyFormat = [{
    $kernel `grid` $grid `args` $args attr-dict
  }];
  let hasVerifier = 1;
}

#endif // RUDNN_PLAN_OPS_TD
