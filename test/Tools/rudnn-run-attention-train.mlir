// A training step's attention as one function: the forward, then the
// backward from the forward's own o and lse, one plan, checked against the
// float64 references applied in turn. bf16 views promising 16-byte rows,
// so on the emulated sm_90a both run the Hopper kernels (TMA and wgmma),
// the backward's dq summed in f32 and converted; GQA, causal, and T = S =
// 70 leaves a tail in every tile.
//
// RUN: rudnn-run %s --backend emulation --random 3 --dims B=2,T=70,S=70,H=4,G=2 --check --cache-dir "" 2>&1 | FileCheck %s
// CHECK-DAG: compiled attention_fwd_bf16_d64_e64_{{.*}}wgmma
// CHECK-DAG: compiled attention_bwd_gradients_bf16_d64_e64_causal_wgmma
// CHECK-DAG: compiled attention_bwd_dq_bf16_d64
// CHECK: check o: relative error {{.*}} ok
// CHECK: check dq: relative error {{.*}} ok
// CHECK: check dk: relative error {{.*}} ok
// CHECK: check dv: relative error {{.*}} ok
// CHECK-NOT: FAIL

func.func @main(%q: tensor<?x?x?x64xbf16> {rudnn.name = "q", rudnn.align = 16 : i64},
                %k: tensor<?x?x?x64xbf16> {rudnn.name = "k", rudnn.align = 16 : i64},
                %v: tensor<?x?x?x64xbf16> {rudnn.name = "v", rudnn.align = 16 : i64},
                %d_output: tensor<?x?x?x64xbf16> {rudnn.name = "d_output", rudnn.align = 16 : i64})
    -> (tensor<?x?x?x64xbf16> {rudnn.name = "o"},
        tensor<?x?x?x64xbf16> {rudnn.name = "dq"},
        tensor<?x?x?x64xbf16> {rudnn.name = "dk"},
        tensor<?x?x?x64xbf16> {rudnn.name = "dv"}) {
  %o, %lse = rudnn.attention %q, %k, %v causal
      : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>)
      -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>)
  %dq, %dk, %dv = rudnn.attention_backward %q, %k, %v output(%o, %lse)
      gradient %d_output causal
      : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>,
         tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>, tensor<?x?x?x64xbf16>)
      -> (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>)
  return %o, %dq, %dk, %dv
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>,
        tensor<?x?x?x64xbf16>
}
