// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose -rudnn-plan | FileCheck %s
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose -rudnn-plan | rudnn-opt -split-input-file | FileCheck %s
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-to-cuda -split-input-file | FileCheck %s --check-prefix=CUDA

// A dynamic length: the decode kernel for T = 1 and the chunked kernels for
// T >= 2 in one plan (the mma.sync chain, `wgmma false`; the wgmma walk's is
// in the kernel report's tests), each guarded by its case of the
// rudnn.dim_switch;
// boundaries not returned live in the workspace after the chunk tiles (bf16,
// K = 128, V = 64, chunk 64: e^Γlast in fp32, 4·128 bytes, and W, Kd, B and
// U in bf16, 2·64·(2·128 + 64 + 64) bytes: 49664 bytes per chunk and
// sequence; the boundary states in bf16 too, 2·128·64 bytes). Every parameter is read from a bound
// view: B, H, T from q's shape (the function's first tensor laid out with
// them), N = ceil(T / 64), then the strides. Each kernel is an isolated
// region holding its primitives; one argument passed as q and k is one
// buffer.
// CHECK-LABEL: rudnn.plan @chunked params ["B", "H", "T", "N", "q_stride0"
// CHECK-SAME: sources [#rudnn.dim<buffer = "q", index = 0, divisor = 1>, #rudnn.dim<buffer = "q", index = 2, divisor = 1>, #rudnn.dim<buffer = "q", index = 1, divisor = 1>, #rudnn.dim<buffer = "q", index = 1, divisor = 64>, #rudnn.stride<buffer = "q", index = 0>
// CHECK-SAME: #rudnn.stride<buffer = "output", index = 2>]
// CHECK: rudnn.buffer @q "in"
// CHECK-NOT: rudnn.buffer @k
// CHECK: rudnn.buffer @beta "in"
// CHECK-NOT: rudnn.buffer @initial_state
// CHECK: rudnn.buffer @output "out"
// CHECK: rudnn.buffer @final_state "out"
// CHECK: rudnn.buffer @tiles "workspace" bytes <constant = 49664, params = ["N", "B", "H"], divisor = 1>
// CHECK: rudnn.buffer @boundaries "workspace" bytes <constant = 16384, params = ["N", "B", "H"], divisor = 1>
// CHECK-NOT: offset
// CHECK: rudnn.kernel @[[REC:kda_fwd_recurrent_bf16_f32_f32_k128_v64_c64]] threads 32 {{.*}}{
// CHECK-NEXT: ^bb0(%[[RQ:.*]]: tensor<?x?x?x128xbf16>, %[[RV:.*]]: tensor<?x?x?x64xbf16>, %[[RG:.*]]: tensor<?x?x?x128xf32>, %[[RB:.*]]: tensor<?x?x?xf32>):
// CHECK-NEXT: %[[RO:.*]], %[[RS:.*]] = rudnn.kda_recurrent %[[RQ]], %[[RQ]], %[[RV]], %[[RG]], %[[RB]] chunk 64
// CHECK-NEXT: rudnn.yield %[[RO]], %[[RS]]
// CHECK: rudnn.launch @[[REC]] grid [#rudnn.size<constant = 1, params = ["B", "H"], divisor = 1>, #rudnn.size<constant = 2, params = [], divisor = 1>,
// CHECK-SAME: args [@q, @q, @v, @g, @beta, @output, @final_state, #rudnn.param<name = "q_stride0", bits = 64>
// CHECK-SAME: #rudnn.param<name = "B", bits = 32>, #rudnn.param<name = "T", bits = 32>, #rudnn.param<name = "H", bits = 32>, 0.0883883461 : f32, #rudnn.param<name = "H", bits = 32>]
// CHECK-SAME: {guard = "T", guard_max = 1 : i64, guard_min = 1 : i64}
// CHECK: rudnn.kernel @[[PREP:kda_fwd_prepare_bf16_f32_f32_k128_v64_c64]] threads 128 {{.*}}{
// CHECK: rudnn.chunk_decay
// CHECK-NEXT: rudnn.chunk_pairwise
// CHECK-NEXT: rudnn.chunk_solve
// CHECK-NEXT: rudnn.yield
// CHECK: rudnn.launch @[[PREP]] grid [#rudnn.size<constant = 1, params = ["N"], divisor = 1>, #rudnn.size<constant = 1, params = ["B", "H"], divisor = 1>
// CHECK-SAME: args [@q, @q, @v, @g, @beta, @tiles,
// CHECK-SAME: guard = "T", guard_max = 9223372036854775807 : i64, guard_min = 2 : i64
// The walk's cost model per chunk of a head: W and Kd (2·64·128·2), U0 and
// U (2·64·64·2), e^Γlast (4·128) and the bf16 boundary (2·128·64) bytes;
// W·S and Kdᵀ·U, 4·64·128·64 flops. Its N chunks run one after another, a
// block's each (16 value columns): W and Kd whole, its U0, U and boundary
// columns, e^Γlast (41472 bytes), 4·64·128·16 flops, four block barriers
// and 8 + 4 dependent mma.
// CHECK: rudnn.kernel @kda_fwd_propagate_bf16_bf16_bf16_k128_v64_c64 threads 128 shared_bytes 76800
// CHECK-SAME: memory_bytes <constant = 66048, params = ["N", "B", "H"], divisor = 1>
// CHECK-SAME: flops <constant = 2097152, params = ["N", "B", "H"], divisor = 1>
// CHECK-SAME: serial_steps <constant = 1, params = ["N"], divisor = 1> step_bytes <constant = 41472, params = [], divisor = 1>
// CHECK-SAME: step_flops <constant = 524288, params = [], divisor = 1> step_barriers 4 step_mma_chain 12 {
// CHECK: rudnn.launch @kda_fwd_propagate_bf16_bf16_bf16_k128_v64_c64
// CHECK-SAME: args [@q, @final_state, @boundaries, @tiles,
// CHECK: rudnn.kernel @kda_fwd_output_bf16_f32_bf16_k128_v64_c64 threads 128
// CHECK-NOT: func.func
func.func @chunked(%q: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x64xbf16>,
                   %g: tensor<?x?x?x128xf32>, %beta: tensor<?x?x?xf32>)
    -> (tensor<?x?x?x64xbf16>, tensor<?x?x128x64xf32>) {
  %o, %s = rudnn.kda %q, %q, %v, %g, %beta wgmma false
      : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x64xbf16>,
         tensor<?x?x?x128xf32>, tensor<?x?x?xf32>)
      -> (tensor<?x?x?x64xbf16>, tensor<?x?x128x64xf32>)
  return %o, %s : tensor<?x?x?x64xbf16>, tensor<?x?x128x64xf32>
}

