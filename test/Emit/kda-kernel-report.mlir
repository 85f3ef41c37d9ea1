// RUN: rudnn-opt %s -rudnn-specialize="arch=sm_90" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report | FileCheck %s
// RUN: rudnn-opt %s -rudnn-specialize="arch=sm_90" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report-json | FileCheck %s --check-prefix=JSON
// RUN: rudnn-opt %s -rudnn-specialize="arch=sm_90" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report --rudnn-report-dims=B=1,T=32768,H=16 | FileCheck %s --check-prefix=DIMS
// RUN: rudnn-opt %s -rudnn-specialize="arch=sm_90" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report --rudnn-report-dims=B=8,T=4096,H=16 | FileCheck %s --check-prefix=WAVES

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
// prepare stages its rows by cp.async into dynamic shared memory and forms
// W and U0 on tensor cores through ldmatrix.
// CHECK: // ----- kernel kda_fwd_prepare_bf16_f32_bf16_k128_v128_c64_a16
// CHECK-NEXT: block: 128 threads; grid (N, B·H, 1)
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded
// CHECK-NEXT: shared memory: 36864 bytes static, 65792 dynamic
// CHECK-NEXT: resident blocks per SM: {{[1-9][0-9]*}}
// CHECK-NEXT: model: 139904·N·B·H bytes, {{[0-9]+}}·N·B·H flops per launch
// CHECK-NEXT: {{sass: [0-9]+ instructions; tensor [1-9][0-9]*, ldmatrix [1-9][0-9]*, cp.async [1-9][0-9]*|sass: unavailable}}
// The walk is on wgmma (sm_90a): the state in fp32 wgmma accumulators, its
// operands by cp.async into swizzled tiles (two stages, 78848 bytes of
// dynamic shared memory with the slack that aligns them), no ldmatrix.
// CHECK: // ----- kernel kda_fwd_propagate_bf16_bf16_bf16_k128_v128_c64_wgmma
// CHECK-NEXT: block: 128 threads; grid (B·H, 8, 1)
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded
// CHECK-NEXT: shared memory: 0 bytes static, 78848 dynamic
// CHECK-NEXT: resident blocks per SM: 2
// CHECK-NEXT: model: 98816·N·B·H bytes, 4194304·N·B·H flops per launch
// CHECK-NEXT: {{sass: [0-9]+ instructions; tensor [1-9][0-9]*, ldmatrix 0, cp.async [1-9][0-9]*.*HGMMA [1-9][0-9]*|sass: unavailable}}
// Its operands come by cp.async alone: no 2-byte global load is left.
// CHECK-NOT: global loads: {{.*}}16-bit {{[1-9]}}
// The output kernel is on the tile layer: tensor cores fed by cp.async and
// ldmatrix, the decayed queries (64 x 128 bf16) in dynamic shared memory.
// q promises 16-byte aligned rows (rudnn.align), so no copy has an
// element-wise path (kda-sass.mlir counts the loads).
// CHECK: // ----- kernel kda_fwd_output_bf16_f32_bf16_k128_v128_c64_a16
// CHECK-NEXT: block: 128 threads
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded
// CHECK-NEXT: shared memory: {{[1-9][0-9]*}} bytes static, 16384 dynamic
// CHECK-NEXT: resident blocks per SM: {{[1-9][0-9]*}}
// CHECK-NEXT: model: {{[0-9]+}}·N·B·H bytes, {{[0-9]+}}·N·B·H flops per launch
// CHECK-NEXT: {{sass: [0-9]+ instructions; tensor [1-9][0-9]*, ldmatrix [1-9][0-9]*, cp.async [1-9][0-9]*|sass: unavailable}}

// At given dims: each launch's grid, blocks and waves on 132 SMs, and the
// plan's workspace (57856 bytes of tiles and a 32768-byte bf16 boundary per
// chunk of 64 tokens per head: 1416 per token per head).
// DIMS: // plan @main at B=1,T=32768,H=16: workspace 742391808 bytes (1416.0 per token per head)
// DIMS: // ----- kernel kda_fwd_recurrent_bf16_f32_bf16_k128_v128_c64
// DIMS-NEXT: block: 32 threads; grid (16, 4, 1) = 64 blocks, {{[0-9.]+}} waves (not run at these dims)
// prepare's exponentials bound it: per chunk of a head the pairwise
// products take 4·136·128 within 16-token blocks and 12·24·128 split
// factors across them, then e^Γlast (128), Kd's and W's decayed keys
// (2·64·128): 123008, 8192 chunks of a head at 3.9 T/s.
// DIMS: // ----- kernel kda_fwd_prepare_bf16_f32_bf16_k128_v128_c64_a16
// DIMS-NEXT: block: 128 threads; grid (512, 16, 1) = 8192 blocks, {{[0-9.]+}} waves
// DIMS: model: 1093.0 MiB moved, 17.90 GFLOP, 15.6 FLOP/B; roofline 258.4 us (exponential-bound)
// DIMS-NEXT: exponentials: 1007.7 M, 258.4 us at 3.9 T/s; tensor work 18.1 us at 989 TFLOP/s
// DIMS: // ----- kernel kda_fwd_propagate_bf16_bf16_bf16_k128_v128_c64_wgmma
// DIMS-NEXT: block: 128 threads; grid (16, 8, 1) = 128 blocks, {{[0-9.]+}} waves
// The cost model at these dims: 98816 bytes and 4·64·128·128 flops per
// chunk of a head, 8192 of them (168.6 us at 4.8 TB/s); but the walk's 512
// chunks run one after another, a block each of 16 value columns (one an
// SM). A chunk's 41472 bytes (W, Kd, its U0 and U, e^Γlast, its boundary)
// at an SM's share of the L2 bandwidth outlast its critical path (two
// block barriers and 8 + 4 dependent wgmma, with the products' FLOPs), so
// the walk takes 512 x 0.58 us.
// DIMS: model: 772.0 MiB moved, 34.36 GFLOP, 42.4 FLOP/B; roofline 299.1 us (serial-bound)
// DIMS-NEXT: serial: 512 steps x 0.58 us (a block's L2 reads 0.58, compute 0.07, latency 0.28 of 2 block barriers and 12 dependent mma) = 299.1 us
// At B = 8 the walk's 1024 blocks give each SM 8: three resident at once
// share its L2 bandwidth and overlap their latency (a step 3 x 0.58 us),
// in three waves of 64 chunks.
// WAVES: // ----- kernel kda_fwd_propagate_bf16_bf16_bf16_k128_v128_c64_wgmma
// WAVES: resident blocks per SM: 2
// WAVES-NEXT: model: {{.*}} roofline 299.1 us (serial-bound)
// WAVES-NEXT: serial: 64 steps x 1.17 us (a block's L2 reads 0.58, compute 0.07, latency 0.28 of 2 block barriers and 12 dependent mma, 2 blocks an SM at once) x 4 waves = 299.1 us
// DIMS: // ----- kernel kda_fwd_output_bf16_f32_bf16_k128_v128_c64_a16
// DIMS-NEXT: block: 128 threads; grid (512, 16, 2) = 16384 blocks, {{[0-9.]+}} waves
// DIMS: model: {{[0-9.]+}} MiB moved, {{[0-9.]+}} GFLOP, {{[0-9.]+}} FLOP/B; roofline {{[0-9.]+}} us (memory-bound)
// The plan's bound: the launches that run (not the decode kernel).
// DIMS: // plan @main roofline: {{[0-9.]+}} us over the launches that run at these dims (4.8 TB/s, 989 TFLOP/s tensor, 67 FP32)

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
