// A function of two operators runs as one plan and checks against the
// float64 references applied in turn: a forward, then a backward through
// it given its saved boundaries, with odd sizes (K = 12, V = 5, a 23-token
// tail) and bf16 inputs.
//
// RUN: rudnn-run %s --backend emulation --random 5 --dims B=2,T=55,H=3 --check --cache-dir "" | FileCheck %s
// CHECK: check o: relative error {{.*}} ok
// CHECK: check dq: relative error {{.*}} ok
// CHECK: check dk: relative error {{.*}} ok
// CHECK: check dv: relative error {{.*}} ok
// CHECK: check dg: relative error {{.*}} ok
// CHECK: check dbeta: relative error {{.*}} ok
// CHECK-NOT: FAIL

func.func @main(%q: tensor<?x?x?x12xbf16>, %k: tensor<?x?x?x12xbf16>,
                %v: tensor<?x?x?x5xbf16>, %g: tensor<?x?x?x12xf32>,
                %beta: tensor<?x?x?xbf16>, %d_output: tensor<?x?x?x5xbf16>)
    -> (tensor<?x?x?x5xbf16> {rudnn.name = "o"}, tensor<?x?x?x12xbf16>,
        tensor<?x?x?x12xbf16>, tensor<?x?x?x5xbf16>, tensor<?x?x?x12xf32>,
        tensor<?x?x?xbf16>) {
  %o, %s, %b = rudnn.kda %q, %k, %v, %g, %beta chunk 32 save_boundaries
      : (tensor<?x?x?x12xbf16>, tensor<?x?x?x12xbf16>, tensor<?x?x?x5xbf16>,
         tensor<?x?x?x12xf32>, tensor<?x?x?xbf16>)
      -> (tensor<?x?x?x5xbf16>, tensor<?x?x12x5xf32>, tensor<?x?x?x12x5xbf16>)
  %dq, %dk, %dv, %dg, %db = rudnn.kda_backward %q, %k, %v, %g, %beta
      boundaries %b d_output %d_output chunk 32
      : (tensor<?x?x?x12xbf16>, tensor<?x?x?x12xbf16>, tensor<?x?x?x5xbf16>,
         tensor<?x?x?x12xf32>, tensor<?x?x?xbf16>, tensor<?x?x?x12x5xbf16>,
         tensor<?x?x?x5xbf16>)
      -> (tensor<?x?x?x12xbf16>, tensor<?x?x?x12xbf16>, tensor<?x?x?x5xbf16>,
          tensor<?x?x?x12xf32>, tensor<?x?x?xbf16>)
  return %o, %dq, %dk, %dv, %dg, %db
      : tensor<?x?x?x5xbf16>, tensor<?x?x?x12xbf16>, tensor<?x?x?x12xbf16>,
        tensor<?x?x?x5xbf16>, tensor<?x?x?x12xf32>, tensor<?x?x?xbf16>
}
