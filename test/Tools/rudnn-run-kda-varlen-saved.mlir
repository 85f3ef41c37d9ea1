// A packed forward saves its boundaries and tiles per chunk slot, and its
// backward reads them instead of computing them again (bf16, K = 32, V = 24,
// chunk 16 so that sequences span several chunks): the boundaries, the
// output and every gradient checked against the float64 reference, the
// spare slots past the last sequence's chunks zero.
//
// RUN: rudnn-run %s --backend emulation --random 5 --dims T=90,H=2,S=4,C=5 --check --cache-dir "" | FileCheck %s
// CHECK: result boundaries: bf16[11, 1, 2, 32, 24]
// CHECK: check o: relative error {{.*}} ok
// CHECK: check boundaries: relative error {{.*}} ok
// CHECK: check dq: relative error {{.*}} ok
// CHECK: check dk: relative error {{.*}} ok
// CHECK: check dv: relative error {{.*}} ok
// CHECK: check dg: relative error {{.*}} ok
// CHECK: check dbeta: relative error {{.*}} ok
// CHECK: check d_initial_state: relative error {{.*}} ok
// Four kernels: prepare, the wgmma walk forming the outputs too, the
// reverse walk, the gradients.
// CHECK: compiles: 4
//
// The backward imports the saved tiles: no chunk kernel of the forward's
// runs again, and the walks and gradients take the offsets.
// RUN: rudnn-opt %s -rudnn-specialize -rudnn-decompose | FileCheck %s --check-prefix=IR
// IR: %{{[a-z0-9_]+}}, %[[B:[a-z0-9_]+]], %{{.*}} = rudnn.chunk_propagate {{.*}} cu_seqlens %arg5 {{.*}} wgmma
// IR: %[[T:[0-9]+]] = rudnn.chunk_tiles_export
// IR: rudnn.chunk_tiles_import %[[T]]
// IR-NOT: rudnn.chunk_solve
// IR: rudnn.chunk_gradients {{.*}}, %[[B]], {{.*}} cu_seqlens %arg5

func.func @main(%q: tensor<1x?x?x32xbf16> {rudnn.name = "q"},
                %k: tensor<1x?x?x32xbf16> {rudnn.name = "k"},
                %v: tensor<1x?x?x24xbf16> {rudnn.name = "v"},
                %g: tensor<1x?x?x32xf32> {rudnn.name = "g"},
                %beta: tensor<1x?x?xbf16> {rudnn.name = "beta"},
                %cu_seqlens: tensor<?xi32> {rudnn.name = "cu_seqlens"},
                %s0: tensor<?x?x32x24xf32> {rudnn.name = "initial_state"},
                %do: tensor<1x?x?x24xbf16> {rudnn.name = "d_output"})
    -> (tensor<1x?x?x24xbf16> {rudnn.name = "o"},
        tensor<?x1x?x32x24xbf16> {rudnn.name = "boundaries"},
        tensor<1x?x?x32xbf16> {rudnn.name = "dq"},
        tensor<1x?x?x32xbf16> {rudnn.name = "dk"},
        tensor<1x?x?x24xbf16> {rudnn.name = "dv"},
        tensor<1x?x?x32xf32> {rudnn.name = "dg"},
        tensor<1x?x?xbf16> {rudnn.name = "dbeta"},
        tensor<?x?x32x24xf32> {rudnn.name = "d_initial_state"}) {
  %o, %s, %b, %tiles = rudnn.kda_varlen %q, %k, %v, %g, %beta
      cu_seqlens %cu_seqlens initial_state %s0 chunk 16 save_boundaries save_tiles
      : (tensor<1x?x?x32xbf16>, tensor<1x?x?x32xbf16>, tensor<1x?x?x24xbf16>,
         tensor<1x?x?x32xf32>, tensor<1x?x?xbf16>, tensor<?xi32>,
         tensor<?x?x32x24xf32>)
      -> (tensor<1x?x?x24xbf16>, tensor<?x?x32x24xf32>, tensor<?x1x?x32x24xbf16>, tensor<?x1x?x1248xf32>)
  %dq, %dk, %dv, %dg, %dbeta, %ds0 = rudnn.kda_varlen_backward %q, %k, %v,
      %g, %beta cu_seqlens %cu_seqlens initial_state %s0 boundaries %b tiles %tiles d_output %do chunk 16
      : (tensor<1x?x?x32xbf16>, tensor<1x?x?x32xbf16>, tensor<1x?x?x24xbf16>,
         tensor<1x?x?x32xf32>, tensor<1x?x?xbf16>, tensor<?xi32>,
         tensor<?x?x32x24xf32>, tensor<?x1x?x32x24xbf16>, tensor<?x1x?x1248xf32>, tensor<1x?x?x24xbf16>)
      -> (tensor<1x?x?x32xbf16>, tensor<1x?x?x32xbf16>, tensor<1x?x?x24xbf16>,
          tensor<1x?x?x32xf32>, tensor<1x?x?xbf16>, tensor<?x?x32x24xf32>)
  return %o, %b, %dq, %dk, %dv, %dg, %dbeta, %ds0
      : tensor<1x?x?x24xbf16>, tensor<?x1x?x32x24xbf16>, tensor<1x?x?x32xbf16>, tensor<1x?x?x32xbf16>, tensor<1x?x?x24xbf16>,
        tensor<1x?x?x32xf32>, tensor<1x?x?xbf16>, tensor<?x?x32x24xf32>
}
