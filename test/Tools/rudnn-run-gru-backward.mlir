// rudnn-run draws rudnn.gru_backward's saved operands through the
// forward's float64 reference (hidden and gates are its results), runs the
// backward and checks every gradient it returns against the float64
// backpropagation through time: two bidirectional f32 layers over packed
// sequences with h0, biases and both result gradients (the n rows of the
// two biases' gradients differ); then one bf16 layer, batch first, without
// biases, odd sizes.
//
// RUN: rm -rf %t.kernels
// RUN: rudnn-run %s --entry stack --backend emulation --random 5 --dims T=6,B=3 --check --cache-dir %t.kernels | FileCheck %s --check-prefix=STACK
// STACK: result d_x: f32[6, 3, 5]
// STACK: check d_x: relative error {{.*}} ok
// STACK-NEXT: check d_h0: relative error {{.*}} ok
// STACK-NEXT: check d_weight_ih_l0: relative error {{.*}} ok
// STACK-NEXT: check d_weight_hh_l0: relative error {{.*}} ok
// STACK-NEXT: check d_bias_ih_l0: relative error {{.*}} ok
// STACK-NEXT: check d_bias_hh_l0: relative error {{.*}} ok
// STACK-NEXT: check d_weight_ih_l1_reverse: relative error {{.*}} ok
// STACK-NEXT: check d_weight_hh_l1_reverse: relative error {{.*}} ok
// STACK-NEXT: check d_bias_ih_l1_reverse: relative error {{.*}} ok
// STACK-NEXT: check d_bias_hh_l1_reverse: relative error {{.*}} ok
//
// RUN: rudnn-run %s --entry single --backend emulation --random 6 --dims T=5,B=4 --check --cache-dir %t.kernels | FileCheck %s --check-prefix=SINGLE
// SINGLE: check d_x: relative error {{.*}} ok
// SINGLE-NEXT: check d_h0: relative error {{.*}} ok
// SINGLE-NEXT: check d_weight_ih_l0: relative error {{.*}} ok
// SINGLE-NEXT: check d_weight_hh_l0: relative error {{.*}} ok
func.func @stack(%x: tensor<?x?x5xf32> {rudnn.name = "x"},
                 %h0: tensor<4x?x7xf32> {rudnn.name = "h0"},
                 %lengths: tensor<?xi32> {rudnn.name = "lengths"},
                 %hidden: tensor<2x?x?x14xf32> {rudnn.name = "hidden"},
                 %gates: tensor<4x?x?x28xf32> {rudnn.name = "gates"},
                 %dout: tensor<?x?x14xf32> {rudnn.name = "d_out"},
                 %dhn: tensor<4x?x7xf32> {rudnn.name = "d_h_n"},
                 %weight_ih_l0: tensor<21x5xf32> {rudnn.name = "weight_ih_l0"},
                 %weight_hh_l0: tensor<21x7xf32> {rudnn.name = "weight_hh_l0"},
                 %bias_ih_l0: tensor<21xf32> {rudnn.name = "bias_ih_l0"},
                 %bias_hh_l0: tensor<21xf32> {rudnn.name = "bias_hh_l0"},
                 %weight_ih_l0_reverse: tensor<21x5xf32> {rudnn.name = "weight_ih_l0_reverse"},
                 %weight_hh_l0_reverse: tensor<21x7xf32> {rudnn.name = "weight_hh_l0_reverse"},
                 %bias_ih_l0_reverse: tensor<21xf32> {rudnn.name = "bias_ih_l0_reverse"},
                 %bias_hh_l0_reverse: tensor<21xf32> {rudnn.name = "bias_hh_l0_reverse"},
                 %weight_ih_l1: tensor<21x14xf32> {rudnn.name = "weight_ih_l1"},
                 %weight_hh_l1: tensor<21x7xf32> {rudnn.name = "weight_hh_l1"},
                 %bias_ih_l1: tensor<21xf32> {rudnn.name = "bias_ih_l1"},
                 %bias_hh_l1: tensor<21xf32> {rudnn.name = "bias_hh_l1"},
                 %weight_ih_l1_reverse: tensor<21x14xf32> {rudnn.name = "weight_ih_l1_reverse"},
                 %weight_hh_l1_reverse: tensor<21x7xf32> {rudnn.name = "weight_hh_l1_reverse"},
                 %bias_ih_l1_reverse: tensor<21xf32> {rudnn.name = "bias_ih_l1_reverse"},
                 %bias_hh_l1_reverse: tensor<21xf32> {rudnn.name = "bias_hh_l1_reverse"})
    -> (tensor<?x?x5xf32> {rudnn.name = "d_x"},
        tensor<4x?x7xf32> {rudnn.name = "d_h0"},
        tensor<21x5xf32> {rudnn.name = "d_weight_ih_l0"},
        tensor<21x7xf32> {rudnn.name = "d_weight_hh_l0"},
        tensor<21xf32> {rudnn.name = "d_bias_ih_l0"},
        tensor<21xf32> {rudnn.name = "d_bias_hh_l0"},
        tensor<21x14xf32> {rudnn.name = "d_weight_ih_l1_reverse"},
        tensor<21x7xf32> {rudnn.name = "d_weight_hh_l1_reverse"},
        tensor<21xf32> {rudnn.name = "d_bias_ih_l1_reverse"},
        tensor<21xf32> {rudnn.name = "d_bias_hh_l1_reverse"}) {
  %dx, %dh0, %g:16 = rudnn.gru_backward %x h0 %h0 lengths %lengths
      saved(%hidden, %gates) d_out %dout d_h_n %dhn
      weights(%weight_ih_l0, %weight_hh_l0, %bias_ih_l0, %bias_hh_l0, %weight_ih_l0_reverse, %weight_hh_l0_reverse, %bias_ih_l0_reverse, %bias_hh_l0_reverse, %weight_ih_l1, %weight_hh_l1, %bias_ih_l1, %bias_hh_l1, %weight_ih_l1_reverse, %weight_hh_l1_reverse, %bias_ih_l1_reverse, %bias_hh_l1_reverse)
      layers 2 bidirectional
      : (tensor<?x?x5xf32>, tensor<4x?x7xf32>, tensor<?xi32>,
         tensor<2x?x?x14xf32>, tensor<4x?x?x28xf32>, tensor<?x?x14xf32>,
         tensor<4x?x7xf32>, tensor<21x5xf32>, tensor<21x7xf32>, tensor<21xf32>, tensor<21xf32>, tensor<21x5xf32>, tensor<21x7xf32>, tensor<21xf32>, tensor<21xf32>, tensor<21x14xf32>, tensor<21x7xf32>, tensor<21xf32>, tensor<21xf32>, tensor<21x14xf32>, tensor<21x7xf32>, tensor<21xf32>, tensor<21xf32>)
      -> (tensor<?x?x5xf32>, tensor<4x?x7xf32>, tensor<21x5xf32>, tensor<21x7xf32>, tensor<21xf32>, tensor<21xf32>, tensor<21x5xf32>, tensor<21x7xf32>, tensor<21xf32>, tensor<21xf32>, tensor<21x14xf32>, tensor<21x7xf32>, tensor<21xf32>, tensor<21xf32>, tensor<21x14xf32>, tensor<21x7xf32>, tensor<21xf32>, tensor<21xf32>)
  return %dx, %dh0, %g#0, %g#1, %g#2, %g#3, %g#12, %g#13, %g#14, %g#15 : tensor<?x?x5xf32>, tensor<4x?x7xf32>, tensor<21x5xf32>, tensor<21x7xf32>, tensor<21xf32>, tensor<21xf32>, tensor<21x14xf32>, tensor<21x7xf32>, tensor<21xf32>, tensor<21xf32>
}

