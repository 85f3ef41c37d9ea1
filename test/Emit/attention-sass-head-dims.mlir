// REQUIRES: sass
// RUN: rudnn-opt %s -rudnn-specialize="arch=sm_90" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report --rudnn-report-dims=B=4,T=4096,S=4096,H=16,G=16 | FileCheck %s
// RUN: rudnn-opt %s -rudnn-specialize="arch=sm_80" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report --rudnn-report-dims=B=4,T=4096,S=4096,H=16,G=16 | FileCheck %s --check-prefix=SM80

// The Hopper attention forward at the head dims either side of 128, bf16,
// views promising 16-byte rows (o too), on the persistent grid of one block
// an SM: both keep their accumulators in registers (nothing spilled), take
// every product as one wgmma as wide as its tile, and store o through TMA
// (UTMASTG), no 16-bit global store left.
//
// D = E = 64, full attention: three consumer warpgroups of 64 rows against
// 64 keys a tile, three stages of K and V in 98 KiB. One exponential a query
// and key against 256 FLOPs (2·(D + E)): the special-function units' time
// nearly equals the tensor cores', as FlashAttention-3 found at this head
// dim, so a third warpgroup's products run under the others' exponentials.
// CHECK-LABEL: kernel attention_fwd_bf16_d64_e64_bq192_bk64_wgmma_o16
// CHECK-NEXT: block: 512 threads; grid (132, 1, 1) = 132 blocks, 1.00 waves
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// CHECK-NEXT: shared memory: 0 bytes static, 100352 dynamic
// CHECK-NEXT: resident blocks per SM: 1
// CHECK-NEXT: model: 129.0 MiB moved, 274.88 GFLOP, {{[0-9.]+}} FLOP/B; roofline 277.9 us (compute-bound)
// CHECK-NEXT: exponentials: 1073.7 M, 275.3 us at 3.9 T/s; tensor work 277.9 us
// CHECK-NEXT: in turn (no overlap): 553.3 us, 497 TFLOP/s
// CHECK-NEXT: shared operands: 6241.5 MiB, 211.7 us at 30.9 TB/s
// CHECK-NEXT: sass: {{.*}}(HGMMA {{[1-9][0-9]*}}, UTMACMDFLUSH {{[1-9][0-9]*}}, UTMALDG {{[1-9][0-9]*}}, UTMASTG {{[1-9][0-9]*}})
// CHECK-NEXT: global loads: 8-bit {{[0-9]+}}, 16-bit 0,
// CHECK-NEXT: global stores: 8-bit 0, 16-bit 0, 32-bit {{[0-9]+}}, 64-bit 0, 128-bit 0
// CHECK-NEXT: named barriers: {{[1-9][0-9]*}} sync, {{[1-9][0-9]*}} arrive
// CHECK-NEXT: wgmma shapes: 64x64x16 {{[1-9][0-9]*}}{{$}}
// sm_80 at D = 64: four warps of 32 rows against 64 keys, one buffer each
// of K and V (32 KiB), two blocks an SM, nothing spilled.
// SM80-LABEL: kernel attention_fwd_bf16_d64_e64_bq128_bk64_a16_o16
// SM80-NEXT: block: 128 threads;
// SM80-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// SM80-NEXT: shared memory: 0 bytes static, 32768 dynamic
// SM80-NEXT: resident blocks per SM: 2
func.func @d64(%q: tensor<?x?x?x64xbf16> {rudnn.align = 16 : i64},
               %k: tensor<?x?x?x64xbf16> {rudnn.align = 16 : i64},
               %v: tensor<?x?x?x64xbf16> {rudnn.align = 16 : i64})
    -> (tensor<?x?x?x64xbf16> {rudnn.align = 16 : i64}, tensor<?x?x?xf32>) {
  %o, %lse = rudnn.attention %q, %k, %v
      : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>,
         tensor<?x?x?x64xbf16>)
      -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
}

// D = E = 256, causal: 64 keys a tile (the scores and 256 accumulator
// columns fill a consumer's registers), two stages and two output buffers
// a warp in 226 KiB of shared memory; P·V is one m64n256k16 a step. The narrow key tile reads Q from
// shared memory once every 64 keys instead of 128: the operands'
// shared-memory time comes to three quarters of the tensor work.
// CHECK-LABEL: kernel attention_fwd_bf16_d256_e256_bq128_bk64_causal_wgmma_o16
// CHECK-NEXT: block: 384 threads; grid (132, 1, 1) = 132 blocks, 1.00 waves
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// CHECK-NEXT: shared memory: 0 bytes static, 231424 dynamic
// CHECK-NEXT: resident blocks per SM: 1
// CHECK-NEXT: model: 513.0 MiB moved, 549.76 GFLOP, {{[0-9.]+}} FLOP/B; roofline 555.9 us (compute-bound)
// CHECK-NEXT: exponentials: 536.9 M, 137.7 us at 3.9 T/s; tensor work 555.9 us
// CHECK-NEXT: in turn (no overlap): 693.5 us, 793 TFLOP/s
// CHECK-NEXT: shared operands: 12483.0 MiB, 423.3 us at 30.9 TB/s
// CHECK-NEXT: sass: {{.*}}(HGMMA {{[1-9][0-9]*}}, UTMACMDFLUSH {{[1-9][0-9]*}}, UTMALDG {{[1-9][0-9]*}}, UTMASTG {{[1-9][0-9]*}})
// CHECK-NEXT: global loads: 8-bit {{[0-9]+}}, 16-bit 0,
// CHECK-NEXT: global stores: 8-bit 0, 16-bit 0, 32-bit {{[0-9]+}}, 64-bit 0, 128-bit 0
// CHECK-NEXT: named barriers: {{[1-9][0-9]*}} sync, {{[1-9][0-9]*}} arrive
// CHECK-NEXT: wgmma shapes: 64x256x16 {{[1-9][0-9]*}} 64x64x16 {{[1-9][0-9]*}}{{$}}
// sm_80 at D = 256: eight warps of 16 rows (a warp of 32 would not hold
// its accumulators) against 32 keys, 96 KiB, one block an SM, nothing
// spilled.
// SM80-LABEL: kernel attention_fwd_bf16_d256_e256_bq128_bk32_causal_a16_o16
// SM80-NEXT: block: 256 threads;
// SM80-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// SM80-NEXT: shared memory: 0 bytes static, 98304 dynamic
// SM80-NEXT: resident blocks per SM: 1
func.func @d256(%q: tensor<?x?x?x256xbf16> {rudnn.align = 16 : i64},
                %k: tensor<?x?x?x256xbf16> {rudnn.align = 16 : i64},
                %v: tensor<?x?x?x256xbf16> {rudnn.align = 16 : i64})
    -> (tensor<?x?x?x256xbf16> {rudnn.align = 16 : i64},
        tensor<?x?x?xf32>) {
  %o, %lse = rudnn.attention %q, %k, %v causal
      : (tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16>,
         tensor<?x?x?x256xbf16>)
      -> (tensor<?x?x?x256xbf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x256xbf16>, tensor<?x?x?xf32>
}
