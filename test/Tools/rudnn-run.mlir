// Runs the shipped KDA example end to end in emulation: checked against the
// float64 reference, compiled once (the chunked kernels: the T = 1 decode
// kernel is not, as no call runs it), then served from the disk cache.
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: rudnn-run %rudnn_src_root/examples/kda.mlir --backend emulation --random 3 --dims B=2,T=70,H=3 --check --cache-dir %t/cache --save-inputs %t/in --outputs %t/out | FileCheck %s --check-prefix=FIRST
// RUN: rudnn-run %rudnn_src_root/examples/kda.mlir --backend emulation --inputs %t/in --check --cache-dir %t/cache | FileCheck %s --check-prefix=AGAIN
// RUN: ls %t/out | FileCheck %s --check-prefix=FILES

// FIRST: backend: CPU emulation
// FIRST: result o: f32[2, 70, 3, 64]
// FIRST: result final_state: f32[2, 3, 64, 64]
// FIRST: check o: relative error {{.*}} (tolerance 1e-04) ok
// FIRST: check final_state: relative error {{.*}} (tolerance 1e-04) ok
// FIRST: compiles: 3
// FIRST: cache: memory=0 disk=0

// AGAIN: check o: relative error {{.*}} ok
// AGAIN: compiles: 0
// AGAIN: cache: memory=0 disk=3

// FILES: final_state.npy
// FILES: o.npy

// --dump writes every generated source and the plan; --bench reports a median.
// RUN: rudnn-run %rudnn_src_root/examples/kda.mlir --backend emulation --random 5 --dims B=1,T=3,H=1 --cache-dir "" --dump %t/dump --bench 2 | FileCheck %s --check-prefix=BENCH
// RUN: ls %t/dump | FileCheck %s --check-prefix=DUMP
// BENCH: bench: median {{[0-9.]+}} ms over 2 runs
// DUMP: kda_fwd_output_f32_f32_f32_k64_v64_c64.cu
// DUMP: kda_fwd_prepare_f32_f32_f32_k64_v64_c64.cu
// DUMP: kda_fwd_propagate_f32_f32_f32_k64_v64_c64.cu
// DUMP: kda_fwd_recurrent_f32_f32_f32_k64_v64_c64.cu
// DUMP: main.plan.json
