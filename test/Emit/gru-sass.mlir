// REQUIRES: sass
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize="arch=sm_90" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report --rudnn-report-dims=T=512,B=8 --split-input-file | FileCheck %s

// A bf16 GRU layer of H = 512 saving for training. The projection (3H =
// 1536 gate columns, 12 tiles of 128) takes both operands through cp.async
// into wgmma's swizzled tiles (sm_90a), nothing serialized; the recurrence keeps each block's 24 W_hh
// rows on chip (padded to 32) and meets the staged hidden states on tensor
// cores. Nothing spills, nothing uses a stack; the steps bound the
// recurrence.
// CHECK-LABEL: kernel gru_projection_bf16_i512_h512_d1_wgmma
// CHECK-NEXT: block: 256 threads; grid (32, 12, 1) = 384 blocks
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// CHECK-NOT: compiler:
// CHECK: sass: {{[0-9]+}} instructions; tensor {{[1-9][0-9]*}}, ldmatrix 0, cp.async {{[1-9][0-9]*}}, tma 0; {{.*}} (HGMMA {{[1-9][0-9]*}}, LDGSTS {{[1-9][0-9]*}})
// CHECK-LABEL: kernel gru_recurrence_bf16_h512_d1_u8_onchip
// CHECK-NEXT: block: 256 threads; grid (64, 1, 1) = 64 blocks
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// CHECK: serial: 512 steps x
// CHECK: sass: {{[0-9]+}} instructions; tensor {{[1-9][0-9]*}}, ldmatrix {{[1-9][0-9]*}}, cp.async {{[1-9][0-9]*}}, tma 0; {{.*}} (HMMA {{[1-9][0-9]*}}, LDGSTS {{[1-9][0-9]*}}, LDSM {{[1-9][0-9]*}})

func.func @train(%x: tensor<?x?x512xbf16> {rudnn.name = "x"},
                 %wi: tensor<1536x512xbf16> {rudnn.name = "weight_ih_l0"},
                 %wh: tensor<1536x512xbf16> {rudnn.name = "weight_hh_l0"},
                 %bi: tensor<1536xbf16> {rudnn.name = "bias_ih_l0"},
                 %bh: tensor<1536xbf16> {rudnn.name = "bias_hh_l0"})
    -> (tensor<?x?x512xbf16>, tensor<1x?x512xbf16>, tensor<1x?x?x512xbf16>, tensor<1x?x?x2048xf32>) {
  %out, %h_n, %saved:2 = rudnn.gru %x weights(%wi, %wh, %bi, %bh) layers 1 save_states
      : (tensor<?x?x512xbf16>, tensor<1536x512xbf16>, tensor<1536x512xbf16>,
         tensor<1536xbf16>, tensor<1536xbf16>)
      -> (tensor<?x?x512xbf16>, tensor<1x?x512xbf16>, tensor<1x?x?x512xbf16>, tensor<1x?x?x2048xf32>)
  return %out, %h_n, %saved#0, %saved#1
      : tensor<?x?x512xbf16>, tensor<1x?x512xbf16>, tensor<1x?x?x512xbf16>, tensor<1x?x?x2048xf32>
}


// -----

// Its backward from the saved r, z, n and W_hn h + b_hn: the recurrence
// keeps its units' W_hh columns (3H deep) on chip for tensor cores; the
// weight and input gradients are tile-layer GEMMs over both sides of the
// gate gradients. Nothing spills.
// CHECK-LABEL: kernel gru_backward_bf16_h512_d1_u8_onchip_from_bf16
// CHECK-NEXT: block: 256 threads; grid (64, 1, 1) = 64 blocks
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// CHECK: serial: 512 steps x
// CHECK-NEXT: sass: {{[0-9]+}} instructions; tensor {{[1-9][0-9]*}}, ldmatrix {{[1-9][0-9]*}}, {{.*}} (HMMA {{[1-9][0-9]*}}, LDSM {{[1-9][0-9]*}})
// CHECK-LABEL: kernel gru_weight_gradient_bf16_i512_h512_d1
// CHECK-NEXT: block: 128 threads; grid (24, 8, 2) = 384 blocks
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// CHECK: sass: {{[0-9]+}} instructions; tensor {{[1-9][0-9]*}}, ldmatrix {{[1-9][0-9]*}}, cp.async {{[1-9][0-9]*}}, tma 0; {{.*}} (HMMA {{[1-9][0-9]*}}, LDGSTS {{[1-9][0-9]*}}, LDSM {{[1-9][0-9]*}})
// CHECK-LABEL: kernel gru_input_gradient_bf16_to_bf16_i512_h512_d1
// CHECK-NEXT: block: 128 threads; grid (64, 8, 1) = 512 blocks
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// CHECK: sass: {{[0-9]+}} instructions; tensor {{[1-9][0-9]*}}, ldmatrix {{[1-9][0-9]*}}, cp.async {{[1-9][0-9]*}}, tma 0; {{.*}} (HMMA {{[1-9][0-9]*}}, LDGSTS {{[1-9][0-9]*}}, LDSM {{[1-9][0-9]*}})

func.func @backward(%x: tensor<?x?x512xbf16> {rudnn.name = "x"},
                    %hidden: tensor<1x?x?x512xbf16> {rudnn.name = "hidden"},
                    %gates: tensor<1x?x?x2048xf32> {rudnn.name = "gates"},
                    %dout: tensor<?x?x512xbf16> {rudnn.name = "d_out"},
                    %wi: tensor<1536x512xbf16> {rudnn.name = "weight_ih_l0"},
                    %wh: tensor<1536x512xbf16> {rudnn.name = "weight_hh_l0"})
    -> (tensor<?x?x512xbf16>, tensor<1536x512xbf16>, tensor<1536x512xbf16>) {
  %dx, %dh0, %g:2 = rudnn.gru_backward %x saved(%hidden, %gates) d_out %dout
      weights(%wi, %wh) layers 1
      : (tensor<?x?x512xbf16>, tensor<1x?x?x512xbf16>, tensor<1x?x?x2048xf32>,
         tensor<?x?x512xbf16>, tensor<1536x512xbf16>, tensor<1536x512xbf16>)
      -> (tensor<?x?x512xbf16>, tensor<1x?x512xbf16>, tensor<1536x512xbf16>, tensor<1536x512xbf16>)
  return %dx, %g#0, %g#1 : tensor<?x?x512xbf16>, tensor<1536x512xbf16>, tensor<1536x512xbf16>
}
