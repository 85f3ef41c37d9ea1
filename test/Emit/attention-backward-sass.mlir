// REQUIRES: sass
// RUN: rudnn-opt %s -rudnn-specialize="arch=sm_80" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report --rudnn-report-dims=B=8,T=2048,S=2048,H=16,G=16 | FileCheck %s --check-prefixes=CHECK,SM80
// RUN: rudnn-opt %s -rudnn-specialize="arch=sm_90" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report --rudnn-report-dims=B=8,T=2048,S=2048,H=16,G=16 | tee %t.sm90 | FileCheck %s --check-prefixes=CHECK,SM90
// RUN: FileCheck %s --check-prefix=NOTES < %t.sm90

// ptxas repairs nothing in the Hopper kernels: no wgmma serialized, no
// warpgroup.arrive injected (every register a wgmma reads is written
// before its fence).
// NOTES: kernel report for sm_90
// NOTES-NOT: compiler:

// The bf16 attention backward's kernels at D = E = 128, causal, views
// promising 16-byte rows: the row terms a warp a row, 16 bytes a lane where
// the rows of o and dO are whole 16-byte chunks. The model: each
// kernel's own rows read and written once, every allowed (query, key) pair's
// products (half of them, causal).
// CHECK-LABEL: kernel attention_bwd_terms_bf16_e128
// CHECK-NEXT: block: 128 threads
// CHECK-NEXT: registers: {{[0-9]+}} per thread; spills: 0 bytes stored, 0 loaded
// CHECK: global loads: {{.*}}, 128-bit {{[1-9][0-9]*}}{{$}}
//
// sm_80: the gradients in one pass over each key tile, FlashAttention-2's
// blocks of 128 keys in eight warps of 16: every operand by cp.async
// (LDGSTS) into swizzled shared tiles, every product on tensor cores (HMMA)
// through ldmatrix (LDSM), P and dS fed from the accumulators to dV and dK,
// dS staged in shared memory for dQ = dS·K (read transposed through
// ldmatrix) and added to an f32 workspace with reductions; no 16-bit
// global load, nothing spilled, one block per SM (104 KB of shared
// memory). The model: 1280 FLOP a pair, S and dP formed once.
// SM80-LABEL: kernel attention_bwd_gradients_bf16_d128_e128_causal_keys128_a16
// SM80-NEXT: block: 256 threads; grid (16, 128, 1)
// SM80-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// SM80-NEXT: shared memory: 0 bytes static, 106496 dynamic
// SM80-NEXT: resident blocks per SM: 1
// SM80-NEXT: model: 514.0 MiB moved, 343.60 GFLOP, {{.*}} (compute-bound)
// SM80-NEXT: exponentials: 268.4 M,
// SM80-NEXT: in turn (no overlap):
// SM80-NEXT: L2 reductions: 1024.0 MiB,
// SM80-NEXT: sass: {{[0-9]+}} instructions; tensor {{[1-9][0-9]*}}, ldmatrix {{[1-9][0-9]*}}, cp.async {{[1-9][0-9]*}}, tma 0; {{.*}} (HMMA {{[1-9][0-9]*}}, LDGSTS {{[1-9][0-9]*}}, LDSM {{[1-9][0-9]*}})
// SM80-NEXT: global loads: 8-bit {{[0-9]+}}, 16-bit 0,
// SM80-LABEL: kernel attention_bwd_dq_bf16_d128
// SM80-NEXT: block: 128 threads
//
// sm_90 (compiled for sm_90a): the Hopper kernel, one pass over each key
// tile, 128 keys a block. Every operand by TMA (UTMALDG) alone, no
// ldmatrix and no shared-memory load by any thread: every product is wgmma
// (HGMMA), the scores' and dP's operands from shared memory, P and dS from
// registers for dV and dK, dS staged in shared memory (the block's only
// shared stores) for dQ = dS·K; dQ added to an f32 workspace. 384 threads,
// nothing spilled with dK and dV both in registers (S and dP formed once:
// 1280 FLOP a pair, as the sm_80 kernel; the consumers' lse and
// row terms read where used), one block per SM. The model: keys and values,
// queries and dO read once, dq's f32 sum written once; one exponential a
// pair; the wgmma operands read from shared memory and each key tile's
// share of dq added in L2 (4·D bytes a query row) below the tensor work. Then dq's conversion, 16 bytes
// a lane.
// SM90-LABEL: kernel attention_bwd_gradients_bf16_d128_e128_causal_wgmma
// SM90-NEXT: block: 384 threads; grid (16, 128, 1)
// SM90-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// SM90-NEXT: shared memory: 0 bytes static, 165888 dynamic
// SM90-NEXT: resident blocks per SM: 1
// SM90-NEXT: model: 514.0 MiB moved, 343.60 GFLOP, 637.5 FLOP/B; roofline {{.*}} (compute-bound)
// SM90-NEXT: exponentials: 268.4 M, {{.*}}; tensor work 347.4 us at 989 TFLOP/s
// SM90-NEXT: in turn (no overlap): {{.*}}
// SM90-NEXT: shared operands: 8192.0 MiB, 277.8 us at 30.9 TB/s
// SM90-NEXT: L2 reductions: 1024.0 MiB, 114.6 us at 9.4 TB/s
// SM90-NEXT: sass: {{[0-9]+}} instructions; tensor {{[1-9][0-9]*}}, ldmatrix 0, cp.async 0, tma {{[1-9][0-9]*}}; shared loads 0, stores {{[1-9][0-9]*}} (HGMMA {{[1-9][0-9]*}}, UTMALDG {{[1-9][0-9]*}})
// SM90-NEXT: global loads: 8-bit {{[0-9]+}}, 16-bit 0,
// SM90: named barriers: 1 sync, 0 arrive
// SM90-LABEL: kernel attention_bwd_dq_bf16_d128
// SM90-NEXT: block: 128 threads
// SM90-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// SM90: global loads: {{.*}}, 128-bit {{[1-9][0-9]*}}{{$}}
// SM90-NEXT: global stores: {{.*}}, 128-bit {{[1-9][0-9]*}}{{$}}
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

