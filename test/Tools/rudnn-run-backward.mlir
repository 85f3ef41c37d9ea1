// Runs the shipped KDA backward example end to end in emulation at odd
// sizes: all six gradients checked against the float64 reference gradient.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: rm -rf %t.kernels
// RUN: rudnn-run %rudnn_src_root/examples/kda_backward.mlir --backend emulation --random 4 --dims B=2,T=65,H=3 --check --cache-dir %t.kernels --outputs %t/out | FileCheck %s
// RUN: ls %t/out | FileCheck %s --check-prefix=FILES

// CHECK: backend: CPU emulation
// CHECK: result dq: f32[2, 65, 3, 64]
// CHECK: result dbeta: f32[2, 65, 3]
// CHECK: result dinitial_state: f32[2, 3, 64, 64]
// CHECK: check dq: relative error {{.*}} (tolerance 1e-04) ok
// CHECK: check dk: relative error {{.*}} (tolerance 1e-04) ok
// CHECK: check dv: relative error {{.*}} (tolerance 1e-04) ok
// CHECK: check dg: relative error {{.*}} (tolerance 1e-04) ok
// CHECK: check dbeta: relative error {{.*}} (tolerance 1e-04) ok
// CHECK: check dinitial_state: relative error {{.*}} (tolerance 1e-04) ok
// CHECK: compiles: 4

// FILES: dbeta.npy

// --profile runs once more, timing each of the backward plan's launches.
// RUN: rudnn-run %rudnn_src_root/examples/kda_backward.mlir --backend emulation --random 5 --dims B=1,T=20,H=1 --cache-dir %t.kernels --profile | FileCheck %s --check-prefix=PROFILE
// PROFILE-DAG: profile kda_bwd_prepare_f32_f32_f32_k64_v64_c64: 1 launches, {{[0-9.]+}} ms
// PROFILE-DAG: profile kda_fwd_propagate_f32_f32_f32_k64_v64_c64: 1 launches, {{[0-9.]+}} ms
// PROFILE-DAG: profile kda_bwd_state_gradient_f32_f32_f32_k64_v64_c64: 1 launches, {{[0-9.]+}} ms
// PROFILE-DAG: profile kda_bwd_gradients_f32_f32_f32_k64_v64_c64: 1 launches, {{[0-9.]+}} ms
// RUN: rudnn-run %rudnn_src_root/examples/kda_backward.mlir --backend emulation --random 5 --dims B=1,T=20,H=1 --cache-dir %t.kernels --profile | grep -c "^profile" | FileCheck %s --check-prefix=PROFILES
// PROFILES: {{^}}4{{$}}
// FILES: dg.npy
// FILES: dinitial_state.npy
// FILES: dk.npy
// FILES: dq.npy
// FILES: dv.npy
