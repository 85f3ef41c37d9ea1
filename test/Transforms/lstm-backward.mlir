// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose | FileCheck %s
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose | rudnn-opt -split-input-file | FileCheck %s
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose -rudnn-plan | FileCheck %s --check-prefix=PLAN

// A training forward saves every layer's outputs and cells: the first
// recurrence returns them, the second writes its slices into the same
// tensors, and the operator returns the second's.
// CHECK-LABEL: func.func @train
// CHECK: %[[G0:[^,]*]], %[[S0:[^ ]*]] = rudnn.rnn_projection
// CHECK: %[[OUT0:[^,]*]], %[[HN0:[^,]*]], %[[CN0:[^,]*]], %[[SAVED0:[^:]*]]:2 = rudnn.rnn_recurrence %[[G0]], %[[S0]] {{.*}} layer 0
// CHECK: %[[G1:[^,]*]], %[[S1:[^ ]*]] = rudnn.rnn_projection %[[OUT0]]
// CHECK: %[[OUT1:[^,]*]], %{{[^,]*}}, %{{[^,]*}}, %[[SAVED1:[^:]*]]:2 = rudnn.rnn_recurrence %[[G1]], %[[S1]] {{.*}} h_n %[[HN0]] c_n %[[CN0]] saved(%[[SAVED0]]#0, %[[SAVED0]]#1) layer 1
// CHECK-SAME: -> (tensor<?x?x32xbf16>, tensor<2x?x32xbf16>, tensor<2x?x32xbf16>, tensor<2x?x?x32xbf16>, tensor<2x?x?x32xf32>)
// CHECK: return %[[OUT1]], %[[SAVED1]]#0, %[[SAVED1]]#1
// PLAN-LABEL: rudnn.plan @train
// PLAN: rudnn.buffer @hidden "out"
// PLAN-NEXT: rudnn.buffer @cells "out"
func.func @train(%x: tensor<?x?x16xbf16>, %lengths: tensor<?xi32>,
                 %wi0: tensor<128x16xbf16>, %wh0: tensor<128x32xbf16>,
                 %wi1: tensor<128x32xbf16>, %wh1: tensor<128x32xbf16>)
    -> (tensor<?x?x32xbf16>, tensor<2x?x?x32xbf16>, tensor<2x?x?x32xf32>) {
  %out, %h_n, %c_n, %hidden, %cells = rudnn.lstm %x lengths %lengths
      weights(%wi0, %wh0, %wi1, %wh1) layers 2 save_states
      : (tensor<?x?x16xbf16>, tensor<?xi32>, tensor<128x16xbf16>,
         tensor<128x32xbf16>, tensor<128x32xbf16>, tensor<128x32xbf16>)
      -> (tensor<?x?x32xbf16>, tensor<2x?x32xbf16>, tensor<2x?x32xbf16>,
          tensor<2x?x?x32xbf16>, tensor<2x?x?x32xf32>)
  return %out, %hidden, %cells
      : tensor<?x?x32xbf16>, tensor<2x?x?x32xbf16>, tensor<2x?x?x32xf32>
}

// -----

