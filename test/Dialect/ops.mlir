// RUN: rudnn-opt %s -split-input-file | rudnn-opt -split-input-file | FileCheck %s
// RUN: rudnn-opt %s -split-input-file -mlir-print-op-generic | rudnn-opt -split-input-file | FileCheck %s

// The forward with only the required operands and dynamic B, T, H.
// CHECK-LABEL: func.func @kda_minimal
// CHECK-SAME: (%[[Q:.*]]: tensor<?x?x?x64xbf16>, %[[K:.*]]: tensor<?x?x?x64xbf16>, %[[V:.*]]: tensor<?x?x?x32xbf16>, %[[G:.*]]: tensor<?x?x?x64xf32>, %[[BETA:.*]]: tensor<?x?x?xf32>)
// CHECK: %[[O:.*]], %[[S:.*]] = rudnn.kda %[[Q]], %[[K]], %[[V]], %[[G]], %[[BETA]] :
// CHECK-SAME: -> (tensor<?x?x?x32xbf16>, tensor<?x?x64x32xf32>)
// CHECK: return %[[O]], %[[S]]
func.func @kda_minimal(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>,
                       %v: tensor<?x?x?x32xbf16>, %g: tensor<?x?x?x64xf32>,
                       %beta: tensor<?x?x?xf32>)
    -> (tensor<?x?x?x32xbf16>, tensor<?x?x64x32xf32>) {
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta
      : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x32xbf16>,
         tensor<?x?x?x64xf32>, tensor<?x?x?xf32>)
      -> (tensor<?x?x?x32xbf16>, tensor<?x?x64x32xf32>)
  return %o, %s : tensor<?x?x?x32xbf16>, tensor<?x?x64x32xf32>
}

// -----

// The forward with every operand and attribute, static shapes; the
// boundaries in q's type.
// CHECK-LABEL: func.func @kda_full
// CHECK: %{{.*}}, %{{.*}}, %[[B:.*]] = rudnn.kda %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} initial_state %[[S0:[^ ]*]] chunk 32 scale 2.500000e-01 save_boundaries :
// CHECK-SAME: tensor<3x2x4x16x8xf16>
// CHECK: return {{.*}}%[[B]]
func.func @kda_full(%q: tensor<2x70x4x16xf16>, %k: tensor<2x70x4x16xf16>,
                    %v: tensor<2x70x4x8xf16>, %g: tensor<2x70x4x16xf32>,
                    %beta: tensor<2x70x4xf16>, %s0: tensor<2x4x16x8xf32>)
    -> (tensor<2x70x4x8xf16>, tensor<2x4x16x8xf32>, tensor<3x2x4x16x8xf16>) {
  %o, %s, %b = rudnn.kda %q, %k, %v, %g, %beta initial_state %s0 chunk 32
      scale 0.25 save_boundaries
      : (tensor<2x70x4x16xf16>, tensor<2x70x4x16xf16>, tensor<2x70x4x8xf16>,
         tensor<2x70x4x16xf32>, tensor<2x70x4xf16>, tensor<2x4x16x8xf32>)
      -> (tensor<2x70x4x8xf16>, tensor<2x4x16x8xf32>, tensor<3x2x4x16x8xf16>)
  return %o, %s, %b
      : tensor<2x70x4x8xf16>, tensor<2x4x16x8xf32>, tensor<3x2x4x16x8xf16>
}

// -----

// Boundaries with a dynamic chunk count need no explicit chunk.
// CHECK-LABEL: func.func @kda_dynamic_boundaries
// CHECK: rudnn.kda {{.*}} save_boundaries :
func.func @kda_dynamic_boundaries(%q: tensor<1x?x2x8xf32>, %k: tensor<1x?x2x8xf32>,
                                  %v: tensor<1x?x2x8xf32>, %g: tensor<1x?x2x8xf32>,
                                  %beta: tensor<1x?x2xf32>)
    -> tensor<?x1x2x8x8xf32> {
  %o, %s, %b = rudnn.kda %q, %k, %v, %g, %beta save_boundaries
      : (tensor<1x?x2x8xf32>, tensor<1x?x2x8xf32>, tensor<1x?x2x8xf32>,
         tensor<1x?x2x8xf32>, tensor<1x?x2xf32>)
      -> (tensor<1x?x2x8xf32>, tensor<1x2x8x8xf32>, tensor<?x1x2x8x8xf32>)
  return %b : tensor<?x1x2x8x8xf32>
}

// -----

// The backward with only the required operands.
// CHECK-LABEL: func.func @kda_backward_minimal
// CHECK-SAME: %[[DO:[^:]*]]: tensor<?x?x?x64xf32>)
// CHECK: %[[DQ:.*]], %[[DK:.*]], %[[DV:.*]], %[[DG:.*]], %[[DBETA:.*]] = rudnn.kda_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} d_output %[[DO]] :
// CHECK: return %[[DQ]], %[[DK]], %[[DV]], %[[DG]], %[[DBETA]]
func.func @kda_backward_minimal(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>,
                                %v: tensor<?x?x?x64xf32>, %g: tensor<?x?x?x64xf32>,
                                %beta: tensor<?x?x?xf32>, %do: tensor<?x?x?x64xf32>)
    -> (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>,
        tensor<?x?x?x64xf32>, tensor<?x?x?xf32>) {
  %dq, %dk, %dv, %dg, %dbeta = rudnn.kda_backward %q, %k, %v, %g, %beta
      d_output %do
      : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>,
         tensor<?x?x?x64xf32>, tensor<?x?x?xf32>, tensor<?x?x?x64xf32>)
      -> (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>,
          tensor<?x?x?x64xf32>, tensor<?x?x?xf32>)
  return %dq, %dk, %dv, %dg, %dbeta
      : tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>,
        tensor<?x?x?x64xf32>, tensor<?x?x?xf32>
}