// -----

// A static length of 100 needs no decode alternative and no guards;
// returned boundaries are a result, and an unreturned final state a null
// pointer.
// CHECK-LABEL: rudnn.plan @saved
// CHECK: rudnn.buffer @initial_state "in"
// CHECK-NOT: @final_state "out"
// CHECK: rudnn.buffer @boundaries "out"
// CHECK-NOT: recurrent
// CHECK: rudnn.launch @kda_fwd_prepare_f32_f32_f32_k16_v16_c64
// CHECK: rudnn.launch @kda_fwd_propagate_f32_f32_f32_k16_v16_c64
// CHECK-SAME: args [@q, @initial_state, 0, @boundaries, @tiles
// CHECK-NOT: guard
func.func @saved(%q: tensor<1x100x2x16xf32>, %beta: tensor<1x100x2xf32>,
                 %s0: tensor<1x2x16x16xf32>)
    -> (tensor<1x100x2x16xf32>, tensor<2x1x2x16x16xf32>) {
  %o, %s, %b = rudnn.kda %q, %q, %q, %q, %beta initial_state %s0 save_boundaries
      : (tensor<1x100x2x16xf32>, tensor<1x100x2x16xf32>, tensor<1x100x2x16xf32>,
         tensor<1x100x2x16xf32>, tensor<1x100x2xf32>, tensor<1x2x16x16xf32>)
      -> (tensor<1x100x2x16xf32>, tensor<1x2x16x16xf32>, tensor<?x1x2x16x16xf32>)
  %c = tensor.cast %b : tensor<?x1x2x16x16xf32> to tensor<2x1x2x16x16xf32>
  return %o, %c : tensor<1x100x2x16xf32>, tensor<2x1x2x16x16xf32>
}