// Its backward without saved gates, from the last layer down: each layer
// recomputes its gates (from its input, the saved outputs below it and its
// own one step back), walks back through time on a persistent grid (W_hh's
// columns on chip, said why), then its weight gradients and its input
// gradient, which is the layer below's output gradient, in f32.
// CHECK-LABEL: func.func @backward
// CHECK-SAME: %[[X:[^:]*]]: tensor<?x?x16xbf16>
// CHECK-SAME: %[[LEN:[^:]*]]: tensor<?xi32>
// CHECK-SAME: %[[HID:[^:]*]]: tensor<2x?x?x32xbf16>
// CHECK-SAME: %[[CELLS:[^:]*]]: tensor<2x?x?x32xf32>
// CHECK-SAME: %[[DOUT:[^:]*]]: tensor<?x?x32xbf16>
// CHECK-SAME: %[[WI0:[^:]*]]: tensor<128x16xbf16>
// CHECK-SAME: %[[WH0:[^:]*]]: tensor<128x32xbf16>
// CHECK-SAME: %[[WI1:[^:]*]]: tensor<128x32xbf16>
// CHECK-SAME: %[[WH1:[^:]*]]: tensor<128x32xbf16>
// CHECK: %[[A1:.*]] = rudnn.lstm_recompute_gates %[[HID]], %[[HID]] lengths %[[LEN]] weights(%[[WI1]]) recurrent(%[[WH1]]) layer 1
// CHECK: %[[DG1:[^,]*]], %[[DB1:[^,]*]], %[[DH1:[^,]*]], %[[DC1:[^ ]*]] = rudnn.rnn_backward_recurrence %[[A1]], %[[DOUT]] weights(%[[WH1]]) cells %[[CELLS]] lengths %[[LEN]] layer 1 units 8 weights_on_chip true {policy = "1 x 32 hidden units over 4 blocks of 8 (one an SM, 132 SMs), backwards; W_hh columns kept in shared memory (18560 of 232448 bytes)"}
// CHECK: %[[W1:.*]]:2 = rudnn.rnn_weight_gradient %[[DG1]], %[[HID]], %[[HID]] lengths %[[LEN]] d_bias %[[DB1]] layer 1
// CHECK: %[[DIN1:.*]] = rudnn.rnn_input_gradient %[[DG1]] weights(%[[WI1]])
// CHECK-SAME: -> tensor<?x?x32xf32>
// CHECK: %[[A0:.*]] = rudnn.lstm_recompute_gates %[[X]], %[[HID]] lengths %[[LEN]] weights(%[[WI0]]) recurrent(%[[WH0]]) layer 0
// CHECK: %[[DG0:[^,]*]], %[[DB0:[^,]*]], {{.*}} = rudnn.rnn_backward_recurrence %[[A0]], %[[DIN1]] weights(%[[WH0]]) cells %[[CELLS]] lengths %[[LEN]] d_h0 %[[DH1]] d_c0 %[[DC1]] layer 0
// CHECK: %[[W0:.*]]:2 = rudnn.rnn_weight_gradient %[[DG0]], %[[X]], %[[HID]] lengths %[[LEN]] d_bias %[[DB0]] layer 0
// CHECK: %[[DX:.*]] = rudnn.rnn_input_gradient %[[DG0]] weights(%[[WI0]])
// CHECK-SAME: -> tensor<?x?x16xbf16>
// CHECK: return %[[DX]], %[[W0]]#0, %[[W1]]#1
// PLAN-LABEL: rudnn.plan @backward
// PLAN: rudnn.kernel @[[REC:lstm_backward_bf16_h32_d1_u8_onchip_from_bf16]] threads 256 shared_bytes {{[0-9]+}} cooperative
// PLAN: rudnn.kernel @lstm_backward_bf16_h32_d1_u8_onchip_from_f32
func.func @backward(%x: tensor<?x?x16xbf16>, %lengths: tensor<?xi32>,
                    %hidden: tensor<2x?x?x32xbf16>, %cells: tensor<2x?x?x32xf32>,
                    %dout: tensor<?x?x32xbf16>,
                    %wi0: tensor<128x16xbf16>, %wh0: tensor<128x32xbf16>,
                    %wi1: tensor<128x32xbf16>, %wh1: tensor<128x32xbf16>)
    -> (tensor<?x?x16xbf16>, tensor<128x16xbf16>, tensor<128x32xbf16>) {
  %dx, %dh0, %dc0, %g:4 = rudnn.lstm_backward %x lengths %lengths
      saved(%hidden, %cells) d_out %dout weights(%wi0, %wh0, %wi1, %wh1) layers 2
      : (tensor<?x?x16xbf16>, tensor<?xi32>, tensor<2x?x?x32xbf16>,
         tensor<2x?x?x32xf32>, tensor<?x?x32xbf16>, tensor<128x16xbf16>,
         tensor<128x32xbf16>, tensor<128x32xbf16>, tensor<128x32xbf16>)
      -> (tensor<?x?x16xbf16>, tensor<2x?x32xbf16>, tensor<2x?x32xbf16>,
          tensor<128x16xbf16>, tensor<128x32xbf16>, tensor<128x32xbf16>,
          tensor<128x32xbf16>)
  return %dx, %g#0, %g#3
      : tensor<?x?x16xbf16>, tensor<128x16xbf16>, tensor<128x32xbf16>
}

// -----

// With the forward's gates, nothing is recomputed: the backward recurrence
// reads each layer's slice of them.
// CHECK-LABEL: func.func @saved_gates
// CHECK-NOT: rudnn.lstm_recompute_gates
// CHECK: rudnn.rnn_backward_recurrence %{{[^,]*}}, %{{[^ ]*}} weights
// CHECK-NOT: rudnn.lstm_recompute_gates
// CHECK: return
func.func @saved_gates(%x: tensor<?x?x3xf32>, %hidden: tensor<1x?x?x10xf32>,
                       %cells: tensor<2x?x?x5xf32>, %gates: tensor<2x?x?x20xf32>,
                       %dout: tensor<?x?x10xf32>,
                       %wi: tensor<20x3xf32>, %wh: tensor<20x5xf32>,
                       %wir: tensor<20x3xf32>, %whr: tensor<20x5xf32>)
    -> tensor<?x?x3xf32> {
  %dx, %dh0, %dc0, %g:4 = rudnn.lstm_backward %x saved(%hidden, %cells, %gates)
      d_out %dout weights(%wi, %wh, %wir, %whr) layers 1 bidirectional
      : (tensor<?x?x3xf32>, tensor<1x?x?x10xf32>, tensor<2x?x?x5xf32>,
         tensor<2x?x?x20xf32>, tensor<?x?x10xf32>, tensor<20x3xf32>,
         tensor<20x5xf32>, tensor<20x3xf32>, tensor<20x5xf32>)
      -> (tensor<?x?x3xf32>, tensor<2x?x5xf32>, tensor<2x?x5xf32>,
          tensor<20x3xf32>, tensor<20x5xf32>, tensor<20x3xf32>, tensor<20x5xf32>)
  return %dx : tensor<?x?x3xf32>
}
