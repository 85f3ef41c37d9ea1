// rudnn-run draws the backward's saved operands through the forward's
// float64 reference (hidden, cells and gates are its results), runs the
// backward and checks every gradient it returns against the float64
// backpropagation through time: two bidirectional f32 layers over packed
// sequences with initial states and every result gradient, the gates saved;
// then one bf16 layer recomputing them.
//
// RUN: rm -rf %t.kernels
// RUN: rudnn-run %s --entry saved --backend emulation --random 1 --dims T=6,B=3 --check --cache-dir %t.kernels | FileCheck %s --check-prefix=SAVED
// SAVED: result d_x: f32[6, 3, 5]
// SAVED: check d_x: relative error {{.*}} ok
// SAVED-NEXT: check d_h0: relative error {{.*}} ok
// SAVED-NEXT: check d_c0: relative error {{.*}} ok
// SAVED-NEXT: check d_weight_ih_l0: relative error {{.*}} ok
// SAVED-NEXT: check d_weight_hh_l0: relative error {{.*}} ok
// SAVED-NEXT: check d_bias_ih_l0: relative error {{.*}} ok
// SAVED-NEXT: check d_weight_ih_l1_reverse: relative error {{.*}} ok
// SAVED-NEXT: check d_weight_hh_l1_reverse: relative error {{.*}} ok
// SAVED-NEXT: check d_bias_hh_l1_reverse: relative error {{.*}} ok
//
// RUN: rudnn-run %s --entry recomputed --backend emulation --random 2 --dims T=5,B=4 --check --cache-dir %t.kernels | FileCheck %s --check-prefix=RECOMPUTED
// RECOMPUTED: check d_x: relative error {{.*}} ok
// RECOMPUTED-NEXT: check d_weight_ih_l0: relative error {{.*}} ok
// RECOMPUTED-NEXT: check d_weight_hh_l0: relative error {{.*}} ok
func.func @saved(%x: tensor<?x?x5xf32> {rudnn.name = "x"},
                %h0: tensor<4x?x7xf32> {rudnn.name = "h0"},
                %c0: tensor<4x?x7xf32> {rudnn.name = "c0"},
                %lengths: tensor<?xi32> {rudnn.name = "lengths"},
                %hidden: tensor<2x?x?x14xf32> {rudnn.name = "hidden"},
                %cells: tensor<4x?x?x7xf32> {rudnn.name = "cells"},
                %gates: tensor<4x?x?x28xf32> {rudnn.name = "gates"},
                %dout: tensor<?x?x14xf32> {rudnn.name = "d_out"},
                %dhn: tensor<4x?x7xf32> {rudnn.name = "d_h_n"},
                %dcn: tensor<4x?x7xf32> {rudnn.name = "d_c_n"},
                %wi: tensor<28x5xf32> {rudnn.name = "weight_ih_l0"},
                %wh: tensor<28x7xf32> {rudnn.name = "weight_hh_l0"},
                %bi: tensor<28xf32> {rudnn.name = "bias_ih_l0"},
                %bh: tensor<28xf32> {rudnn.name = "bias_hh_l0"},
                %wir: tensor<28x5xf32> {rudnn.name = "weight_ih_l0_reverse"},
                %whr: tensor<28x7xf32> {rudnn.name = "weight_hh_l0_reverse"},
                %bir: tensor<28xf32> {rudnn.name = "bias_ih_l0_reverse"},
                %bhr: tensor<28xf32> {rudnn.name = "bias_hh_l0_reverse"},
                %wi1: tensor<28x14xf32> {rudnn.name = "weight_ih_l1"},
                %wh1: tensor<28x7xf32> {rudnn.name = "weight_hh_l1"},
                %bi1: tensor<28xf32> {rudnn.name = "bias_ih_l1"},
                %bh1: tensor<28xf32> {rudnn.name = "bias_hh_l1"},
                %wir1: tensor<28x14xf32> {rudnn.name = "weight_ih_l1_reverse"},
                %whr1: tensor<28x7xf32> {rudnn.name = "weight_hh_l1_reverse"},
                %bir1: tensor<28xf32> {rudnn.name = "bias_ih_l1_reverse"},
                %bhr1: tensor<28xf32> {rudnn.name = "bias_hh_l1_reverse"})
    -> (tensor<?x?x5xf32> {rudnn.name = "d_x"},
        tensor<4x?x7xf32> {rudnn.name = "d_h0"},
        tensor<4x?x7xf32> {rudnn.name = "d_c0"},
        tensor<28x5xf32> {rudnn.name = "d_weight_ih_l0"},
        tensor<28x7xf32> {rudnn.name = "d_weight_hh_l0"},
        tensor<28xf32> {rudnn.name = "d_bias_ih_l0"},
        tensor<28x14xf32> {rudnn.name = "d_weight_ih_l1_reverse"},
        tensor<28x7xf32> {rudnn.name = "d_weight_hh_l1_reverse"},
        tensor<28xf32> {rudnn.name = "d_bias_hh_l1_reverse"}) {
  %dx, %dh0, %dc0, %g:16 = rudnn.lstm_backward %x h0 %h0 c0 %c0 lengths %lengths
      saved(%hidden, %cells, %gates) d_out %dout d_h_n %dhn d_c_n %dcn
      weights(%wi, %wh, %bi, %bh, %wir, %whr, %bir, %bhr, %wi1, %wh1, %bi1, %bh1, %wir1, %whr1, %bir1, %bhr1) layers 2 bidirectional
      : (tensor<?x?x5xf32>, tensor<4x?x7xf32>, tensor<4x?x7xf32>, tensor<?xi32>,
         tensor<2x?x?x14xf32>, tensor<4x?x?x7xf32>, tensor<4x?x?x28xf32>,
         tensor<?x?x14xf32>, tensor<4x?x7xf32>, tensor<4x?x7xf32>,
         tensor<28x5xf32>, tensor<28x7xf32>, tensor<28xf32>, tensor<28xf32>,
         tensor<28x5xf32>, tensor<28x7xf32>, tensor<28xf32>, tensor<28xf32>,
         tensor<28x14xf32>, tensor<28x7xf32>, tensor<28xf32>, tensor<28xf32>,
         tensor<28x14xf32>, tensor<28x7xf32>, tensor<28xf32>, tensor<28xf32>)
      -> (tensor<?x?x5xf32>, tensor<4x?x7xf32>, tensor<4x?x7xf32>,
         tensor<28x5xf32>, tensor<28x7xf32>, tensor<28xf32>, tensor<28xf32>,
         tensor<28x5xf32>, tensor<28x7xf32>, tensor<28xf32>, tensor<28xf32>,
         tensor<28x14xf32>, tensor<28x7xf32>, tensor<28xf32>, tensor<28xf32>,
         tensor<28x14xf32>, tensor<28x7xf32>, tensor<28xf32>, tensor<28xf32>)
  return %dx, %dh0, %dc0, %g#0, %g#1, %g#2, %g#12, %g#13, %g#15 : tensor<?x?x5xf32>, tensor<4x?x7xf32>, tensor<4x?x7xf32>, tensor<28x5xf32>, tensor<28x7xf32>, tensor<28xf32>, tensor<28x14xf32>, tensor<28x7xf32>, tensor<28xf32>
}

