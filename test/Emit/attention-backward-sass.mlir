// REQUIRES: sass
// RUN: rudnn-opt %s -rudnn-specialize="arch=sm_90" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report | FileCheck %s

// The bf16 attention backward's kernels at D = E = 128, causal, views
// promising 16-byte rows: the row terms a warp a row; the key and query
// gradients with every operand by cp.async (LDGSTS) into swizzled shared
// tiles, every product on tensor cores (HMMA) through ldmatrix (LDSM), P and
// dS fed from the accumulators, no 16-bit global load, nothing spilled
// (the key block takes its queries 32 at a time at these head dims), two
// blocks per SM.
// CHECK-LABEL: kernel attention_bwd_terms_bf16_e128
// CHECK-NEXT: block: 128 threads
// CHECK-NEXT: registers: {{[0-9]+}} per thread; spills: 0 bytes stored, 0 loaded
// CHECK-LABEL: kernel attention_bwd_keys_bf16_d128_e128_causal_a16
// CHECK-NEXT: block: 128 threads
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// CHECK-NEXT: shared memory: 0 bytes static, 65536 dynamic
// CHECK-NEXT: resident blocks per SM: 2
// CHECK-NEXT: sass: {{[0-9]+}} instructions; tensor {{[1-9][0-9]*}}, ldmatrix {{[1-9][0-9]*}}, cp.async {{[1-9][0-9]*}}, tma 0; {{.*}} (HMMA {{[1-9][0-9]*}}, LDGSTS {{[1-9][0-9]*}}, LDSM {{[1-9][0-9]*}})
// CHECK-NEXT: global loads: 8-bit {{[0-9]+}}, 16-bit 0,
// CHECK-LABEL: kernel attention_bwd_queries_bf16_d128_e128_causal_a16
// CHECK-NEXT: block: 128 threads
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// CHECK-NEXT: shared memory: 0 bytes static, 98304 dynamic
// CHECK-NEXT: resident blocks per SM: 2
// CHECK-NEXT: sass: {{[0-9]+}} instructions; tensor {{[1-9][0-9]*}}, ldmatrix {{[1-9][0-9]*}}, cp.async {{[1-9][0-9]*}}, tma 0; {{.*}} (HMMA {{[1-9][0-9]*}}, LDGSTS {{[1-9][0-9]*}}, LDSM {{[1-9][0-9]*}})
// CHECK-NEXT: global loads: 8-bit {{[0-9]+}}, 16-bit 0,
func.func @main(%q: tensor<?x?x?x128xbf16> {rudnn.align = 16 : i64},
                %k: tensor<?x?x?x128xbf16> {rudnn.align = 16 : i64},
                %v: tensor<?x?x?x128xbf16> {rudnn.align = 16 : i64},
                %o: tensor<?x?x?x128xbf16>, %lse: tensor<?x?x?xf32>,
                %do: tensor<?x?x?x128xbf16> {rudnn.align = 16 : i64})
    -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
        tensor<?x?x?x128xbf16>) {
  %dq, %dk, %dv = rudnn.attention_backward %q, %k, %v output(%o, %lse)
      gradient %do causal
      : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
         tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>,
         tensor<?x?x?x128xbf16>)
      -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
          tensor<?x?x?x128xbf16>)
  return %dq, %dk, %dv
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
}