// -----

// A returned final state over a given initial state may be updated in place:
// its buffer aliases the initial state's.
// CHECK-LABEL: rudnn.plan @in_place
// CHECK: rudnn.buffer @initial_state "in"
// CHECK: rudnn.buffer @final_state "out" aliases @initial_state
func.func @in_place(%q: tensor<1x40x2x16xf32>, %beta: tensor<1x40x2xf32>,
                    %s0: tensor<1x2x16x16xf32>)
    -> (tensor<1x40x2x16xf32>, tensor<1x2x16x16xf32>) {
  %o, %s = rudnn.kda %q, %q, %q, %q, %beta initial_state %s0
      : (tensor<1x40x2x16xf32>, tensor<1x40x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<1x40x2x16xf32>, tensor<1x40x2xf32>, tensor<1x2x16x16xf32>)
      -> (tensor<1x40x2x16xf32>, tensor<1x2x16x16xf32>)
  return %o, %s : tensor<1x40x2x16xf32>, tensor<1x2x16x16xf32>
}

// -----

// Two operators in one function: the first one's output, read only by the
// second, lives in the workspace, which the second reads through dense
// strides derived from the dims (T·H·16, H·16, 16); each operator has its
// own tiles and boundaries, and identical kernels are emitted once.
// CHECK-LABEL: rudnn.plan @two_ops
// CHECK-SAME: "output_1_stride0", "output_1_stride1", "output_1_stride2"]
// CHECK-SAME: #rudnn.size<constant = 16, params = ["T", "H"], divisor = 1>, #rudnn.size<constant = 16, params = ["H"], divisor = 1>, #rudnn.size<constant = 16, params = [], divisor = 1>]
// CHECK: rudnn.buffer @output "out"
// CHECK-NEXT: rudnn.buffer @[[MID:output_1]] "workspace" bytes <constant = 64, params = ["B", "T", "H"], divisor = 1>
// CHECK-NEXT: rudnn.buffer @tiles "workspace"
// CHECK-NEXT: rudnn.buffer @boundaries "workspace"
// CHECK-NEXT: rudnn.buffer @tiles_1 "workspace"
// CHECK-NEXT: rudnn.buffer @boundaries_1 "workspace"
// CHECK-NOT: rudnn.buffer
// CHECK: rudnn.launch @[[OUT:kda_fwd_output_f32_f32_f32_k16_v16_c16]]
// CHECK-SAME: args [@q, @g, @[[MID]], @boundaries, @tiles
// CHECK: rudnn.launch @kda_fwd_recurrent_f32_f32_f32_k16_v16_c16
// CHECK-SAME: args [@q, @q, @[[MID]], @g, @beta, @output,
// CHECK-SAME: #rudnn.param<name = "output_1_stride0", bits = 64>
// CHECK: rudnn.launch @kda_fwd_prepare_f32_f32_f32_k16_v16_c16
// CHECK-SAME: args [@q, @q, @[[MID]], @g, @beta, @tiles_1
// CHECK: rudnn.launch @[[OUT]]
// CHECK-SAME: args [@q, @g, @output, @boundaries_1, @tiles_1
// CHECK-NOT: rudnn.kernel
// CUDA: ----- kernel kda_fwd_recurrent_f32_f32_f32_k16_v16_c16
// CUDA: ----- kernel kda_fwd_prepare_f32_f32_f32_k16_v16_c16
// CUDA: ----- kernel kda_fwd_propagate_f32_f32_f32_k16_v16_c16
// CUDA: ----- kernel kda_fwd_output_f32_f32_f32_k16_v16_c16
// CUDA-NOT: ----- kernel
func.func @two_ops(%q: tensor<?x?x?x16xf32>, %v: tensor<?x?x?x16xf32>,
                   %g: tensor<?x?x?x16xf32>, %beta: tensor<?x?x?xf32>)
    -> tensor<?x?x?x16xf32> {
  %o1, %s1 = rudnn.kda %q, %q, %v, %g, %beta chunk 16
      : (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>,
         tensor<?x?x?x16xf32>, tensor<?x?x?xf32>)
      -> (tensor<?x?x?x16xf32>, tensor<?x?x16x16xf32>)
  %o2, %s2 = rudnn.kda %q, %q, %o1, %g, %beta chunk 16
      : (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>,
         tensor<?x?x?x16xf32>, tensor<?x?x?xf32>)
      -> (tensor<?x?x?x16xf32>, tensor<?x?x16x16xf32>)
  return %o2 : tensor<?x?x?x16xf32>
}

