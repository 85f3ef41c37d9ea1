// REQUIRES: sass
// RUN: rudnn-opt %s -rudnn-specialize="arch=sm_90" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report --rudnn-report-dims=C=9,T=16384,S=16384,H=16,G=16 | FileCheck %s

// The Hopper forward over a packed causal batch (bf16, D = E = 128, 16-byte
// rows): a persistent grid of one block an SM whose blocks claim their
// query tiles from a counter, 4 bytes of workspace the plan zeroes at each
// call; wide products, nothing spilled, o by 16-byte stores.
// CHECK: plan @packed at C=9,T=16384,S=16384,H=16,G=16: workspace 4 bytes
// CHECK-LABEL: kernel attention_varlen_fwd_bf16_d128_e128_bq128_bk128_causal_wgmma_o16
// CHECK-NEXT: block: 384 threads; grid (132, 1, 1) = 132 blocks, 1.00 waves
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// CHECK: sass: {{.*}}(HGMMA {{[1-9][0-9]*}}, UTMALDG {{[1-9][0-9]*}})
// CHECK: global stores: 8-bit 0, 16-bit 0, 32-bit {{[0-9]+}}, 64-bit 0, 128-bit {{[1-9][0-9]*}}
// CHECK: wgmma shapes: 64x128x16 {{[1-9][0-9]*}}{{$}}
func.func @packed(%q: tensor<?x?x128xbf16> {rudnn.align = 16 : i64},
                  %k: tensor<?x?x128xbf16> {rudnn.align = 16 : i64},
                  %v: tensor<?x?x128xbf16> {rudnn.align = 16 : i64},
                  %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>)
    -> (tensor<?x?x128xbf16> {rudnn.align = 16 : i64}, tensor<?x?xf32>) {
  %o, %lse = rudnn.attention_varlen %q, %k, %v cu_seqlens(%cu_q, %cu_k) causal
      : (tensor<?x?x128xbf16>, tensor<?x?x128xbf16>, tensor<?x?x128xbf16>,
         tensor<?xi32>, tensor<?xi32>)
      -> (tensor<?x?x128xbf16>, tensor<?x?xf32>)
  return %o, %lse : tensor<?x?x128xbf16>, tensor<?x?xf32>
}
