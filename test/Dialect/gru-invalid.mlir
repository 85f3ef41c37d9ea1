// RUN: rudnn-opt %s -split-input-file -verify-diagnostics

// -----

// A GRU's gate rows are three times the hidden size (an LSTM's weights are
// refused).
func.func @gates(%x: tensor<4x2x3xf32>, %wi: tensor<20x3xf32>, %wh: tensor<20x5xf32>) {
  // expected-error @+1 {{gate rows G = 20 must be 3 × the hidden size H = 5}}
  %out, %h = rudnn.gru %x weights(%wi, %wh) layers 1
      : (tensor<4x2x3xf32>, tensor<20x3xf32>, tensor<20x5xf32>)
      -> (tensor<4x2x5xf32>, tensor<1x2x5xf32>)
  return
}

// -----

// Saving for the backward returns hidden and gates, and nothing else.
func.func @saved(%x: tensor<4x2x3xf32>, %wi: tensor<15x3xf32>, %wh: tensor<15x5xf32>) {
  // expected-error @+1 {{returns 1 saved tensors, expected 2 (hidden and gates with 'save_states')}}
  %out, %h, %s = rudnn.gru %x weights(%wi, %wh) layers 1 save_states
      : (tensor<4x2x3xf32>, tensor<15x3xf32>, tensor<15x5xf32>)
      -> (tensor<4x2x5xf32>, tensor<1x2x5xf32>, tensor<1x4x2x5xf32>)
  return
}

// -----

// The saved gates hold four values a unit: r, z, n and W_hn h + b_hn.
func.func @saved_gates(%x: tensor<4x2x3xf32>, %hidden: tensor<1x4x2x5xf32>, %gates: tensor<1x4x2x15xf32>,
                       %dout: tensor<4x2x5xf32>, %wi: tensor<15x3xf32>, %wh: tensor<15x5xf32>) {
  // expected-error @+1 {{saved values V = 15 must be 4 × the hidden size H = 5}}
  %dx, %dh0, %g:2 = rudnn.gru_backward %x saved(%hidden, %gates) d_out %dout weights(%wi, %wh) layers 1
      : (tensor<4x2x3xf32>, tensor<1x4x2x5xf32>, tensor<1x4x2x15xf32>, tensor<4x2x5xf32>, tensor<15x3xf32>, tensor<15x5xf32>)
      -> (tensor<4x2x3xf32>, tensor<1x2x5xf32>, tensor<15x3xf32>, tensor<15x5xf32>)
  return
}

// -----

// A primitive's cell is one of the family's.
func.func @cell(%x: tensor<4x2x3xf32>, %wi: tensor<15x3xf32>) {
  // expected-error @+1 {{'cell' must be "lstm" or "gru", got "rnn"}}
  %gates, %state = rudnn.rnn_projection %x weights(%wi) layer 0 hidden 5 cell "rnn"
      : (tensor<4x2x3xf32>, tensor<15x3xf32>) -> (tensor<1x4x2x15xf32>, tensor<1x3x2x5xf32>)
  return
}

// -----

// A GRU's recurrence carries no cell state from the layer before.
func.func @cell_state(%gates: tensor<1x4x2x15xf32>, %state: tensor<1x3x2x5xf32>, %wh: tensor<15x5xf32>, %hn: tensor<2x2x5xf32>) {
  // expected-error @+1 {{a GRU has no cell state: takes no 'c_n_in'}}
  %out, %h, %c = rudnn.rnn_recurrence %gates, %state weights(%wh) h_n %hn c_n %hn layer 1 units 5 weights_on_chip false cell "gru"
      : (tensor<1x4x2x15xf32>, tensor<1x3x2x5xf32>, tensor<15x5xf32>, tensor<2x2x5xf32>, tensor<2x2x5xf32>)
      -> (tensor<4x2x5xf32>, tensor<2x2x5xf32>, tensor<2x2x5xf32>)
  return
}

// -----

// Only the GRU's recurrence takes biases (b_hh, for b_hn).
func.func @lstm_biases(%gates: tensor<1x4x2x20xf32>, %state: tensor<1x3x2x5xf32>, %wh: tensor<20x5xf32>, %b: tensor<20xf32>) {
  // expected-error @+1 {{takes b_hh per direction for a GRU's b_hn, no other biases; got 1}}
  %out, %h, %c = rudnn.rnn_recurrence %gates, %state weights(%wh) biases(%b) layer 0 units 5 weights_on_chip false
      : (tensor<1x4x2x20xf32>, tensor<1x3x2x5xf32>, tensor<20x5xf32>, tensor<20xf32>)
      -> (tensor<4x2x5xf32>, tensor<1x2x5xf32>, tensor<1x2x5xf32>)
  return
}

// -----

// The GRU's backward recurrence reads the saved outputs, not cells.
func.func @backward_cells(%gates: tensor<1x4x2x20xf32>, %dout: tensor<4x2x5xf32>, %wh: tensor<15x5xf32>, %cells: tensor<1x4x2x5xf32>) {
  // expected-error @+1 {{a GRU's takes 'hidden' (and 'h0'), no cell states}}
  %dg, %db, %dh, %dc = rudnn.rnn_backward_recurrence %gates, %dout weights(%wh) cells %cells layer 0 units 5 weights_on_chip true cell "gru"
      : (tensor<1x4x2x20xf32>, tensor<4x2x5xf32>, tensor<15x5xf32>, tensor<1x4x2x5xf32>)
      -> (tensor<1x4x2x30xf32>, tensor<1x20xf32>, tensor<1x2x5xf32>, tensor<1x2x5xf32>)
  return
}

// -----

// A GRU projection's weight has 3·H rows.
func.func @gate_rows(%x: tensor<4x2x3xf32>, %wi: tensor<20x3xf32>) {
  // expected-error @+1 {{'weight_ih' dim 0 (G) is 20, expected 15 as in '3 × 'hidden''}}
  %gates, %state = rudnn.rnn_projection %x weights(%wi) layer 0 hidden 5 cell "gru"
      : (tensor<4x2x3xf32>, tensor<20x3xf32>) -> (tensor<1x4x2x15xf32>, tensor<1x3x2x5xf32>)
  return
}