// At D = E = 64 (not causal) on sm_90: the same Hopper kernel, 640 FLOP a
// pair (S, dP, dV, dK and dQ once each), nothing spilled.
// SM90-LABEL: kernel attention_bwd_gradients_bf16_d64_e64_wgmma
// SM90-NEXT: block: 384 threads
// SM90-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// SM90: model: {{.*}}, 343.60 GFLOP,
// SM90: sass: {{.*}}ldmatrix 0, cp.async 0, tma {{[1-9][0-9]*}}; shared loads 0, {{.*}}(HGMMA {{[1-9][0-9]*}}, UTMALDG {{[1-9][0-9]*}})
// SM90-LABEL: kernel attention_bwd_dq_bf16_d64
func.func @d64(%q: tensor<?x?x?x64xbf16> {rudnn.align = 16 : i64},
               %k: tensor<?x?x?x64xbf16> {rudnn.align = 16 : i64},
               %v: tensor<?x?x?x64xbf16> {rudnn.align = 16 : i64},
               %o: tensor<?x?x?x64xbf16>, %lse: tensor<?x?x?xf32>,
               %do: tensor<?x?x?x64xbf16> {rudnn.align = 16 : i64})
    -> (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>,
        tensor<?x?x?x64xbf16>) {
  %dq, %dk, %dv = rudnn.attention_backward %q, %k, %v output(%o, %lse)
      gradient %do
      : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>,
         tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>,
         tensor<?x?x?x64xbf16>)
      -> (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>,
          tensor<?x?x?x64xbf16>)
  return %dq, %dk, %dv
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>
}

// At D = E = 256 on sm_80, 64 keys a block: dK and dV do not fit a warp's
// registers together, so the block takes dV, then dK and dQ, in two
// passes over the queries (32 at a time; S formed twice, 3072 FLOP a
// pair against 2560): still nothing spilled, every product on tensor
// cores, 132 KB of
// shared memory (an A100's fits too).
// SM80-LABEL: kernel attention_bwd_gradients_bf16_d256_e256_causal_keys64_a16
// SM80-NEXT: block: 128 threads
// SM80-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// SM80-NEXT: shared memory: 0 bytes static, 135168 dynamic
// SM80-NEXT: resident blocks per SM: 1
// SM80-NEXT: model: 1026.0 MiB moved, 824.63 GFLOP,
// SM80: sass: {{[0-9]+}} instructions; tensor {{[1-9][0-9]*}}, ldmatrix {{[1-9][0-9]*}}, cp.async {{[1-9][0-9]*}}, tma 0; {{.*}} (HMMA {{[1-9][0-9]*}}, LDGSTS {{[1-9][0-9]*}}, LDSM {{[1-9][0-9]*}})
//
// On sm_90 the wide Hopper kernel, one pass over each key tile of 64: both
// consumer warpgroups form Sᵀ and dPᵀ for half the step's queries each,
// stage P and dS (the only shared stores) and add Pᵀ dO and dSᵀ Q to their
// half of dV's and dK's columns from shared memory: every operand by TMA,
// every product wgmma, nothing spilled, 226 KiB of shared memory. Each
// query row's dq is reduced in L2 once per 64 keys, twice as often as
// at D = 128: the reductions' bound nears the tensor work's.
// SM90-LABEL: kernel attention_bwd_gradients_bf16_d256_e256_causal_wgmma
// SM90-NEXT: block: 384 threads; grid (32, 128, 1)
// SM90-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// SM90-NEXT: shared memory: 0 bytes static, 231424 dynamic
// SM90-NEXT: resident blocks per SM: 1
// SM90-NEXT: model: {{.*}} GFLOP
// SM90-NEXT: exponentials:
// SM90-NEXT: in turn (no overlap):
// SM90-NEXT: shared operands:
// SM90-NEXT: L2 reductions:
// SM90-NEXT: sass: {{[0-9]+}} instructions; tensor {{[1-9][0-9]*}}, ldmatrix 0, cp.async 0, tma {{[1-9][0-9]*}}; shared loads 0, {{.*}} (HGMMA {{[1-9][0-9]*}}, UTMALDG {{[1-9][0-9]*}})
func.func @d256(%q: tensor<?x?x?x256xbf16> {rudnn.align = 16 : i64},
                %k: tensor<?x?x?x256xbf16> {rudnn.align = 16 : i64},
                %v: tensor<?x?x?x256xbf16> {rudnn.align = 16 : i64},
                %o: tensor<?x?x?x256xbf16>, %lse: tensor<?x?x?xf32>,
                %do: tensor<?x?x?x256xbf16> {rudnn.align = 16 : i64})
    -> (tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16>,
        tensor<?x?x?x256xbf16>) {
  %dq, %dk, %dv = rudnn.attention_backward %q, %k, %v output(%o, %lse)
      gradient %do causal
      : (tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16>,
         tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16>, tensor<?x?x?xf32>,
         tensor<?x?x?x256xbf16>)
      -> (tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16>,
          tensor<?x?x?x256xbf16>)
  return %dq, %dk, %dv
      : tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16>
}
