// The KDA decoding example over a bf16 state pool runs and checks against
// the float64 recurrence run on each entry from its slot (slots drawn
// distinct and shuffled), and with several new tokens an entry. More
// entries than states: the entries left without a slot are refused, which
// a checked run reports.
//
// RUN: rm -rf %t.kernels
// RUN: rudnn-run %rudnn_src_root/examples/kda_decode.mlir --backend emulation --random 1 --dims B=5,H=2,P=8 --check --cache-dir %t.kernels | FileCheck %s
// CHECK: result o: bf16[5, 1, 2, 64]
// CHECK-NEXT: result state_pool: bf16[8, 2, 64, 64]
// CHECK-NEXT: result status: i32[5]
// CHECK: check o: relative error {{.*}} ok
// CHECK: check state_pool: relative error {{.*}} ok
// CHECK: check status: relative error 0.000e+00 {{.*}} ok
// CHECK: compiles: 1
//
// RUN: not rudnn-run %rudnn_src_root/examples/kda_decode.mlir --backend emulation --random 2 --dims B=10,H=2,P=8 --check --cache-dir %t.kernels 2>&1 | FileCheck %s --check-prefix=FULL
// FULL: rudnn.kda_decode refuses entries 8, 9 of these inputs
