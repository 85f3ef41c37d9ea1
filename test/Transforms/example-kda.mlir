// RUN: rudnn-opt %rudnn_src_root/examples/kda.mlir -rudnn-specialize | FileCheck %s

// The shipped example specializes for the default target and keeps its names.
// CHECK: module attributes {rudnn.target = #rudnn.target<arch = "sm_90"
// CHECK-LABEL: func.func @main
// CHECK-SAME: {rudnn.name = "initial_state"}
// CHECK-SAME: {rudnn.name = "final_state"}
// CHECK: rudnn.kda {{.*}} initial_state %{{.*}} chunk 64 scale 1.250000e-01 {policy = {{.*}}} :
