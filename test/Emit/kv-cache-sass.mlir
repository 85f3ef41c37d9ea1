// REQUIRES: sass
// RUN: rudnn-opt %s -rudnn-specialize="arch=sm_90" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report --rudnn-report-dims=B=8,T=1,H=32,G=8,S=8192 | FileCheck %s

// The bf16 decoding step at D = E = 128 over views promising 16-byte rows.
// The partials: a persistent grid of three 128-thread blocks per SM (their
// shared memory allows three); queries, cached keys and values and the new
// tokens' rows gathered by cp.async (LDGSTS) alone, no 16-bit global load;
// both products on tensor cores (HMMA) through ldmatrix (LDSM); the append
// in 16-byte stores; nothing spilled. The model at full caches (S = 8192
// tokens an entry): every cached key and value read once, 256 MiB, a
// memory-bound step. The combine: a block per (entry, query head).
// CHECK-LABEL: kernel decode_partials_bf16_d128_e128_w4_blocks396_a16
// CHECK-NEXT: block: 128 threads; grid (396, 1, 1) = 396 blocks
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// CHECK-NEXT: shared memory: 0 bytes static, 69904 dynamic
// CHECK-NEXT: resident blocks per SM: 3
// CHECK-NEXT: model: 256.1 MiB moved, 1.07 GFLOP, 4.0 FLOP/B; roofline {{.*}} (memory-bound)
// CHECK-NEXT: sass: {{[0-9]+}} instructions; tensor {{[1-9][0-9]*}}, ldmatrix {{[1-9][0-9]*}}, cp.async {{[1-9][0-9]*}}, tma 0; {{.*}} (HMMA {{[1-9][0-9]*}}, LDGSTS {{[1-9][0-9]*}}, LDSM {{[1-9][0-9]*}})
// CHECK-NEXT: global loads: 8-bit 0, 16-bit 0, 32-bit {{[0-9]+}}, 64-bit 0, 128-bit {{[1-9][0-9]*}}
// CHECK-NEXT: global stores: 8-bit 0, 16-bit {{[0-9]+}}, 32-bit {{[0-9]+}}, 64-bit 0, 128-bit {{[1-9][0-9]*}}
// CHECK-LABEL: kernel decode_combine_bf16_e128_blocks396
// CHECK-NEXT: block: 128 threads; grid (256, 1, 1) = 256 blocks
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// With every option (left padding, ALiBi, a window, a softcap, non-causal
// queries) the partials still gather by cp.async alone and spill nothing.
// CHECK-LABEL: kernel decode_partials_bf16_d128_e128_w4_blocks396_noncausal_window256_0_softcap_alibi_a16
// CHECK-NEXT: block: 128 threads; grid (396, 1, 1) = 396 blocks
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// CHECK: sass: {{[0-9]+}} instructions; tensor {{[1-9][0-9]*}}, ldmatrix {{[1-9][0-9]*}}, cp.async {{[1-9][0-9]*}}, tma 0;
// CHECK-NEXT: global loads: 8-bit 0, 16-bit 0, 32-bit {{[0-9]+}}, 64-bit 0, 128-bit {{[1-9][0-9]*}}
func.func @decode(
    %q: tensor<?x?x32x128xbf16> {rudnn.name = "q", rudnn.align = 16 : i64},
    %k: tensor<?x?x8x128xbf16> {rudnn.name = "k", rudnn.align = 16 : i64},
    %v: tensor<?x?x8x128xbf16> {rudnn.name = "v", rudnn.align = 16 : i64},
    %k_cache: tensor<?x?x8x128xbf16> {rudnn.name = "k_cache", rudnn.align = 16 : i64},
    %v_cache: tensor<?x?x8x128xbf16> {rudnn.name = "v_cache", rudnn.align = 16 : i64},
    %lengths: tensor<?xi32> {rudnn.name = "cache_lengths"})
    -> (tensor<?x?x32x128xbf16>, tensor<?x?x8x128xbf16>,
        tensor<?x?x8x128xbf16>) {
  %o, %kc, %vc, %lse, %status = rudnn.kv_cache_attention %q, %k, %v
      cache(%k_cache, %v_cache) lengths %lengths
      : (tensor<?x?x32x128xbf16>, tensor<?x?x8x128xbf16>,
         tensor<?x?x8x128xbf16>, tensor<?x?x8x128xbf16>,
         tensor<?x?x8x128xbf16>, tensor<?xi32>)
      -> (tensor<?x?x32x128xbf16>, tensor<?x?x8x128xbf16>,
          tensor<?x?x8x128xbf16>, tensor<?x32x?xf32>, tensor<?xi32>)
  return %o, %kc, %vc : tensor<?x?x32x128xbf16>, tensor<?x?x8x128xbf16>,
      tensor<?x?x8x128xbf16>
}

func.func @decode_options(
    %q: tensor<?x?x32x128xbf16> {rudnn.name = "q", rudnn.align = 16 : i64},
    %k: tensor<?x?x8x128xbf16> {rudnn.name = "k", rudnn.align = 16 : i64},
    %v: tensor<?x?x8x128xbf16> {rudnn.name = "v", rudnn.align = 16 : i64},
    %k_cache: tensor<?x?x8x128xbf16> {rudnn.name = "k_cache", rudnn.align = 16 : i64},
    %v_cache: tensor<?x?x8x128xbf16> {rudnn.name = "v_cache", rudnn.align = 16 : i64},
    %lengths: tensor<?xi32> {rudnn.name = "cache_lengths"},
    %leftpad: tensor<?xi32> {rudnn.name = "cache_leftpad"},
    %slopes: tensor<?x32xf32> {rudnn.name = "alibi_slopes"})
    -> (tensor<?x?x32x128xbf16>) {
  %o, %kc, %vc, %lse, %status = rudnn.kv_cache_attention %q, %k, %v
      cache(%k_cache, %v_cache) lengths %lengths leftpad %leftpad
      alibi %slopes non_causal window (256, 0) softcap 30.0
      : (tensor<?x?x32x128xbf16>, tensor<?x?x8x128xbf16>,
         tensor<?x?x8x128xbf16>, tensor<?x?x8x128xbf16>,
         tensor<?x?x8x128xbf16>, tensor<?xi32>, tensor<?xi32>,
         tensor<?x32xf32>)
      -> (tensor<?x?x32x128xbf16>, tensor<?x?x8x128xbf16>,
          tensor<?x?x8x128xbf16>, tensor<?x32x?xf32>, tensor<?xi32>)
  return %o : tensor<?x?x32x128xbf16>
}
