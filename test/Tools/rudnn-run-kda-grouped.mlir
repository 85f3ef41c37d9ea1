// Grouped value heads (GVA) over packed sequences, backward: q and k with
// Q = 2 heads shared by H = 4 value heads, every gradient checked against
// the float64 reference (q and k repeated per value head, dq and dk summed
// back over each group).
//
// RUN: rudnn-run %s --backend emulation --random 8 --dims T=90,Q=2,H=4,S=3,C=4 --check --cache-dir "" | FileCheck %s
// CHECK: result dq: f32[1, 90, 2, 32]
// CHECK: result dv: f32[1, 90, 4, 16]
// CHECK: check dq: relative error {{.*}} ok
// CHECK: check dk: relative error {{.*}} ok
// CHECK: check dv: relative error {{.*}} ok
// CHECK: check dg: relative error {{.*}} ok
// CHECK: check dbeta: relative error {{.*}} ok
// CHECK: check d_initial_state: relative error {{.*}} ok
// CHECK: compiles: 5
//
// The decomposition sums each group's q and k gradients after the
// per-value-head gradients.
// RUN: rudnn-opt %s -rudnn-specialize -rudnn-decompose | FileCheck %s --check-prefix=IR
// IR: %[[DQ:[a-z0-9_]+]], %[[DK:[a-z0-9_]+]], {{.*}} = rudnn.chunk_gradients
// IR: rudnn.head_group_sum %[[DQ]] like %arg0
// IR: rudnn.head_group_sum %[[DK]] like %arg1

func.func @main(%q: tensor<1x?x?x32xf32> {rudnn.name = "q"},
                %k: tensor<1x?x?x32xf32> {rudnn.name = "k"},
                %v: tensor<1x?x?x16xf32> {rudnn.name = "v"},
                %g: tensor<1x?x?x32xf32> {rudnn.name = "g"},
                %beta: tensor<1x?x?xf32> {rudnn.name = "beta"},
                %cu_seqlens: tensor<?xi32> {rudnn.name = "cu_seqlens"},
                %s0: tensor<?x?x32x16xf32> {rudnn.name = "initial_state"},
                %do: tensor<1x?x?x16xf32> {rudnn.name = "d_output"})
    -> (tensor<1x?x?x32xf32> {rudnn.name = "dq"},
        tensor<1x?x?x32xf32> {rudnn.name = "dk"},
        tensor<1x?x?x16xf32> {rudnn.name = "dv"},
        tensor<1x?x?x32xf32> {rudnn.name = "dg"},
        tensor<1x?x?xf32> {rudnn.name = "dbeta"},
        tensor<?x?x32x16xf32> {rudnn.name = "d_initial_state"}) {
  %dq, %dk, %dv, %dg, %dbeta, %ds0 = rudnn.kda_varlen_backward %q, %k, %v,
      %g, %beta cu_seqlens %cu_seqlens initial_state %s0 d_output %do
      grouped_heads
      : (tensor<1x?x?x32xf32>, tensor<1x?x?x32xf32>, tensor<1x?x?x16xf32>,
         tensor<1x?x?x32xf32>, tensor<1x?x?xf32>, tensor<?xi32>,
         tensor<?x?x32x16xf32>, tensor<1x?x?x16xf32>)
      -> (tensor<1x?x?x32xf32>, tensor<1x?x?x32xf32>, tensor<1x?x?x16xf32>,
          tensor<1x?x?x32xf32>, tensor<1x?x?xf32>, tensor<?x?x32x16xf32>)
  return %dq, %dk, %dv, %dg, %dbeta, %ds0
      : tensor<1x?x?x32xf32>, tensor<1x?x?x32xf32>, tensor<1x?x?x16xf32>,
        tensor<1x?x?x32xf32>, tensor<1x?x?xf32>, tensor<?x?x32x16xf32>
}
