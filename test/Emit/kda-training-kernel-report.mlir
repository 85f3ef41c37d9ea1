// RUN: rudnn-opt %rudnn_src_root/bench/kda_training_bf16_k128.mlir -rudnn-specialize="arch=sm_90" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report --rudnn-report-dims=B=1,T=32768,H=16 | FileCheck %s

// The kernel report of the benchmarked training step (bench/): the forward
// saves its boundaries (512 bytes per token per head) and tiles (the chunk's
// 57856 bytes and the backward's 24576 per chunk of 64 tokens, 1288 bytes
// per token per head), and the backward reads them, adding only the reverse
// walk's dS at each chunk end and dU (768): the step holds 2568 bytes per
// token per head at its peak, under the 3 KiB target. Four kernels (the
// forward's walk on wgmma forms its outputs too) and no prepare or restore
// in the backward.
// CHECK: // plan @main at B=1,T=32768,H=16: workspace 1346371584 bytes (2568.0 per token per head)
// CHECK: // ----- kernel kda_bwd_prepare_bf16_f32_bf16_k128_v128_c64_a16_tma
// CHECK-NEXT: block: 128 threads; grid (512, 16, 1) = 8192 blocks
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded
// CHECK: // ----- kernel kda_fwd_propagate_output_bf16_bf16_bf16_k128_v128_c64_wgmma
// CHECK-NEXT: block: 128 threads; grid (16, 8, 1) = 128 blocks
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded
// CHECK: // ----- kernel kda_bwd_state_gradient_bf16_bf16_bf16_k128_v128_c64_a16
// CHECK-NEXT: block: 128 threads
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded
// CHECK: // ----- kernel kda_bwd_gradients_bf16_f32_bf16_k128_v128_c64_a16
// CHECK-NEXT: block: 256 threads; grid (512, 16, 1) = 8192 blocks
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded
// CHECK-NOT: // ----- kernel
// CHECK: // plan @main roofline: {{[0-9.]+}} us over the launches that run at these dims