func.func @recomputed(%x: tensor<?x?x6xbf16> {rudnn.name = "x"},
                      %lengths: tensor<?xi32> {rudnn.name = "lengths"},
                      %hidden: tensor<1x?x?x9xbf16> {rudnn.name = "hidden"},
                      %cells: tensor<1x?x?x9xf32> {rudnn.name = "cells"},
                      %dout: tensor<?x?x9xbf16> {rudnn.name = "d_out"},
                      %wi: tensor<36x6xbf16> {rudnn.name = "weight_ih_l0"},
                      %wh: tensor<36x9xbf16> {rudnn.name = "weight_hh_l0"})
    -> (tensor<?x?x6xbf16> {rudnn.name = "d_x"},
        tensor<36x6xbf16> {rudnn.name = "d_weight_ih_l0"},
        tensor<36x9xbf16> {rudnn.name = "d_weight_hh_l0"}) {
  %dx, %dh0, %dc0, %g:2 = rudnn.lstm_backward %x lengths %lengths
      saved(%hidden, %cells) d_out %dout weights(%wi, %wh) layers 1
      : (tensor<?x?x6xbf16>, tensor<?xi32>, tensor<1x?x?x9xbf16>,
         tensor<1x?x?x9xf32>, tensor<?x?x9xbf16>, tensor<36x6xbf16>,
         tensor<36x9xbf16>)
      -> (tensor<?x?x6xbf16>, tensor<1x?x9xbf16>, tensor<1x?x9xbf16>,
          tensor<36x6xbf16>, tensor<36x9xbf16>)
  return %dx, %g#0, %g#1 : tensor<?x?x6xbf16>, tensor<36x6xbf16>, tensor<36x9xbf16>
}
