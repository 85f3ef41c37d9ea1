// RUN: rudnn-opt %s -rudnn-specialize -rudnn-decompose | FileCheck %s --check-prefix=DECOMPOSE
// RUN: rudnn-opt %s -rudnn-specialize -rudnn-decompose | rudnn-opt | FileCheck %s --check-prefix=DECOMPOSE
// RUN: rudnn-opt %s -rudnn-specialize -rudnn-decompose -rudnn-plan | FileCheck %s
// RUN: rudnn-opt %s -rudnn-specialize -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-to-cuda | FileCheck %s --check-prefix=CUDA

// Given the forward's saved boundaries, the backward forms the chunk updates
// from them chunk-parallel (chunk_restore) instead of walking the chunks,
// in the same block that prepared the chunk: one kernel holds decay,
// pairwise, solve and restore. The boundaries are a plan argument and the
// scratch follows the tiles in the workspace.
// DECOMPOSE-LABEL: func.func @saved
// DECOMPOSE-SAME: %[[BOUNDS:[^:]*]]: tensor<?x?x?x16x8xf32>
// DECOMPOSE: %[[W:.*]], %[[U0:.*]] = rudnn.chunk_solve {{.*}} chunk 32 for_backward :
// DECOMPOSE-NOT: rudnn.chunk_propagate
// DECOMPOSE: %[[U:.*]] = rudnn.chunk_restore %[[W]], %[[U0]], %[[BOUNDS]] chunk 32
// DECOMPOSE: rudnn.chunk_gradients {{.*}}, %[[U]], %[[BOUNDS]],
// CHECK-LABEL: rudnn.plan @saved
// CHECK-NOT: @initial_state
// CHECK: rudnn.buffer @boundaries "in"
// CHECK: rudnn.buffer @tiles "workspace" bytes <constant = 15424, params = ["N", "B", "H"], divisor = 1>
// CHECK-NEXT: rudnn.buffer @scratch "workspace" bytes <constant = 1536, params = ["N", "B", "H"], divisor = 1>
// CHECK: rudnn.kernel @[[PREP:kda_bwd_prepare_restore_f32_f32_f32_k16_v8_c32]] threads 128
// CHECK: rudnn.chunk_solve
// CHECK-NEXT: rudnn.chunk_restore
// CHECK-NEXT: rudnn.yield
// CHECK-NOT: rudnn.chunk_propagate
// CHECK: rudnn.launch @[[PREP]] grid [#rudnn.size<constant = 1, params = ["N"], divisor = 1>, #rudnn.size<constant = 1, params = ["B", "H"], divisor = 1>
// CHECK-SAME: args [@q, @q, @v, @q, @beta, @boundaries, @tiles
// CHECK: rudnn.kernel @kda_bwd_state_gradient_f32_f32_f32_k16_v8_c32
// CHECK: rudnn.kernel @kda_bwd_gradients_f32_f32_f32_k16_v8_c32
// CUDA: __global__ void kda_bwd_prepare_restore_f32_f32_f32_k16_v8_c32(
// CUDA: rudnn::kda::prepare<16, 8, 32, rudnn::kda::Keep::Backward>(f);
// CUDA-NEXT: __syncthreads();
// CUDA-NEXT: rudnn::kda::restore<16, 8, 32>(p);
func.func @saved(%q: tensor<?x?x?x16xf32>, %v: tensor<?x?x?x8xf32>,
                    %beta: tensor<?x?x?xf32>, %b: tensor<?x?x?x16x8xf32>,
                    %do: tensor<?x?x?x8xf32>)
    -> (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x8xf32>,
        tensor<?x?x?x16xf32>, tensor<?x?x?xf32>) {
  %dq, %dk, %dv, %dg, %db = rudnn.kda_backward %q, %q, %v, %q, %beta
      boundaries %b d_output %do chunk 32
      : (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x8xf32>,
         tensor<?x?x?x16xf32>, tensor<?x?x?xf32>, tensor<?x?x?x16x8xf32>,
         tensor<?x?x?x8xf32>)
      -> (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x8xf32>,
          tensor<?x?x?x16xf32>, tensor<?x?x?xf32>)
  return %dq, %dk, %dv, %dg, %db
      : tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x8xf32>,
        tensor<?x?x?x16xf32>, tensor<?x?x?xf32>
}
