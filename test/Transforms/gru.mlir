// RUN: rudnn-opt %s -split-input-file -rudnn-specialize | FileCheck %s --check-prefix=SPECIALIZE
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose | FileCheck %s --check-prefix=DECOMPOSE
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose | rudnn-opt -split-input-file | FileCheck %s --check-prefix=DECOMPOSE
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose -rudnn-plan | FileCheck %s --check-prefix=PLAN

// A two-layer bf16 GRU saving for its backward. Its recurrence is chosen as
// the LSTM's with three gate rows a unit (24 rows of W_hh a block, padded
// to the tensor cores' 32), its projections as the LSTM's (on wgmma). Each
// layer becomes the recurrent family's projection and recurrence with cell
// "gru": the projection folds b_hh of r and z only,
// the recurrence takes b_hh for b_hn; the second recurrence writes its
// slices of the first's h_n and saved tensors. The recurrences' c_n go
// unused, and the plan passes null for them.
// SPECIALIZE-LABEL: func.func @train
// SPECIALIZE: rudnn.gru {{.*}} layers 2 units 8 weights_on_chip true per_step false wgmma_projection true save_states {policy = "1 x 256 hidden units over 32 blocks of 8 (one an SM, 132 SMs); W_hh rows kept in shared memory (32768 of 232448 bytes); input projection on wgmma, 128 x 128 tiles"}
// DECOMPOSE-LABEL: func.func @train
// DECOMPOSE-SAME: %[[X:[^:]*]]: tensor<?x?x128xbf16>
// DECOMPOSE-SAME: %{{[^:]*}}: tensor<?xi32>
// DECOMPOSE-SAME: %[[WI0:[^:]*]]: tensor<768x128xbf16>
// DECOMPOSE-SAME: %[[WH0:[^:]*]]: tensor<768x256xbf16>
// DECOMPOSE-SAME: %[[BI0:[^:]*]]: tensor<768xbf16>
// DECOMPOSE-SAME: %[[BH0:[^:]*]]: tensor<768xbf16>
// DECOMPOSE: %[[G0:[^,]*]], %[[S0:[^ ]*]] = rudnn.rnn_projection %[[X]] weights(%[[WI0]]) biases(%[[BI0]], %[[BH0]]) layer 0 hidden 256 cell "gru"
// DECOMPOSE-SAME: -> (tensor<1x?x?x768xf32>, tensor<1x3x?x256xf32>)
// DECOMPOSE: %[[OUT0:[^,]*]], %[[HN0:[^,]*]], %{{[^,]*}}, %[[SAVED0:[^:]*]]:2 = rudnn.rnn_recurrence %[[G0]], %[[S0]] weights(%[[WH0]]) biases(%[[BH0]]) lengths %{{[^ ]*}} layer 0 units 8 weights_on_chip true cell "gru"
// DECOMPOSE: rudnn.rnn_projection %[[OUT0]] {{.*}} layer 1 hidden 256 cell "gru"
// DECOMPOSE: %[[OUT1:[^,]*]], %[[HN1:[^,]*]], %{{[^,]*}}, %[[SAVED1:[^:]*]]:2 = rudnn.rnn_recurrence {{.*}} h_n %[[HN0]] saved(%[[SAVED0]]#0, %[[SAVED0]]#1) layer 1
// DECOMPOSE-SAME: cell "gru"
// DECOMPOSE: return %[[OUT1]], %[[HN1]], %[[SAVED1]]#0, %[[SAVED1]]#1
// PLAN-LABEL: rudnn.plan @train
// PLAN: rudnn.kernel @[[PROJ:gru_projection_bf16_i128_h256_d1_wgmma]] threads 256 shared_bytes 164864
// PLAN: rudnn.launch @[[PROJ]] grid [#rudnn.size<constant = 1, params = ["step_tiles16", "batch_tiles"], divisor = 1>, #rudnn.size<constant = 6, params = [], divisor = 1>
// PLAN: rudnn.kernel @[[REC:gru_recurrence_bf16_h256_d1_u8_onchip]] threads 256 shared_bytes 32768 cooperative
// PLAN: rudnn.launch @[[REC]] grid
// PLAN-SAME: @bias_hh_l0, 0, @lengths
// PLAN-SAME: @h_n, 0,
func.func @train(%x: tensor<?x?x128xbf16>, %lengths: tensor<?xi32>,
                 %wi0: tensor<768x128xbf16>, %wh0: tensor<768x256xbf16>,
                 %bi0: tensor<768xbf16>, %bh0: tensor<768xbf16>,
                 %wi1: tensor<768x256xbf16>, %wh1: tensor<768x256xbf16>,
                 %bi1: tensor<768xbf16>, %bh1: tensor<768xbf16>)
    -> (tensor<?x?x256xbf16>, tensor<2x?x256xbf16>, tensor<2x?x?x256xbf16>,
        tensor<2x?x?x1024xf32>) {
  %out, %h_n, %saved:2 = rudnn.gru %x lengths %lengths
      weights(%wi0, %wh0, %bi0, %bh0, %wi1, %wh1, %bi1, %bh1) layers 2
      save_states
      : (tensor<?x?x128xbf16>, tensor<?xi32>, tensor<768x128xbf16>,
         tensor<768x256xbf16>, tensor<768xbf16>, tensor<768xbf16>,
         tensor<768x256xbf16>, tensor<768x256xbf16>, tensor<768xbf16>,
         tensor<768xbf16>)
      -> (tensor<?x?x256xbf16>, tensor<2x?x256xbf16>, tensor<2x?x?x256xbf16>,
          tensor<2x?x?x1024xf32>)
  return %out, %h_n, %saved#0, %saved#1 : tensor<?x?x256xbf16>, tensor<2x?x256xbf16>, tensor<2x?x?x256xbf16>, tensor<2x?x?x1024xf32>
}

