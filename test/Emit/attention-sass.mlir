// REQUIRES: sass
// RUN: rudnn-opt %s -rudnn-specialize="arch=sm_90" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report --rudnn-report-dims=B=8,T=2048,S=2048,H=16,G=16 | FileCheck %s

// The bf16 attention kernel at D = E = 128 on the sm_80 path, its views
// promising 16-byte rows: queries, keys and values by cp.async alone into
// swizzled shared tiles (no 16-bit global load; the 8-bit ones read a key
// mask, where one is given, in the tiles its bounds cross), the scores and
// the products by the values on tensor cores through ldmatrix, the
// probabilities fed from the score accumulators, two blocks per SM, nothing
// spilled.
// CHECK-LABEL: kernel attention_fwd_bf16_d128_e128_bk64_causal_a16
// CHECK-NEXT: block: 128 threads; grid (32, 128, 1) = 4096 blocks
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// CHECK-NEXT: shared memory: 0 bytes static, 81920 dynamic
// CHECK-NEXT: resident blocks per SM: 2
// The model: q read, o and lse written; half the products (causal), so the
// bound is the tensor cores' (2^37 FLOPs of 989 TFLOP/s: 139 us).
// CHECK-NEXT: model: 129.0 MiB moved, 137.44 GFLOP, {{[0-9.]+}} FLOP/B; roofline 139.0 us (compute-bound)
// CHECK-NEXT: sass: {{[0-9]+}} instructions; tensor {{[1-9][0-9]*}}, ldmatrix {{[1-9][0-9]*}}, cp.async {{[1-9][0-9]*}}
// CHECK-NEXT: global loads: 8-bit {{[0-9]+}}, 16-bit 0,
func.func @main(%q: tensor<?x?x?x128xbf16> {rudnn.align = 16 : i64},
                %k: tensor<?x?x?x128xbf16> {rudnn.align = 16 : i64},
                %v: tensor<?x?x?x128xbf16> {rudnn.align = 16 : i64})
    -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = rudnn.attention %q, %k, %v causal
      : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
         tensor<?x?x?x128xbf16>)
      -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
}