// -----

// A declaration has no body to plan and stays as it is.
// CHECK-LABEL: func.func private @declared
// CHECK-NOT: rudnn.plan
func.func private @declared(tensor<?x?x?x8xf32>) -> tensor<?x?x?x8xf32>

// -----

// An output nobody reads still has memory (its kernel writes it): the
// output of a forward whose function returns only the final state lives
// in the workspace; a final state nobody reads has none (its kernels skip
// a null state).
// CHECK-LABEL: rudnn.plan @output_not_returned
// CHECK: rudnn.buffer @final_state "out"
// CHECK: rudnn.buffer @output "workspace" bytes <constant = 64, params = ["B", "T", "H"], divisor = 1>
// CHECK-LABEL: rudnn.plan @final_state_not_returned
// CHECK: rudnn.buffer @output "out"
// CHECK-NOT: rudnn.buffer @final_state
// CHECK: rudnn.kernel
// Both plans run the same kernels.
// CUDA: ----- kernel kda_fwd_recurrent_f32_f32_f32_k32_v16_c16
// CUDA: ----- kernel kda_fwd_output_f32_f32_f32_k32_v16_c16
// CUDA: ----- kernel kda_fwd_recurrent_f32_f32_f32_k32_v16_c16
func.func @output_not_returned(%q: tensor<?x?x?x32xf32>,
                               %v: tensor<?x?x?x16xf32>,
                               %beta: tensor<?x?x?xf32>)
    -> (tensor<?x?x32x16xf32> {rudnn.name = "final_state"}) {
  %o, %s = rudnn.kda %q, %q, %v, %q, %beta chunk 16
      : (tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>, tensor<?x?x?x16xf32>,
         tensor<?x?x?x32xf32>, tensor<?x?x?xf32>)
      -> (tensor<?x?x?x16xf32>, tensor<?x?x32x16xf32>)
  return %s : tensor<?x?x32x16xf32>
}

func.func @final_state_not_returned(%q: tensor<?x?x?x32xf32>,
                                    %v: tensor<?x?x?x16xf32>,
                                    %beta: tensor<?x?x?xf32>)
    -> (tensor<?x?x?x16xf32> {rudnn.name = "output"}) {
  %o, %s = rudnn.kda %q, %q, %v, %q, %beta chunk 16
      : (tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>, tensor<?x?x?x16xf32>,
         tensor<?x?x?x32xf32>, tensor<?x?x?xf32>)
      -> (tensor<?x?x?x16xf32>, tensor<?x?x32x16xf32>)
  return %o : tensor<?x?x?x16xf32>
}
