// REQUIRES: sass
// RUN: rudnn-opt %s -rudnn-specialize="arch=sm_90" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report --rudnn-report-dims=T=16384,S=16384,H=16,G=16,C=9 | FileCheck %s

// Packed f16 at D = 256, E = 64 (once the sm_80 key kernel's case that
// spilled 144 bytes): the wide Hopper kernel, 64 keys a block; the second
// warpgroup holds 128 of dK's columns and none of dV's (E is one 64-column
// block, the first warpgroup's). Every operand by TMA, every product
// wgmma, nothing spilled.
// CHECK-LABEL: kernel attention_varlen_bwd_gradients_f16_d256_e64_causal_wgmma
// CHECK-NEXT: block: 384 threads
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// CHECK-NEXT: shared memory: 0 bytes static, 157696 dynamic
// CHECK: sass: {{[0-9]+}} instructions; tensor {{[1-9][0-9]*}}, ldmatrix 0, cp.async 0, tma {{[1-9][0-9]*}}; shared loads 0, {{.*}} (HGMMA {{[1-9][0-9]*}}, UTMALDG {{[1-9][0-9]*}})
// CHECK-NOT: HMMA
func.func @packed(%q: tensor<?x?x256xf16> {rudnn.align = 16 : i64},
                  %k: tensor<?x?x256xf16> {rudnn.align = 16 : i64},
                  %v: tensor<?x?x64xf16> {rudnn.align = 16 : i64},
                  %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>,
                  %o: tensor<?x?x64xf16>, %lse: tensor<?x?xf32>,
                  %do: tensor<?x?x64xf16> {rudnn.align = 16 : i64})
    -> (tensor<?x?x256xf16>, tensor<?x?x256xf16>, tensor<?x?x64xf16>) {
  %dq, %dk, %dv = rudnn.attention_varlen_backward %q, %k, %v
      cu_seqlens(%cu_q, %cu_k) output(%o, %lse) gradient %do causal
      : (tensor<?x?x256xf16>, tensor<?x?x256xf16>, tensor<?x?x64xf16>,
         tensor<?xi32>, tensor<?xi32>, tensor<?x?x64xf16>, tensor<?x?xf32>,
         tensor<?x?x64xf16>)
      -> (tensor<?x?x256xf16>, tensor<?x?x256xf16>, tensor<?x?x64xf16>)
  return %dq, %dk, %dv
      : tensor<?x?x256xf16>, tensor<?x?x256xf16>, tensor<?x?x64xf16>
}
