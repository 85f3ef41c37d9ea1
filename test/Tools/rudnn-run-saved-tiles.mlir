// A forward saving its boundaries and tiles and a backward taking both run
// as one plan (no prepare in the backward) and check against the float64
// references applied in turn, with odd sizes (K = 12, V = 5, a 23-token
// tail) and bf16 inputs; the saved tiles are returned too, and reported as
// having no reference.
//
// RUN: rm -rf %t.kernels
// RUN: rudnn-run %s --backend emulation --random 5 --dims B=2,T=55,H=3 --check --cache-dir %t.kernels | FileCheck %s
// CHECK: result tiles: f32[2, 2, 3, 1692]
// CHECK: check o: relative error {{.*}} ok
// CHECK: check tiles: saved in the kernels' own layout, no reference
// CHECK: check dq: relative error {{.*}} ok
// CHECK: check dk: relative error {{.*}} ok
// CHECK: check dv: relative error {{.*}} ok
// CHECK: check dg: relative error {{.*}} ok
// CHECK: check dbeta: relative error {{.*}} ok
// CHECK-NOT: FAIL
//
// A function taking saved tiles as an argument has nothing to check them
// against: refused before it runs.
//
// RUN: not rudnn-run %s --entry backward --backend emulation --random 5 --dims B=2,T=55,H=3 --check --cache-dir %t.kernels 2>&1 | FileCheck %s --check-prefix=OPAQUE
// OPAQUE: rudnn-run: Unsupported: 'tiles' is what an operator saves in its kernels' own layout: no float64 reference reads it
// OPAQUE-NOT: backend:
//
// Without --check it runs, on zero tiles.
//
// RUN: rudnn-run %s --entry backward --backend emulation --random 5 --dims B=1,T=20,H=1,N=1 --cache-dir %t.kernels | FileCheck %s --check-prefix=ZEROS
// ZEROS: result dq: bf16[1, 20, 1, 12]

func.func @main(%q: tensor<?x?x?x12xbf16>, %k: tensor<?x?x?x12xbf16>,
                %v: tensor<?x?x?x5xbf16>, %g: tensor<?x?x?x12xf32>,
                %beta: tensor<?x?x?xbf16>, %d_output: tensor<?x?x?x5xbf16>)
    -> (tensor<?x?x?x5xbf16> {rudnn.name = "o"},
        tensor<?x?x?x1692xf32> {rudnn.name = "tiles"}, tensor<?x?x?x12xbf16>,
        tensor<?x?x?x12xbf16>, tensor<?x?x?x5xbf16>, tensor<?x?x?x12xf32>,
        tensor<?x?x?xbf16>) {
  %o, %s, %b, %t = rudnn.kda %q, %k, %v, %g, %beta chunk 32 save_boundaries
      save_tiles
      : (tensor<?x?x?x12xbf16>, tensor<?x?x?x12xbf16>, tensor<?x?x?x5xbf16>,
         tensor<?x?x?x12xf32>, tensor<?x?x?xbf16>)
      -> (tensor<?x?x?x5xbf16>, tensor<?x?x12x5xf32>, tensor<?x?x?x12x5xbf16>,
          tensor<?x?x?x1692xf32>)
  %dq, %dk, %dv, %dg, %db = rudnn.kda_backward %q, %k, %v, %g, %beta
      boundaries %b tiles %t d_output %d_output chunk 32
      : (tensor<?x?x?x12xbf16>, tensor<?x?x?x12xbf16>, tensor<?x?x?x5xbf16>,
         tensor<?x?x?x12xf32>, tensor<?x?x?xbf16>, tensor<?x?x?x12x5xbf16>,
         tensor<?x?x?x1692xf32>, tensor<?x?x?x5xbf16>)
      -> (tensor<?x?x?x12xbf16>, tensor<?x?x?x12xbf16>, tensor<?x?x?x5xbf16>,
          tensor<?x?x?x12xf32>, tensor<?x?x?xbf16>)
  return %o, %t, %dq, %dk, %dv, %dg, %db
      : tensor<?x?x?x5xbf16>, tensor<?x?x?x1692xf32>, tensor<?x?x?x12xbf16>,
        tensor<?x?x?x12xbf16>, tensor<?x?x?x5xbf16>, tensor<?x?x?x12xf32>,
        tensor<?x?x?xbf16>
}

func.func @backward(%q: tensor<?x?x?x12xbf16>, %k: tensor<?x?x?x12xbf16>,
                    %v: tensor<?x?x?x5xbf16>, %g: tensor<?x?x?x12xf32>,
                    %beta: tensor<?x?x?xbf16>, %b: tensor<?x?x?x12x5xbf16>,
                    %t: tensor<?x?x?x1692xf32>, %d_output: tensor<?x?x?x5xbf16>)
    -> (tensor<?x?x?x12xbf16>, tensor<?x?x?x12xbf16>, tensor<?x?x?x5xbf16>,
        tensor<?x?x?x12xf32>, tensor<?x?x?xbf16>) {
  %dq, %dk, %dv, %dg, %db = rudnn.kda_backward %q, %k, %v, %g, %beta
      boundaries %b tiles %t d_output %d_output chunk 32
      : (tensor<?x?x?x12xbf16>, tensor<?x?x?x12xbf16>, tensor<?x?x?x5xbf16>,
         tensor<?x?x?x12xf32>, tensor<?x?x?xbf16>, tensor<?x?x?x12x5xbf16>,
         tensor<?x?x?x1692xf32>, tensor<?x?x?x5xbf16>)
      -> (tensor<?x?x?x12xbf16>, tensor<?x?x?x12xbf16>, tensor<?x?x?x5xbf16>,
          tensor<?x?x?x12xf32>, tensor<?x?x?xbf16>)
  return %dq, %dk, %dv, %dg, %db
      : tensor<?x?x?x12xbf16>, tensor<?x?x?x12xbf16>, tensor<?x?x?x5xbf16>,
        tensor<?x?x?x12xf32>, tensor<?x?x?xbf16>
}
