// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose | FileCheck %s --check-prefix=DECOMPOSE
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose | rudnn-opt -split-input-file | FileCheck %s --check-prefix=DECOMPOSE
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose -rudnn-plan | FileCheck %s

// A forward saving its tiles: the solve keeps the backward's tiles too, no
// decode alternative (only the chunked kernels save tiles), and the tiles'
// memory, which the walk has written the updates into, is the caller's
// result: no workspace is left.
// DECOMPOSE-LABEL: func.func @forward
// DECOMPOSE-NOT: rudnn.dim_switch
// DECOMPOSE: %[[GAMMA:.*]] = rudnn.chunk_decay
// DECOMPOSE: %{{.*}}, %[[PAIRWISE:.*]] = rudnn.chunk_pairwise
// DECOMPOSE: %[[W:.*]], %{{.*}} = rudnn.chunk_solve {{.*}} chunk 32 for_backward :
// DECOMPOSE: %[[U:.*]], %[[BOUNDS:.*]], %{{.*}} = rudnn.chunk_propagate
// DECOMPOSE: %[[TILES:.*]] = rudnn.chunk_tiles_export %[[GAMMA]], %[[PAIRWISE]], %[[W]], %[[U]] chunk 32 : {{.*}} -> tensor<?x?x?x3856xf32>
// DECOMPOSE: return %{{.*}}, %[[BOUNDS]], %[[TILES]]
// CHECK-LABEL: rudnn.plan @forward
// CHECK: rudnn.buffer @boundaries "out"
// CHECK-NEXT: rudnn.buffer @tiles "out"
// CHECK-NOT: "workspace"
// CHECK: rudnn.launch @kda_bwd_prepare_f32_f32_f32_k16_v8_c32
// CHECK-SAME: args [@q, @q, @v, @q, @beta, @tiles,
// CHECK: rudnn.launch @kda_fwd_propagate_f32_f32_f32_k16_v8_c32
// CHECK-SAME: @boundaries, @tiles,
// CHECK: rudnn.launch @kda_fwd_output_f32_f32_f32_k16_v8_c32
func.func @forward(%q: tensor<?x?x?x16xf32>, %v: tensor<?x?x?x8xf32>,
                   %beta: tensor<?x?x?xf32>)
    -> (tensor<?x?x?x8xf32>, tensor<?x?x?x16x8xf32>, tensor<?x?x?x3856xf32>) {
  %o, %s, %b, %t = rudnn.kda %q, %q, %v, %q, %beta chunk 32 save_boundaries
      save_tiles
      : (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x8xf32>,
         tensor<?x?x?x16xf32>, tensor<?x?x?xf32>)
      -> (tensor<?x?x?x8xf32>, tensor<?x?x16x8xf32>, tensor<?x?x?x16x8xf32>,
          tensor<?x?x?x3856xf32>)
  return %o, %b, %t
      : tensor<?x?x?x8xf32>, tensor<?x?x?x16x8xf32>, tensor<?x?x?x3856xf32>
}

// -----

// A backward from saved boundaries and tiles computes nothing of the forward
// again: the chunk tiles are views of the saved tensor, and the plan is the
// reverse walk and the gradients, with the walk's scratch its only
// workspace.
// DECOMPOSE-LABEL: func.func @backward
// DECOMPOSE-SAME: %[[BOUNDS:[^:]*]]: tensor<?x?x?x16x8xf32>
// DECOMPOSE-SAME: %[[SAVED:[^:]*]]: tensor<?x?x?x3856xf32>
// DECOMPOSE: %[[GAMMA:.*]], %[[PAIRWISE:.*]], %[[W:.*]], %[[U:.*]] = rudnn.chunk_tiles_import %[[SAVED]] chunk 32
// DECOMPOSE-NOT: rudnn.chunk_decay
// DECOMPOSE-NOT: rudnn.chunk_solve
// DECOMPOSE: rudnn.chunk_state_gradient %{{.*}}, %{{.*}}, %[[GAMMA]], %[[PAIRWISE]], %[[W]],
// DECOMPOSE: rudnn.chunk_gradients {{.*}}, %[[PAIRWISE]], %[[U]], %[[BOUNDS]],
// CHECK-LABEL: rudnn.plan @backward
// CHECK: rudnn.buffer @boundaries "in"
// CHECK-NEXT: rudnn.buffer @tiles "in"
// CHECK: rudnn.buffer @scratch "workspace" bytes <constant = 1536, params = ["N", "B", "H"], divisor = 1>
// CHECK-NOT: prepare
// CHECK: rudnn.launch @kda_bwd_state_gradient_f32_f32_f32_k16_v8_c32
// CHECK-SAME: @tiles,
// CHECK: rudnn.launch @kda_bwd_gradients_f32_f32_f32_k16_v8_c32
// CHECK-SAME: @boundaries, @tiles,
// CHECK-NOT: rudnn.launch
func.func @backward(%q: tensor<?x?x?x16xf32>, %v: tensor<?x?x?x8xf32>,
                    %beta: tensor<?x?x?xf32>, %b: tensor<?x?x?x16x8xf32>,
                    %t: tensor<?x?x?x3856xf32>, %do: tensor<?x?x?x8xf32>)
    -> (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x8xf32>,
        tensor<?x?x?x16xf32>, tensor<?x?x?xf32>) {
  %dq, %dk, %dv, %dg, %db = rudnn.kda_backward %q, %q, %v, %q, %beta
      boundaries %b tiles %t d_output %do chunk 32
      : (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x8xf32>,
         tensor<?x?x?x16xf32>, tensor<?x?x?xf32>, tensor<?x?x?x16x8xf32>,
         tensor<?x?x?x3856xf32>, tensor<?x?x?x8xf32>)
      -> (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x8xf32>,
          tensor<?x?x?x16xf32>, tensor<?x?x?xf32>)
  return %dq, %dk, %dv, %dg, %db
      : tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x8xf32>,
        tensor<?x?x?x16xf32>, tensor<?x?x?xf32>
}
