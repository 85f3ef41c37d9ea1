// RUN: rudnn-opt %s -rudnn-specialize="arch=sm_90" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report | FileCheck %s
// RUN: rudnn-opt %s -rudnn-specialize="arch=sm_90" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report-json | FileCheck %s --check-prefix=JSON
// RUN: rudnn-opt %s -rudnn-specialize="arch=sm_90" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report --rudnn-report-dims=B=1,T=32768,H=16 | FileCheck %s --check-prefix=DIMS
// RUN: rudnn-opt %s -rudnn-specialize="arch=sm_90" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report --rudnn-report-dims=B=8,T=4096,H=16 | FileCheck %s --check-prefix=WAVES
// RUN: sed -e 's/%beta$/%beta wgmma false/' %s | rudnn-opt -rudnn-specialize="arch=sm_90" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report --rudnn-report-dims=B=8,T=4096,H=16 | FileCheck %s --check-prefix=SYNC

// The kernel report of the production-shape forward: per kernel its block,
// registers, spills (none), shared memory, resident blocks per SM on an
// H200, the emitter's cost model (bytes and flops per launch) and the
// static SASS mix (when a disassembler is at hand).
// CHECK: // kernel report for sm_90 (H200: 132 SMs), SASS {{from .*cuobjdump|not available}}
// CHECK: // ----- kernel kda_fwd_recurrent_bf16_f32_bf16_k128_v128_c64
// CHECK-NEXT: block: 32 threads; grid (B·H, 4, 1)
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: {{[0-9]+}} bytes
// CHECK-NEXT: shared memory: {{[0-9]+}} bytes static, 0 dynamic
// CHECK-NEXT: resident blocks per SM: {{[1-9][0-9]*}}
// Per decoded token of a head: q, k, g in, v in and o out, β (1538
// bytes); 7·128·128 flops.
// CHECK-NEXT: model: 1538·T·B·H bytes, 114688·T·B·H flops per launch
// CHECK-NEXT: {{sass: [0-9]+ instructions; tensor [0-9]+, ldmatrix [0-9]+, cp.async [0-9]+, tma [0-9]+; shared loads [0-9]+, stores [0-9]+|sass: unavailable: .*}}
// prepare on sm_90a takes q's, k's and v's rows by TMA (_tma: their views
// promise 16-byte rows) into swizzled column blocks of dynamic shared
// memory (with the 1024 bytes of slack that align them; its mbarrier is
// static), g's by cp.async, and forms W and U0 on tensor cores through
// ldmatrix; it keeps the decayed queries too (_qd), for the walk that
// forms the outputs.
// CHECK: // ----- kernel kda_fwd_prepare_bf16_f32_bf16_k128_v128_c64_a16_qd_tma
// CHECK-NEXT: block: 128 threads; grid (N, B·H, 1)
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded
// CHECK-NEXT: shared memory: 36880 bytes static, 66816 dynamic
// CHECK-NEXT: resident blocks per SM: 2
// CHECK-NEXT: model: 156288·N·B·H bytes, {{[0-9]+}}·N·B·H flops per launch
// CHECK-NEXT: {{sass: [0-9]+ instructions; tensor [1-9][0-9]*, ldmatrix [1-9][0-9]*, cp.async [1-9][0-9]*, tma [1-9][0-9]*|sass: unavailable}}
// The walk is on wgmma (sm_90a) and forms the outputs too: the forward is
// two launches. The state in fp32 wgmma accumulators, its operands (W, Kd,
// U0, e^Γlast, and the output's Qd and pairwise matrix) by cp.async into
// swizzled tiles, two stages (132096 bytes of dynamic shared memory with
// the slack that aligns them), no ldmatrix; per chunk of a head W, Kd, Qd,
// U0, U, the pairwise matrix and O, no boundary (107008 bytes).
// CHECK: // ----- kernel kda_fwd_propagate_output_bf16_bf16_bf16_k128_v128_c64_wgmma
// CHECK-NEXT: block: 128 threads; grid (B·H, 8, 1)
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded
// CHECK-NEXT: shared memory: 0 bytes static, 132096 dynamic
// CHECK-NEXT: resident blocks per SM: 1
// CHECK-NEXT: model: 107008·N·B·H bytes, 6815744·N·B·H flops per launch
// CHECK-NEXT: {{sass: [0-9]+ instructions; tensor [1-9][0-9]*, ldmatrix 0, cp.async [1-9][0-9]*.*HGMMA [1-9][0-9]*|sass: unavailable}}
// Its operands come by cp.async alone: no 2-byte global load is left.
// CHECK-NOT: global loads: {{.*}}16-bit {{[1-9]}}
// CHECK-NOT: ----- kernel

