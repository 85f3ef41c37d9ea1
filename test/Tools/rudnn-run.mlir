// Runs the shipped KDA example end to end in emulation: checked against the
// float64 reference, compiled once, then served from the disk cache.
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
// FIRST: compiles: 4
// FIRST: cache: memory=0 disk=0

// AGAIN: check o: relative error {{.*}} ok
// AGAIN: compiles: 0
// AGAIN: cache: memory=0 disk=4

// FILES: final_state.npy
// FILES: o.npy
