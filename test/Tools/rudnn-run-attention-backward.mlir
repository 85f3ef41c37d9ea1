// The attention backward example runs and checks its gradients against the
// float64 backward from the same (here random) o and lse: causal, key
// lengths drawn down to none, GQA, T ≠ S and tails of every tile. (No input
// is read: this file holds only the commands.)
//
// RUN: rudnn-run %rudnn_src_root/examples/attention_backward.mlir --backend emulation --random 0 --dims B=3,T=70,S=90,H=4,G=2 --check --cache-dir "" | FileCheck %s
// CHECK: result dq: f32[3, 70, 4, 64]
// CHECK-NEXT: result dk: f32[3, 90, 2, 64]
// CHECK-NEXT: result dv: f32[3, 90, 2, 64]
// CHECK: check dq: relative error {{.*}} ok
// CHECK: check dk: relative error {{.*}} ok
// CHECK: check dv: relative error {{.*}} ok
// CHECK: compiles: 3
