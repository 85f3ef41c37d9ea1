// rudnn-run --report: the kernel report of the plan the run used, at the
// dims the run bound (from the arguments' shapes), with the cost model and
// the roofline bound of each launch.
//
// RUN: rudnn-run %rudnn_src_root/examples/kda.mlir --backend emulation --random 1 --dims B=1,T=100,H=2 --report | FileCheck %s

// CHECK: result o: f32[1, 100, 2, 64]
// CHECK: // kernel report for sm_90 (H200: 132 SMs)
// CHECK-NEXT: // plan @main at B=1,H=2,T=100: workspace {{[0-9]+}} bytes ({{[0-9.]+}} per token per head)
// CHECK: // ----- kernel kda_fwd_propagate_f32_f32_f32_k64_v64_c64
// CHECK-NEXT: block: 128 threads; grid (2, 2, 1) = 4 blocks
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded
// CHECK: model: {{[0-9.]+}} MiB moved, {{[0-9.]+}} GFLOP, {{[0-9.]+}} FLOP/B; roofline {{[0-9.]+}} us ({{memory|compute}}-bound)
// CHECK: // plan @main roofline: {{[0-9.]+}} us over the launches that run at these dims
// CHECK: compiles:
