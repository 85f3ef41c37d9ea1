// ALiBi through a training step's attention: the forward and the backward
// with alibi_slopes [B, H], checked against the float64 references. bf16
// views promising 16-byte rows run the Hopper kernels (the forward's bias a
// specialization of its score transform); f32 runs the sm_80 kernels, and
// five queries a row take the forward's key split.
//
// RUN: rudnn-run %s --backend emulation --random 3 --dims B=2,T=70,S=75,H=4,G=2 --check --cache-dir "" 2>&1 | FileCheck %s
// CHECK-DAG: compiled attention_fwd_bf16_d64_e64_{{.*}}causal_alibi_wgmma
// CHECK-DAG: compiled attention_bwd_gradients_bf16_d64_e64_causal_alibi_wgmma
// CHECK: check o: relative error {{.*}} ok
// CHECK: check dq: relative error {{.*}} ok
// CHECK: check dk: relative error {{.*}} ok
// CHECK: check dv: relative error {{.*}} ok
// CHECK-NOT: FAIL
//
// RUN: sed 's/bf16/f32/g; s/, rudnn.align = 16 : i64//g' %s > %t.mlir
// RUN: rudnn-run %t.mlir --backend emulation --random 5 --dims B=2,T=5,S=90,H=4,G=2 --check --cache-dir "" 2>&1 | FileCheck %s --check-prefix=F32
// F32-DAG: compiled attention_fwd_f32_d64_e64_{{.*}}causal_alibi_split
// F32-DAG: compiled attention_bwd_gradients_f32_d64_e64_causal_alibi_keys64
// F32: check o: relative error {{.*}} ok
// F32: check dq: relative error {{.*}} ok
// F32: check dk: relative error {{.*}} ok
// F32: check dv: relative error {{.*}} ok
// F32-NOT: FAIL

func.func @main(%q: tensor<?x?x?x64xbf16> {rudnn.name = "q", rudnn.align = 16 : i64},
                %k: tensor<?x?x?x64xbf16> {rudnn.name = "k", rudnn.align = 16 : i64},
                %v: tensor<?x?x?x64xbf16> {rudnn.name = "v", rudnn.align = 16 : i64},
                %slopes: tensor<?x?xf32> {rudnn.name = "alibi_slopes"},
                %d_output: tensor<?x?x?x64xbf16> {rudnn.name = "d_output", rudnn.align = 16 : i64})
    -> (tensor<?x?x?x64xbf16> {rudnn.name = "o"},
        tensor<?x?x?x64xbf16> {rudnn.name = "dq"},
        tensor<?x?x?x64xbf16> {rudnn.name = "dk"},
        tensor<?x?x?x64xbf16> {rudnn.name = "dv"}) {
  %o, %lse = rudnn.attention %q, %k, %v alibi %slopes causal
      : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>,
         tensor<?x?xf32>)
      -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>)
  %dq, %dk, %dv = rudnn.attention_backward %q, %k, %v alibi %slopes
      output(%o, %lse) gradient %d_output causal
      : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>,
         tensor<?x?xf32>, tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>,
         tensor<?x?x?x64xbf16>)
      -> (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>)
  return %o, %dq, %dk, %dv
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>,
        tensor<?x?x?x64xbf16>
}
