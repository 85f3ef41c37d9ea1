// The attention backward example runs and checks its gradients against the
// float64 backward from the same o and lse (the float64 forward's on the
// drawn inputs): causal, key lengths drawn down to none, GQA, T ≠ S and
// tails of every tile. (No input is read: this file holds only the
// commands.)
//
// RUN: rm -rf %t.kernels
// RUN: rudnn-run %rudnn_src_root/examples/attention_backward.mlir --backend emulation --random 0 --dims B=3,T=70,S=90,H=4,G=2 --check --cache-dir %t.kernels | FileCheck %s
// CHECK: result dq: f32[3, 70, 4, 64]
// CHECK-NEXT: result dk: f32[3, 90, 2, 64]
// CHECK-NEXT: result dv: f32[3, 90, 2, 64]
// CHECK: check dq: relative error {{.*}} ok
// CHECK: check dk: relative error {{.*}} ok
// CHECK: check dv: relative error {{.*}} ok
// CHECK: compiles: 3

// The o and lse --random draws are the forward's on the drawn q, k, v and
// key lengths (checked in Python, independently of rudnn's references).
// RUN: rm -rf %t && rudnn-run %rudnn_src_root/examples/attention_backward.mlir --backend emulation --random 1 --dims B=2,T=5,S=7,H=2,G=1 --save-inputs %t --cache-dir %t.kernels > /dev/null
// RUN: %python %S/Inputs/causal_forward.py %t | FileCheck %s --check-prefix=SAVED
// SAVED: saved o and lse are the forward's

// The packed example: entries of their own lengths (some empty), o and lse
// the float64 forward's on the drawn inputs.
// RUN: rudnn-run %rudnn_src_root/examples/attention_varlen_backward.mlir --backend emulation --random 0 --dims T=150,S=130,C=5,H=4,G=2 --check --cache-dir %t.kernels | FileCheck %s --check-prefix=PACKED
// PACKED: result dq: bf16[150, 4, 64]
// PACKED-NEXT: result dk: bf16[130, 2, 64]
// PACKED-NEXT: result dv: bf16[130, 2, 64]
// PACKED: check dq: relative error {{.*}} ok
// PACKED: check dk: relative error {{.*}} ok
// PACKED: check dv: relative error {{.*}} ok
// PACKED: compiles: 3