// At given dims: each launch's grid, blocks and waves on 132 SMs, and the
// plan's workspace (57856 bytes of tiles and 24576 of the decayed queries'
// place per chunk of 64 tokens per head, no boundary: 1288 per token per
// head).
// DIMS: // plan @main at B=1,T=32768,H=16: workspace 675282944 bytes (1288.0 per token per head)
// DIMS: // ----- kernel kda_fwd_recurrent_bf16_f32_bf16_k128_v128_c64
// DIMS-NEXT: block: 32 threads; grid (16, 4, 1) = 64 blocks, {{[0-9.]+}} waves (not run at these dims)
// prepare's bytes bound it, its exponentials close behind: per chunk of
// a head the pairwise products take 4·136·128 within 16-token blocks and
// (16 + 16·I)·128 split factors for row blocks I = 1..3 across them, then
// e^Γlast (128), Kd's, W's and the queries' decay (3·64·128): 112768,
// 8192 chunks of a head at 3.9 T/s.
// DIMS: // ----- kernel kda_fwd_prepare_bf16_f32_bf16_k128_v128_c64_a16_qd_tma
// DIMS-NEXT: block: 128 threads; grid (512, 16, 1) = 8192 blocks, {{[0-9.]+}} waves
// DIMS: model: 1221.0 MiB moved, 17.90 GFLOP, 14.0 FLOP/B; roofline 266.7 us (memory-bound)
// DIMS-NEXT: exponentials: 923.8 M, 236.9 us at 3.9 T/s; tensor work 18.1 us at 989 TFLOP/s
// DIMS: // ----- kernel kda_fwd_propagate_output_bf16_bf16_bf16_k128_v128_c64_wgmma
// DIMS-NEXT: block: 128 threads; grid (16, 8, 1) = 128 blocks, {{[0-9.]+}} waves
// The walk's 512 chunks run one after another, a block each of 16 value
// columns (one an SM). A chunk's bytes (W, Kd, Qd and the pairwise matrix
// whole; its U0, U and O columns; e^Γlast) at an SM's share of the L2
// bandwidth outlast its critical path (two block barriers and 8 + 4
// dependent wgmma, the output's products beside them), so the walk takes
// 512 x 0.90 us.
// DIMS: model: 836.0 MiB moved, 55.83 GFLOP, 63.7 FLOP/B; roofline 461.6 us (serial-bound)
// DIMS-NEXT: serial: 512 steps x 0.90 us (a block's L2 reads 0.90, compute 0.12, latency 0.28 of 2 block barriers and 12 dependent mma) = 461.6 us
// At B = 8 the walk's 1024 blocks give each SM 8, one resident at a time:
// eight waves of 64 chunks.
// WAVES: // ----- kernel kda_fwd_propagate_output_bf16_bf16_bf16_k128_v128_c64_wgmma
// WAVES: resident blocks per SM: 1
// WAVES-NEXT: model: {{.*}} roofline 461.6 us (serial-bound)
// WAVES-NEXT: serial: 64 steps x 0.90 us (a block's L2 reads 0.90, compute 0.12, latency 0.28 of 2 block barriers and 12 dependent mma) x 8 waves = 461.6 us
// The mma.sync walk (`wgmma false`) takes 76800 bytes of shared memory,
// three blocks resident on an SM: they share its L2 bandwidth and overlap
// their latency (a step 3 x 0.58 us), in three waves of 64 chunks.
// SYNC: // ----- kernel kda_fwd_propagate_bf16_bf16_bf16_k128_v128_c64
// SYNC: resident blocks per SM: 3
// SYNC-NEXT: model: {{.*}} roofline 336.5 us (serial-bound)
// SYNC-NEXT: serial: 64 steps x 1.75 us (a block's L2 reads 0.58, compute 0.07, latency 0.35 of 4 block barriers and 12 dependent mma, 3 blocks an SM at once) x 3 waves = 336.5 us
// SYNC: // ----- kernel kda_fwd_output_bf16_f32_bf16_k128_v128_c64_a16
// The plan's bound: the launches that run (not the decode kernel).
// DIMS: // plan @main roofline: 728.4 us over the launches that run at these dims (4.8 TB/s, 989 TFLOP/s tensor, 67 FP32)

// JSON: "arch": "sm_90",
// JSON: "device": "H200",
// JSON: "kernel": "kda_fwd_recurrent_bf16_f32_bf16_k128_v128_c64",
// JSON: "model": {
// JSON-NEXT: "flops": "{{[0-9]+}}·T·B·H",
// JSON-NEXT: "memory_bytes": "{{[0-9]+}}·T·B·H"
// JSON: "resident_blocks_per_sm":
// JSON: "sass": {
// JSON: "spill_stores": 0,
// JSON: "threads": 32
func.func @main(%q: tensor<?x?x?x128xbf16> {rudnn.align = 16 : i64}, %g: tensor<?x?x?x128xf32>,
                %beta: tensor<?x?x?xbf16>) -> tensor<?x?x?x128xbf16> {
  %o, %s = rudnn.kda %q, %q, %q, %g, %beta
      : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
         tensor<?x?x?x128xf32>, tensor<?x?x?xbf16>)
      -> (tensor<?x?x?x128xbf16>, tensor<?x?x128x128xf32>)
  return %o : tensor<?x?x?x128xbf16>
}