// -----

// The GRU's backward: per layer from the last, the recurrence backwards with
// cell "gru" (reading the saved outputs for each step's previous h, no
// cells), whose d_gates hold both sides (6H: W_ih's r, z, n, then W_hh's),
// the weight gradients and the input gradient from them.
// DECOMPOSE-LABEL: func.func @backward
// DECOMPOSE-SAME: %[[X:[^:]*]]: tensor<?x?x16xf32>
// DECOMPOSE-SAME: %[[HID:[^:]*]]: tensor<1x?x?x32xf32>
// DECOMPOSE-SAME: %[[GATES:[^:]*]]: tensor<1x?x?x128xf32>
// DECOMPOSE-SAME: %[[DOUT:[^:]*]]: tensor<?x?x32xf32>
// DECOMPOSE-SAME: %[[WI:[^:]*]]: tensor<96x16xf32>
// DECOMPOSE-SAME: %[[WH:[^:]*]]: tensor<96x32xf32>
// DECOMPOSE: %[[DG:[^,]*]], %[[DB:[^,]*]], %[[DH0:[^,]*]], %{{[^ ]*}} = rudnn.rnn_backward_recurrence %[[GATES]], %[[DOUT]] weights(%[[WH]]) hidden %[[HID]] layer 0 units 8 weights_on_chip true cell "gru"
// DECOMPOSE-SAME: -> (tensor<1x?x?x192xf32>, tensor<1x128xf32>, tensor<1x?x32xf32>, tensor<1x?x32xf32>)
// DECOMPOSE: %[[W:.*]]:4 = rudnn.rnn_weight_gradient %[[DG]], %[[X]], %[[HID]] d_bias %[[DB]] layer 0 {{.*}}cell "gru"
// DECOMPOSE: %[[DX:.*]] = rudnn.rnn_input_gradient %[[DG]] weights(%[[WI]]) cell "gru"
// DECOMPOSE: return %[[DX]], %[[DH0]], %[[W]]#0, %[[W]]#1, %[[W]]#2, %[[W]]#3
func.func @backward(%x: tensor<?x?x16xf32>, %hidden: tensor<1x?x?x32xf32>,
                    %gates: tensor<1x?x?x128xf32>, %dout: tensor<?x?x32xf32>,
                    %wi: tensor<96x16xf32>, %wh: tensor<96x32xf32>,
                    %bi: tensor<96xf32>, %bh: tensor<96xf32>)
    -> (tensor<?x?x16xf32>, tensor<1x?x32xf32>, tensor<96x16xf32>,
        tensor<96x32xf32>, tensor<96xf32>, tensor<96xf32>) {
  %dx, %dh0, %g:4 = rudnn.gru_backward %x saved(%hidden, %gates) d_out %dout
      weights(%wi, %wh, %bi, %bh) layers 1
      : (tensor<?x?x16xf32>, tensor<1x?x?x32xf32>, tensor<1x?x?x128xf32>,
         tensor<?x?x32xf32>, tensor<96x16xf32>, tensor<96x32xf32>,
         tensor<96xf32>, tensor<96xf32>)
      -> (tensor<?x?x16xf32>, tensor<1x?x32xf32>, tensor<96x16xf32>,
          tensor<96x32xf32>, tensor<96xf32>, tensor<96xf32>)
  return %dx, %dh0, %g#0, %g#1, %g#2, %g#3 : tensor<?x?x16xf32>, tensor<1x?x32xf32>, tensor<96x16xf32>, tensor<96x32xf32>, tensor<96xf32>, tensor<96xf32>
}
