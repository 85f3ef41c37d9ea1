// RUN: rudnn-opt %s -rudnn-specialize -rudnn-decompose | FileCheck %s
// RUN: rudnn-opt %s -rudnn-specialize -rudnn-decompose | rudnn-opt | FileCheck %s

// The backward recomputes the forward's chunk quantities and states, walks
// the chunks in reverse for the state gradient, then takes the input
// gradients chunk by chunk.
// CHECK-LABEL: func.func @backward
// CHECK-SAME: (%[[Q:[^:]*]]: {{.*}}, %[[V:[^:]*]]: {{.*}}, %[[BETA:[^:]*]]: {{.*}}, %[[S0:[^:]*]]: {{.*}}, %[[DO:[^:]*]]: {{.*}})
// CHECK: %[[GAMMA:.*]] = rudnn.chunk_decay %[[Q]] chunk 64
// CHECK: %{{.*}}, %[[PAIRWISE:.*]] = rudnn.chunk_pairwise %[[Q]], %[[Q]], %[[BETA]], %[[GAMMA]]
// CHECK: %[[W:.*]], %[[U0:.*]] = rudnn.chunk_solve
// CHECK: %[[U:.*]], %[[BOUNDS:.*]], %{{.*}} = rudnn.chunk_propagate %[[W]], %[[U0]], %[[Q]], %[[GAMMA]] initial_state %[[S0]]
// CHECK: %[[DU:.*]], %[[DSE:.*]], %[[DS0:.*]] = rudnn.chunk_state_gradient %[[Q]], %[[Q]], %[[GAMMA]], %[[PAIRWISE]], %[[W]], %[[DO]] chunk 64 scale 2.500000e-01
// CHECK: %[[DQ:.*]], %[[DK:.*]], %[[DV:.*]], %[[DG:.*]], %[[DB:.*]] = rudnn.chunk_gradients %[[Q]], %[[Q]], %[[V]], %[[Q]], %[[BETA]], %[[PAIRWISE]], %[[U]], %[[BOUNDS]], %[[DO]], %[[DU]], %[[DSE]] chunk 64
// CHECK-NOT: rudnn.kda_backward
// CHECK: return %[[DQ]], %[[DK]], %[[DV]], %[[DG]], %[[DB]], %[[DS0]]
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

// A 16-bit backward on sm_90 walks on wgmma both ways: forwards for the
// boundaries it computes again, in reverse for the state gradient; its
// prepare may take its rows by TMA.
// CHECK-LABEL: func.func @backward_wgmma
// CHECK: rudnn.chunk_solve {{.*}} chunk 64 for_backward tma :
// CHECK: rudnn.chunk_propagate {{.*}} chunk 64 wgmma :
// CHECK: rudnn.chunk_state_gradient {{.*}} chunk 64 scale 2.500000e-01 wgmma :
func.func @backward_wgmma(%q: tensor<?x?x?x16xbf16>, %g: tensor<?x?x?x16xf32>,
                          %beta: tensor<?x?x?xbf16>, %do: tensor<?x?x?x16xbf16>)
    -> tensor<?x?x?x16xbf16> {
  %dq, %dk, %dv, %dg, %db = rudnn.kda_backward %q, %q, %q, %g, %beta
      d_output %do
      : (tensor<?x?x?x16xbf16>, tensor<?x?x?x16xbf16>, tensor<?x?x?x16xbf16>,
         tensor<?x?x?x16xf32>, tensor<?x?x?xbf16>, tensor<?x?x?x16xbf16>)
      -> (tensor<?x?x?x16xbf16>, tensor<?x?x?x16xbf16>,
          tensor<?x?x?x16xbf16>, tensor<?x?x?x16xf32>, tensor<?x?x?xbf16>)
  return %dq : tensor<?x?x?x16xbf16>
}
