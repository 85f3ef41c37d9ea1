// RUN: rudnn-opt %rudnn_src_root/examples/kda.mlir -rudnn-specialize -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-to-cuda | FileCheck %s

// A planned module emits one translation unit per rudnn.kernel, in plan order.
// CHECK: ----- kernel kda_fwd_recurrent_f32_f32_f32_k64_v64_c64
// CHECK: rudnn::kda::recurrent<64, 64, 64, 32>(p);
// CHECK: ----- kernel kda_fwd_prepare_f32_f32_f32_k64_v64_c64
// CHECK: ----- kernel kda_fwd_propagate_f32_f32_f32_k64_v64_c64
// CHECK: ----- kernel kda_fwd_output_f32_f32_f32_k64_v64_c64
// CHECK: rudnn::kda::output<64, 64, 64>(p);
