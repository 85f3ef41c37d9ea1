// REQUIRES: sass
// RUN: rudnn-opt %s -rudnn-specialize="arch=sm_80" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report --rudnn-report-dims=B=8,T=2048,S=2048,H=16,G=16 | FileCheck %s --check-prefix=SM80
// RUN: rudnn-opt %s -rudnn-specialize="arch=sm_90" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report --rudnn-report-dims=B=8,T=2048,S=2048,H=16,G=16 | tee %t.sm90 | FileCheck %s --check-prefix=SM90
// RUN: FileCheck %s --check-prefix=NOTES < %t.sm90

// ptxas repairs nothing in the Hopper kernels: no wgmma serialized, no
// warpgroup.arrive injected (every register a wgmma reads is written
// before its fence).
// NOTES: kernel report for sm_90
// NOTES-NOT: compiler:

// The bf16 attention kernels at D = E = 128, causal, their views promising
// 16-byte rows. The model: q, k and v read (K and V once per key-value
// head), o and lse written; half the products
// (causal), so the bound is the tensor cores' (2^37 FLOPs); one exponential
// a query and key (2^28, one per 512 FLOPs), on the special-function
// units, half the tensor time on an H200 and a quarter on an A100.
//
// sm_80: FlashAttention-2's block, 128 queries in four warps of 32 rows
// against tiles of 32 keys, one buffer each of K and V (48 KiB). Queries,
// keys and values by cp.async (LDGSTS) alone into swizzled shared tiles (no
// 16-bit global load; the 8-bit ones read a key mask, where one is given,
// in the tiles its bounds cross), the scores and the products by the values
// on tensor cores (HMMA) through ldmatrix (LDSM), the probabilities fed
// from the score accumulators, two blocks per SM, nothing spilled; o staged
// in the freed tiles and stored 16 bytes at a time (no 16-bit global
// store).
// SM80-LABEL: kernel attention_fwd_bf16_d128_e128_bq128_bk32_causal_a16_o16
// SM80-NEXT: block: 128 threads; grid (16, 128, 1) = 2048 blocks
// SM80-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// SM80-NEXT: shared memory: 0 bytes static, 49152 dynamic
// SM80-NEXT: resident blocks per SM: 2
// SM80-NEXT: model: 257.0 MiB moved, 137.44 GFLOP, {{[0-9.]+}} FLOP/B; roofline 440.5 us (compute-bound)
// SM80-NEXT: exponentials: 268.4 M, 110.2 us at 2.4 T/s; tensor work 440.5 us at 312 TFLOP/s{{$}}
// SM80-NEXT: in turn (no overlap): 550.7 us, 250 TFLOP/s
// SM80-NEXT: sass: {{[0-9]+}} instructions; tensor {{[1-9][0-9]*}}, ldmatrix {{[1-9][0-9]*}}, cp.async {{[1-9][0-9]*}}, tma 0; {{.*}} (HMMA {{[1-9][0-9]*}}, LDGSTS {{[1-9][0-9]*}}, LDSM {{[1-9][0-9]*}})
// SM80-NEXT: global loads: 8-bit {{[0-9]+}}, 16-bit 0,
// SM80-NEXT: global stores: 8-bit 0, 16-bit 0, 32-bit {{[0-9]+}}, 64-bit 0, 128-bit {{[1-9][0-9]*}}
//
// sm_90 (compiled for sm_90a): the Hopper kernel, 128 queries a block. Its
// products read Q and K from shared memory and V beside P in registers: a
// byte every 51 FLOPs, 87 us of the shared memory's bandwidth under the
// 139 us of tensor work.
// Queries, keys and values by TMA (UTMALDG) alone, no ldmatrix and no
// thread loading an operand from shared memory: both products are wgmma
// (HGMMA), the scores' operands from shared memory, the probabilities from
// registers, each 16-deep step one m64n128k16 (the tile's 128 keys, its
// 128 value columns); the two consumer warpgroups take turns issuing them
// on named barriers (bar.sync and bar.arrive). The epilogue stages each
// warp's rows in shared memory (its only shared stores; no thread loads
// from shared memory) and, o promising 16-byte rows, stores them by TMA
// (UTMASTG): no 16-bit global store; lse's 32-bit ones remain. 384 threads
// at 168 registers (the producer gives its share to the consumers),
// nothing spilled, one block per SM, a persistent grid of them.
// SM90-LABEL: kernel attention_fwd_bf16_d128_e128_bq128_bk128_causal_wgmma_o16
// SM90-NEXT: block: 384 threads; grid (132, 1, 1) = 132 blocks, 1.00 waves
// SM90-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// SM90-NEXT: shared memory: 0 bytes static, 198656 dynamic
// SM90-NEXT: resident blocks per SM: 1
// SM90-NEXT: model: 257.0 MiB moved, 137.44 GFLOP, {{[0-9.]+}} FLOP/B; roofline 139.0 us (compute-bound)
// SM90-NEXT: exponentials: 268.4 M, 68.8 us at 3.9 T/s; tensor work 139.0 us at 989 TFLOP/s{{$}}
// SM90-NEXT: in turn (no overlap): 207.8 us, 661 TFLOP/s
// SM90-NEXT: shared operands: 2570.0 MiB, 87.2 us at 30.9 TB/s
// SM90-NEXT: sass: {{[0-9]+}} instructions; tensor {{[1-9][0-9]*}}, ldmatrix 0, cp.async 0, tma {{[1-9][0-9]*}}; shared loads 0, stores {{[1-9][0-9]}} (HGMMA {{[1-9][0-9]*}}, UTMACMDFLUSH {{[1-9][0-9]*}}, UTMALDG {{[1-9][0-9]*}}, UTMASTG {{[1-9][0-9]*}})
// SM90-NEXT: global loads: 8-bit {{[0-9]+}}, 16-bit 0,
// SM90-NEXT: global stores: 8-bit 0, 16-bit 0, 32-bit {{[0-9]+}}, 64-bit 0, 128-bit 0
// SM90-NEXT: named barriers: {{[1-9][0-9]*}} sync, {{[1-9][0-9]*}} arrive
// SM90-NEXT: wgmma shapes: 64x128x16 {{[1-9][0-9]*}}{{$}}
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
