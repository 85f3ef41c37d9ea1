// REQUIRES: sass
// RUN: rudnn-opt %s -rudnn-specialize="arch=sm_90" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report --rudnn-report-dims=T=512,B=8 | FileCheck %s

// The backward of a bf16 layer of H = 512 without saved gates. Every GEMM
// (the gates recomputed, the weight gradients, the input gradient) takes
// both operands through cp.async (LDGSTS) and ldmatrix (LDSM) into tensor
// cores (HMMA); the recurrence keeps its units' W_hh columns in a swizzled
// tile and meets the staged gate gradients on tensor cores through
// ldmatrix, its steps bounding it (each stages every entry's gate
// gradients from L2, 4H wide). Nothing spills, nothing uses a stack.
// CHECK-LABEL: kernel lstm_recompute_gates_bf16_i512_h512_d1
// CHECK-NEXT: block: 128 threads; grid (64, 32, 1) = 2048 blocks
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// CHECK: sass: {{[0-9]+}} instructions; tensor {{[1-9][0-9]*}}, ldmatrix {{[1-9][0-9]*}}, cp.async {{[1-9][0-9]*}}, tma 0; {{.*}} (HMMA {{[1-9][0-9]*}}, LDGSTS {{[1-9][0-9]*}}, LDSM {{[1-9][0-9]*}})
// CHECK-LABEL: kernel lstm_backward_bf16_h512_d1_u8_onchip_from_bf16
// CHECK-NEXT: block: 256 threads; grid (64, 1, 1) = 64 blocks
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// CHECK: serial: 512 steps x 1.50 us (a block's L2 reads 0.50, compute 0.03, grid barrier 1.00) = 767.7 us
// CHECK-NEXT: sass: {{[0-9]+}} instructions; tensor {{[1-9][0-9]*}}, ldmatrix {{[1-9][0-9]*}}, {{.*}} (HMMA {{[1-9][0-9]*}}, LDSM {{[1-9][0-9]*}})
// CHECK-LABEL: kernel lstm_weight_gradient_bf16_i512_h512_d1
// CHECK-NEXT: block: 128 threads; grid (32, 8, 2) = 512 blocks
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// CHECK: sass: {{[0-9]+}} instructions; tensor {{[1-9][0-9]*}}, ldmatrix {{[1-9][0-9]*}}, cp.async {{[1-9][0-9]*}}, tma 0; {{.*}} (HMMA {{[1-9][0-9]*}}, LDGSTS {{[1-9][0-9]*}}, LDSM {{[1-9][0-9]*}})
// CHECK-LABEL: kernel lstm_input_gradient_bf16_to_bf16_i512_h512_d1
// CHECK-NEXT: block: 128 threads; grid (64, 8, 1) = 512 blocks
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// CHECK: sass: {{[0-9]+}} instructions; tensor {{[1-9][0-9]*}}, ldmatrix {{[1-9][0-9]*}}, cp.async {{[1-9][0-9]*}}, tma 0; {{.*}} (HMMA {{[1-9][0-9]*}}, LDGSTS {{[1-9][0-9]*}}, LDSM {{[1-9][0-9]*}})
func.func @layer(%x: tensor<?x?x512xbf16> {rudnn.name = "x"},
                 %hidden: tensor<1x?x?x512xbf16> {rudnn.name = "hidden"},
                 %cells: tensor<1x?x?x512xf32> {rudnn.name = "cells"},
                 %dout: tensor<?x?x512xbf16> {rudnn.name = "d_out"},
                 %wi: tensor<2048x512xbf16> {rudnn.name = "weight_ih_l0"},
                 %wh: tensor<2048x512xbf16> {rudnn.name = "weight_hh_l0"},
                 %bi: tensor<2048xbf16> {rudnn.name = "bias_ih_l0"},
                 %bh: tensor<2048xbf16> {rudnn.name = "bias_hh_l0"})
    -> (tensor<?x?x512xbf16>, tensor<2048x512xbf16>, tensor<2048x512xbf16>, tensor<2048xbf16>) {
  %dx, %dh0, %dc0, %g:4 = rudnn.lstm_backward %x saved(%hidden, %cells) d_out %dout
      weights(%wi, %wh, %bi, %bh) layers 1
      : (tensor<?x?x512xbf16>, tensor<1x?x?x512xbf16>, tensor<1x?x?x512xf32>,
         tensor<?x?x512xbf16>, tensor<2048x512xbf16>, tensor<2048x512xbf16>,
         tensor<2048xbf16>, tensor<2048xbf16>)
      -> (tensor<?x?x512xbf16>, tensor<1x?x512xbf16>, tensor<1x?x512xbf16>,
          tensor<2048x512xbf16>, tensor<2048x512xbf16>, tensor<2048xbf16>, tensor<2048xbf16>)
  return %dx, %g#0, %g#1, %g#2 : tensor<?x?x512xbf16>, tensor<2048x512xbf16>, tensor<2048x512xbf16>, tensor<2048xbf16>
}