// -----

// The backward with initial state, saved boundaries and the final-state
// gradient; bf16 inputs give bf16 gradients except dg and d_initial_state.
// CHECK-LABEL: func.func @kda_backward_full
// CHECK: rudnn.kda_backward %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} initial_state %{{.*}} boundaries %{{.*}} d_output %{{.*}} d_final_state %{{.*}} chunk 16 scale 5.000000e-01 :
// CHECK-SAME: -> (tensor<1x20x2x4xbf16>, tensor<1x20x2x4xbf16>, tensor<1x20x2x4xbf16>, tensor<1x20x2x4xf32>, tensor<1x20x2xbf16>, tensor<1x2x4x4xf32>)
func.func @kda_backward_full(%q: tensor<1x20x2x4xbf16>, %k: tensor<1x20x2x4xbf16>,
                             %v: tensor<1x20x2x4xbf16>, %g: tensor<1x20x2x4xf32>,
                             %beta: tensor<1x20x2xbf16>, %s0: tensor<1x2x4x4xf32>,
                             %b: tensor<2x1x2x4x4xbf16>, %do: tensor<1x20x2x4xbf16>,
                             %ds: tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32> {
  %dq, %dk, %dv, %dg, %dbeta, %ds0 = rudnn.kda_backward %q, %k, %v, %g, %beta
      initial_state %s0 boundaries %b d_output %do d_final_state %ds
      chunk 16 scale 0.5
      : (tensor<1x20x2x4xbf16>, tensor<1x20x2x4xbf16>, tensor<1x20x2x4xbf16>,
         tensor<1x20x2x4xf32>, tensor<1x20x2xbf16>, tensor<1x2x4x4xf32>,
         tensor<2x1x2x4x4xbf16>, tensor<1x20x2x4xbf16>, tensor<1x2x4x4xf32>)
      -> (tensor<1x20x2x4xbf16>, tensor<1x20x2x4xbf16>, tensor<1x20x2x4xbf16>,
          tensor<1x20x2x4xf32>, tensor<1x20x2xbf16>, tensor<1x2x4x4xf32>)
  return %ds0 : tensor<1x2x4x4xf32>
}

// -----

// The target attribute on a module.
// CHECK: module attributes {rudnn.target = #rudnn.target<arch = "sm_80", lanes = 32, smem_per_block = 166912, sm_count = 108>}
// CHECK-LABEL: func.func @target_a100
module attributes {rudnn.target = #rudnn.target<arch = "sm_80", lanes = 32,
                                                 smem_per_block = 166912,
                                                 sm_count = 108>} {
  func.func @target_a100() {
    return
  }
}

// -----

// Alternatives chosen per call by a run-time dim: one case per range of T.
// CHECK-LABEL: func.func @dim_switch
// CHECK: %[[R:.*]]:2 = rudnn.dim_switch %{{.*}}[1] cases [1, 2] : tensor<?x?x?x8xf32> -> tensor<?x?x?x8xf32>, tensor<?x?x8x8xf32> {
// CHECK: rudnn.kda_recurrent
// CHECK: rudnn.yield
// CHECK: }, {
// CHECK: rudnn.kda_recurrent
// CHECK: return %[[R]]#0
func.func @dim_switch(%q: tensor<?x?x?x8xf32>, %beta: tensor<?x?x?xf32>)
    -> tensor<?x?x?x8xf32> {
  %o, %s = rudnn.dim_switch %q[1] cases [1, 2]
      : tensor<?x?x?x8xf32> -> tensor<?x?x?x8xf32>, tensor<?x?x8x8xf32> {
    %a, %b = rudnn.kda_recurrent %q, %q, %q, %q, %beta chunk 16 scale 0.5
        : (tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>,
           tensor<?x?x?x8xf32>, tensor<?x?x?xf32>)
        -> (tensor<?x?x?x8xf32>, tensor<?x?x8x8xf32>)
    rudnn.yield %a, %b : tensor<?x?x?x8xf32>, tensor<?x?x8x8xf32>
  }, {
    %a, %b = rudnn.kda_recurrent %q, %q, %q, %q, %beta chunk 32 scale 0.5
        : (tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>,
           tensor<?x?x?x8xf32>, tensor<?x?x?xf32>)
        -> (tensor<?x?x?x8xf32>, tensor<?x?x8x8xf32>)
    rudnn.yield %a, %b : tensor<?x?x?x8xf32>, tensor<?x?x8x8xf32>
  }
  return %o : tensor<?x?x?x8xf32>
}
