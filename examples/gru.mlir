// A two-layer bidirectional GRU in f32 (I = 32, H = 48), taking a
// torch.nn.GRU's state_dict unchanged: its tensors are the arguments under
// their keys. Steps and batch are dynamic: one compiled plan serves every
// size. bench/lstm_state_dict.py --cell gru writes a trained model's
// tensors as .npy files of these names for --inputs.
//
//   rudnn-run examples/gru.mlir --random 0 --dims T=9,B=3 --check

func.func @main(%x: tensor<?x?x32xf32> {rudnn.name = "x"},
                %h0: tensor<4x?x48xf32> {rudnn.name = "h0"},
                %weight_ih_l0: tensor<144x32xf32> {rudnn.name = "weight_ih_l0"},
                %weight_hh_l0: tensor<144x48xf32> {rudnn.name = "weight_hh_l0"},
                %bias_ih_l0: tensor<144xf32> {rudnn.name = "bias_ih_l0"},
                %bias_hh_l0: tensor<144xf32> {rudnn.name = "bias_hh_l0"},
                %weight_ih_l0_reverse: tensor<144x32xf32> {rudnn.name = "weight_ih_l0_reverse"},
                %weight_hh_l0_reverse: tensor<144x48xf32> {rudnn.name = "weight_hh_l0_reverse"},
                %bias_ih_l0_reverse: tensor<144xf32> {rudnn.name = "bias_ih_l0_reverse"},
                %bias_hh_l0_reverse: tensor<144xf32> {rudnn.name = "bias_hh_l0_reverse"},
                %weight_ih_l1: tensor<144x96xf32> {rudnn.name = "weight_ih_l1"},
                %weight_hh_l1: tensor<144x48xf32> {rudnn.name = "weight_hh_l1"},
                %bias_ih_l1: tensor<144xf32> {rudnn.name = "bias_ih_l1"},
                %bias_hh_l1: tensor<144xf32> {rudnn.name = "bias_hh_l1"},
                %weight_ih_l1_reverse: tensor<144x96xf32> {rudnn.name = "weight_ih_l1_reverse"},
                %weight_hh_l1_reverse: tensor<144x48xf32> {rudnn.name = "weight_hh_l1_reverse"},
                %bias_ih_l1_reverse: tensor<144xf32> {rudnn.name = "bias_ih_l1_reverse"},
                %bias_hh_l1_reverse: tensor<144xf32> {rudnn.name = "bias_hh_l1_reverse"})
    -> (tensor<?x?x96xf32> {rudnn.name = "out"},
        tensor<4x?x48xf32> {rudnn.name = "h_n"}) {
  %out, %h_n = rudnn.gru %x h0 %h0
      weights(%weight_ih_l0, %weight_hh_l0, %bias_ih_l0, %bias_hh_l0,
              %weight_ih_l0_reverse, %weight_hh_l0_reverse, %bias_ih_l0_reverse, %bias_hh_l0_reverse,
              %weight_ih_l1, %weight_hh_l1, %bias_ih_l1, %bias_hh_l1,
              %weight_ih_l1_reverse, %weight_hh_l1_reverse, %bias_ih_l1_reverse, %bias_hh_l1_reverse)
      layers 2 bidirectional
      : (tensor<?x?x32xf32>, tensor<4x?x48xf32>,
         tensor<144x32xf32>, tensor<144x48xf32>, tensor<144xf32>, tensor<144xf32>,
         tensor<144x32xf32>, tensor<144x48xf32>, tensor<144xf32>, tensor<144xf32>,
         tensor<144x96xf32>, tensor<144x48xf32>, tensor<144xf32>, tensor<144xf32>,
         tensor<144x96xf32>, tensor<144x48xf32>, tensor<144xf32>, tensor<144xf32>)
      -> (tensor<?x?x96xf32>, tensor<4x?x48xf32>)
  return %out, %h_n : tensor<?x?x96xf32>, tensor<4x?x48xf32>
}
