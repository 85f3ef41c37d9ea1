// The packed KDA example runs and checks against the float64 reference run
// on each sequence alone: offsets drawn sorted from 0 to T (some sequences
// empty), lengths that cross chunk boundaries. The offsets' size C = S + 1
// follows from S (or S from C). (No input is read: this
// file holds only the commands.)
//
// RUN: rm -rf %t.kernels
// RUN: rudnn-run %rudnn_src_root/examples/kda_varlen.mlir --backend emulation --random 3 --dims T=150,H=2,S=4 --check --cache-dir %t.kernels | FileCheck %s
// CHECK: result o: f32[1, 150, 2, 64]
// CHECK-NEXT: result final_state: f32[4, 2, 64, 64]
// CHECK: check o: relative error {{.*}} ok
// CHECK: check final_state: relative error {{.*}} ok
// CHECK: compiles: 3
//
// The offsets must count the states plus one.
// RUN: not rudnn-run %rudnn_src_root/examples/kda_varlen.mlir --backend emulation --random 3 --dims T=150,H=2,S=4,C=4 --cache-dir %t.kernels 2>&1 | FileCheck %s --check-prefix=OFFSETS
// OFFSETS: dim C = 4 must be 1 × the dim S = 4 + 1
//
// RUN: rudnn-run %rudnn_src_root/examples/kda_varlen.mlir --backend emulation --random 3 --dims T=20,H=1,C=3 --cache-dir %t.kernels | FileCheck %s --check-prefix=FROM-C
// FROM-C: result final_state: f32[2, 1, 64, 64]
