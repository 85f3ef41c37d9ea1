// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose -rudnn-plan | FileCheck %s
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose -rudnn-plan | rudnn-opt -split-input-file | FileCheck %s

// A dynamic length: the chunked kernels for T >= 2 and the decode kernel for
// T = 1 in one plan; boundaries not returned live in the workspace after
// the chunk tiles (bf16, K = 128, V = 64, chunk 64: Γ, U0 and e^Γlast in
// fp32, 4·(64·(128 + 64) + 128) bytes, and the operand tiles in bf16,
// 2·64·(3·128 + 64 + 2·64) bytes: 123392 bytes per chunk and sequence).
// Every parameter is read from a bound view: B, T, H from q's shape, N =
// ceil(T / 64), then the strides.
// CHECK-LABEL: rudnn.plan @chunked params ["B", "T", "H", "N", "q_stride_batch"
// CHECK-SAME: sources [#rudnn.dim<buffer = "q", index = 0, divisor = 1>, #rudnn.dim<buffer = "q", index = 1, divisor = 1>, #rudnn.dim<buffer = "q", index = 2, divisor = 1>, #rudnn.dim<buffer = "q", index = 1, divisor = 64>, #rudnn.stride<buffer = "q", index = 0>, #rudnn.stride<buffer = "q", index = 1>
// CHECK-SAME: #rudnn.stride<buffer = "output", index = 2>]
// CHECK: rudnn.buffer @q "in"
// CHECK: rudnn.buffer @beta "in"
// CHECK-NOT: rudnn.buffer @initial_state
// CHECK: rudnn.buffer @output "out"
// CHECK: rudnn.buffer @final_state "out"
// CHECK: rudnn.buffer @tiles "workspace" bytes <constant = 123392, params = ["N", "B", "H"], divisor = 1>
// CHECK: rudnn.buffer @boundaries "workspace" bytes <constant = 32768, params = ["N", "B", "H"], divisor = 1> offset <constant = 123392, params = ["N", "B", "H"], divisor = 1>
// CHECK: rudnn.kernel @[[REC:kda_fwd_recurrent_bf16_f32_f32_k128_v64_c64]] stage "recurrent" threads 32
// CHECK: rudnn.launch @[[REC]] grid [#rudnn.size<constant = 1, params = ["B", "H"], divisor = 1>, #rudnn.size<constant = 2, params = [], divisor = 1>,
// CHECK-SAME: args [@q, @k, @v, @g, @beta, 0, @output, @final_state, @boundaries, @tiles, #rudnn.param<name = "q_stride_batch", bits = 64>
// CHECK-SAME: #rudnn.param<name = "B", bits = 32>, #rudnn.param<name = "T", bits = 32>, #rudnn.param<name = "H", bits = 32>, 0.0883883461 : f32]
// CHECK-SAME: {guard = "T", guard_max = 1 : i64, guard_min = 1 : i64}
// CHECK: rudnn.kernel @[[PREP:kda_fwd_prepare_bf16_f32_f32_k128_v64_c64]] stage "prepare" threads 128
// CHECK-SAME: fuses = ["rudnn.chunk_decay", "rudnn.chunk_pairwise", "rudnn.chunk_solve"]
// CHECK: rudnn.launch @[[PREP]] grid [#rudnn.size<constant = 1, params = ["N"], divisor = 1>, #rudnn.size<constant = 1, params = ["B", "H"], divisor = 1>
// CHECK-SAME: guard = "T", guard_max = 9223372036854775807 : i64, guard_min = 2 : i64
// CHECK: rudnn.kernel @kda_fwd_propagate_bf16_f32_f32_k128_v64_c64 stage "propagate"
// CHECK: rudnn.kernel @kda_fwd_output_bf16_f32_f32_k128_v64_c64 stage "output"
// CHECK-NOT: func.func
func.func @chunked(%q: tensor<?x?x?x128xbf16>, %v: tensor<?x?x?x64xbf16>,
                   %g: tensor<?x?x?x128xf32>, %beta: tensor<?x?x?xf32>)
    -> (tensor<?x?x?x64xbf16>, tensor<?x?x128x64xf32>) {
  %o, %s = rudnn.kda %q, %q, %v, %g, %beta
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
// CHECK-NOT: stage "recurrent"
// CHECK: rudnn.launch @kda_fwd_prepare_f32_f32_f32_k16_v16_c64
// CHECK-SAME: args [@q, @k, @v, @g, @beta, @initial_state, @output, 0, @boundaries, @tiles
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
