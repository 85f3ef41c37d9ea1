// REQUIRES: sass
// RUN: rudnn-opt %s -rudnn-specialize="arch=sm_90" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report --rudnn-report-dims=B=1,T=1,S=32768,H=32,G=8 | FileCheck %s
// RUN: rudnn-opt %s -rudnn-specialize="arch=sm_90" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report --rudnn-report-dims=B=1,T=17,S=32768,H=32,G=8 | FileCheck %s --check-prefix=PREFILL

// A decoding step's shape, bf16 D = 128, one query over 32768 keys of 8
// key-value heads, 32 query heads: one block a (entry, head) would run 32
// blocks on 132 SMs. The split gives each row's keys 33 parts of 1024 (4
// waves of two 80 KiB blocks an SM), each a block of 64 rows, cp.async
// alone bringing q, k and v (no 16-bit global load), nothing spilled; the
// parts' results leave as f32 pairs, then a warp a row merges them. The
// model: K and V once per key-value head, 128 MiB, memory-bound.
// CHECK-LABEL: kernel attention_fwd_bf16_d128_e128_bq64_bk64_causal_a16_split
// CHECK-NEXT: block: 128 threads; grid (1, 32, 33) = 1056 blocks, 4.00 waves
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// CHECK-NEXT: shared memory: 0 bytes static, 81920 dynamic
// CHECK-NEXT: resident blocks per SM: 2
// CHECK-NEXT: model: 128.0 MiB moved, {{.*}}(memory-bound)
// CHECK: global loads: 8-bit {{[0-9]+}}, 16-bit 0,
// CHECK: kernel attention_combine_bf16_e128
// CHECK-NEXT: block: 128 threads; grid (32, 1, 1) = 32 blocks
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored
// CHECK: kernel attention_fwd_bf16_d128_e128_bq128_bk128_causal_wgmma_o16
// CHECK-NEXT: {{.*}}(not run at these dims)
//
// 17 queries: the Hopper kernel runs, the split does not.
// PREFILL-LABEL: kernel attention_fwd_bf16_d128_e128_bq64_bk64_causal_a16_split
// PREFILL-NEXT: {{.*}}(not run at these dims)
// PREFILL: kernel attention_combine_bf16_e128
// PREFILL-NEXT: {{.*}}(not run at these dims)
// PREFILL: kernel attention_fwd_bf16_d128_e128_bq128_bk128_causal_wgmma_o16
// PREFILL-NEXT: block: 384 threads; grid (132, 1, 1) = 132 blocks, 1.00 waves{{$}}
func.func @main(%q: tensor<?x?x?x128xbf16> {rudnn.align = 16 : i64},
                %k: tensor<?x?x?x128xbf16> {rudnn.align = 16 : i64},
                %v: tensor<?x?x?x128xbf16> {rudnn.align = 16 : i64})
    -> (tensor<?x?x?x128xbf16> {rudnn.align = 16 : i64}, tensor<?x?x?xf32>) {
  %o, %lse = rudnn.attention %q, %k, %v causal
      : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
         tensor<?x?x?x128xbf16>)
      -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
}