func.func @single(%x: tensor<?x?x6xbf16> {rudnn.name = "x"},
                  %hidden: tensor<1x?x?x9xbf16> {rudnn.name = "hidden"},
                  %gates: tensor<1x?x?x36xf32> {rudnn.name = "gates"},
                  %dout: tensor<?x?x9xbf16> {rudnn.name = "d_out"},
                  %wi: tensor<27x6xbf16> {rudnn.name = "weight_ih_l0"},
                  %wh: tensor<27x9xbf16> {rudnn.name = "weight_hh_l0"})
    -> (tensor<?x?x6xbf16> {rudnn.name = "d_x"},
        tensor<1x?x9xbf16> {rudnn.name = "d_h0"},
        tensor<27x6xbf16> {rudnn.name = "d_weight_ih_l0"},
        tensor<27x9xbf16> {rudnn.name = "d_weight_hh_l0"}) {
  %dx, %dh0, %g:2 = rudnn.gru_backward %x saved(%hidden, %gates) d_out %dout
      weights(%wi, %wh) layers 1 batch_first
      : (tensor<?x?x6xbf16>, tensor<1x?x?x9xbf16>, tensor<1x?x?x36xf32>,
         tensor<?x?x9xbf16>, tensor<27x6xbf16>, tensor<27x9xbf16>)
      -> (tensor<?x?x6xbf16>, tensor<1x?x9xbf16>, tensor<27x6xbf16>,
          tensor<27x9xbf16>)
  return %dx, %dh0, %g#0, %g#1 : tensor<?x?x6xbf16>, tensor<1x?x9xbf16>, tensor<27x6xbf16>, tensor<27x9xbf16>
}
