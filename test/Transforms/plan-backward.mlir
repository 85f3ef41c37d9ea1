// RUN: rudnn-opt %s -rudnn-specialize -rudnn-decompose -rudnn-plan | FileCheck %s
// RUN: rudnn-opt %s -rudnn-specialize -rudnn-decompose -rudnn-plan | rudnn-opt | FileCheck %s
// RUN: rudnn-opt %s -rudnn-specialize -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-to-cuda | FileCheck %s --check-prefix=CUDA

// The backward plan reruns the forward's prepare (keeping what the backward
// reads besides: a backward kernel) and propagate (no output, no final
// state), then walks the chunks in reverse for the state gradient
// and takes the input gradients chunk by chunk; its scratch follows the
// tiles and boundaries in the workspace.
// CHECK-LABEL: rudnn.plan @backward params ["N", "B", "H", "T", "q_stride0"
// CHECK: rudnn.buffer @[[Q:q]] "in"
// CHECK: rudnn.buffer @initial_state "in"
// CHECK: rudnn.buffer @d_output "in"
// CHECK-NOT: @d_final_state
// CHECK: rudnn.buffer @dq "out"
// CHECK: rudnn.buffer @dbeta "out"
// CHECK: rudnn.buffer @d_initial_state "out"
// CHECK: rudnn.buffer @tiles "workspace"
// CHECK-NEXT: rudnn.buffer @boundaries "workspace"
// CHECK-NEXT: rudnn.buffer @scratch "workspace"
// CHECK: rudnn.kernel @[[PREP:kda_bwd_prepare_f32_f32_f32_k16_v8_c64]] threads 128
// CHECK: rudnn.launch @[[PREP]]
// CHECK-SAME: args [@q, @q, @v, @q, @beta, @tiles
// CHECK: rudnn.kernel @[[PROP:kda_fwd_propagate_f32_f32_f32_k16_v8_c64]] threads 128
// CHECK: rudnn.launch @[[PROP]]
// CHECK-SAME: args [@q, @initial_state, 0, @boundaries, @tiles
// CHECK: rudnn.kernel @[[STATE:kda_bwd_state_gradient_f32_f32_f32_k16_v8_c64]] threads 128
// CHECK: rudnn.launch @[[STATE]]
// CHECK-SAME: @d_output, @d_initial_state, @scratch
// CHECK: rudnn.kernel @[[GRAD:kda_bwd_gradients_f32_f32_f32_k16_v8_c64]] threads 256
// CHECK: rudnn.launch @[[GRAD]]
// CHECK-SAME: @d_output, @dq, @dk, @dv, @dg, @dbeta, @scratch
// CHECK-NOT: func.func
// CUDA: __global__ void kda_bwd_prepare_f32_f32_f32_k16_v8_c64(
// CUDA: rudnn::kda::prepare<16, 8, 64, rudnn::kda::Keep::Backward>(f);
// CUDA: __global__ void kda_fwd_propagate_f32_f32_f32_k16_v8_c64(
// CUDA: __global__ void kda_bwd_state_gradient_f32_f32_f32_k16_v8_c64(
// CUDA: rudnn::kda::state_gradient<16, 8, 64, 32>(p);
// CUDA: __global__ void __launch_bounds__(256, 2) kda_bwd_gradients_f32_f32_f32_k16_v8_c64(
// CUDA: rudnn::kda::gradients<16, 8, 64>(p);
func.func @backward(%q: tensor<?x?x?x16xf32>, %v: tensor<?x?x?x8xf32>,
                    %beta: tensor<?x?x?xf32>, %s0: tensor<?x?x16x8xf32>,
                    %do: tensor<?x?x?x8xf32>)
    -> (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x8xf32>,
        tensor<?x?x?x16xf32>, tensor<?x?x?xf32>, tensor<?x?x16x8xf32>) {
  %dq, %dk, %dv, %dg, %db, %ds0 = rudnn.kda_backward %q, %q, %v, %q, %beta
      initial_state %s0 d_output %do
      : (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x8xf32>,
         tensor<?x?x?x16xf32>, tensor<?x?x?xf32>, tensor<?x?x16x8xf32>,
         tensor<?x?x?x8xf32>)
      -> (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x8xf32>,
          tensor<?x?x?x16xf32>, tensor<?x?x?xf32>, tensor<?x?x16x8xf32>)
  return %dq, %dk, %dv, %dg, %db, %ds0
      : tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x8xf32>,
        tensor<?x?x?x16xf32>, tensor<?x?x?xf32>, tensor<?x?x16x8xf32>
}
