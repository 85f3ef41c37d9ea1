// RUN: rudnn-opt %s -split-input-file -verify-diagnostics

// -----

// The state_dict holds two or four tensors a layer and direction.
func.func @count(%x: tensor<4x2x3xf32>, %wi: tensor<20x3xf32>, %wh: tensor<20x5xf32>, %b: tensor<20xf32>) {
  // expected-error @+1 {{expects the state_dict's 2 or 4 tensors per layer and direction (2 or 4 weights), got 3}}
  %out, %h, %c = rudnn.lstm %x weights(%wi, %wh, %b) layers 1
      : (tensor<4x2x3xf32>, tensor<20x3xf32>, tensor<20x5xf32>, tensor<20xf32>)
      -> (tensor<4x2x5xf32>, tensor<1x2x5xf32>, tensor<1x2x5xf32>)
  return
}

// -----

// The gate rows are four times the hidden size.
func.func @gates(%x: tensor<4x2x3xf32>, %wi: tensor<16x3xf32>, %wh: tensor<16x5xf32>) {
  // expected-error @+1 {{gate rows G = 16 must be 4 × the hidden size H = 5}}
  %out, %h, %c = rudnn.lstm %x weights(%wi, %wh) layers 1
      : (tensor<4x2x3xf32>, tensor<16x3xf32>, tensor<16x5xf32>)
      -> (tensor<4x2x5xf32>, tensor<1x2x5xf32>, tensor<1x2x5xf32>)
  return
}

// -----

// A later layer reads both directions' hidden states, D·H features.
func.func @layer_input(%x: tensor<4x2x3xf32>,
    %wi0: tensor<20x3xf32>, %wh0: tensor<20x5xf32>, %wi0r: tensor<20x3xf32>, %wh0r: tensor<20x5xf32>,
    %wi1: tensor<20x5xf32>, %wh1: tensor<20x5xf32>, %wi1r: tensor<20x5xf32>, %wh1r: tensor<20x5xf32>) {
  // expected-error @+1 {{output features E = 5 must be 2 × the hidden size H = 5}}
  %out, %h, %c = rudnn.lstm %x weights(%wi0, %wh0, %wi0r, %wh0r, %wi1, %wh1, %wi1r, %wh1r) layers 2 bidirectional
      : (tensor<4x2x3xf32>, tensor<20x3xf32>, tensor<20x5xf32>, tensor<20x3xf32>, tensor<20x5xf32>,
         tensor<20x5xf32>, tensor<20x5xf32>, tensor<20x5xf32>, tensor<20x5xf32>)
      -> (tensor<4x2x10xf32>, tensor<4x2x5xf32>, tensor<4x2x5xf32>)
  return
}

// -----

// h_n holds one state a layer and direction.
func.func @states(%x: tensor<4x2x3xf32>, %wi: tensor<20x3xf32>, %wh: tensor<20x5xf32>) {
  // expected-error @+1 {{states N is 2, expected 1 to 1}}
  %out, %h, %c = rudnn.lstm %x weights(%wi, %wh) layers 1
      : (tensor<4x2x3xf32>, tensor<20x3xf32>, tensor<20x5xf32>)
      -> (tensor<4x2x5xf32>, tensor<2x2x5xf32>, tensor<2x2x5xf32>)
  return
}

// -----

// The weights hold the input's element type.
func.func @element(%x: tensor<4x2x3xbf16>, %wi: tensor<20x3xf32>, %wh: tensor<20x5xbf16>) {
  // expected-error @+1 {{'weight_ih_l0' element type must be 'bf16' as 'x', got 'f32'}}
  %out, %h, %c = rudnn.lstm %x weights(%wi, %wh) layers 1
      : (tensor<4x2x3xbf16>, tensor<20x3xf32>, tensor<20x5xbf16>)
      -> (tensor<4x2x5xbf16>, tensor<1x2x5xbf16>, tensor<1x2x5xbf16>)
  return
}

// -----

// Lengths are i32.
func.func @lengths(%x: tensor<4x2x3xf32>, %l: tensor<2xi64>, %wi: tensor<20x3xf32>, %wh: tensor<20x5xf32>) {
  // expected-error @+1 {{'lengths' element type must be i32, got 'i64'}}
  %out, %h, %c = rudnn.lstm %x lengths %l weights(%wi, %wh) layers 1
      : (tensor<4x2x3xf32>, tensor<2xi64>, tensor<20x3xf32>, tensor<20x5xf32>)
      -> (tensor<4x2x5xf32>, tensor<1x2x5xf32>, tensor<1x2x5xf32>)
  return
}

// -----

// A block owns at most all the hidden units.
func.func @units(%x: tensor<4x2x3xf32>, %wi: tensor<20x3xf32>, %wh: tensor<20x5xf32>) {
  // expected-error @+1 {{'units' must be 1 to the hidden size 5, got 6}}
  %out, %h, %c = rudnn.lstm %x weights(%wi, %wh) layers 1 units 6
      : (tensor<4x2x3xf32>, tensor<20x3xf32>, tensor<20x5xf32>)
      -> (tensor<4x2x5xf32>, tensor<1x2x5xf32>, tensor<1x2x5xf32>)
  return
}

// -----

// A recurrence writes the slice of its layer only.
func.func @layer_slice(%g: tensor<1x4x2x20xf32>, %s: tensor<1x3x2x5xf32>, %wh: tensor<20x5xf32>) {
  // expected-error @+1 {{layer 2 has no slice of the 2 states}}
  %out, %h, %c = rudnn.rnn_recurrence %g, %s weights(%wh) layer 2 units 5 weights_on_chip true
      : (tensor<1x4x2x20xf32>, tensor<1x3x2x5xf32>, tensor<20x5xf32>)
      -> (tensor<4x2x5xf32>, tensor<2x2x5xf32>, tensor<2x2x5xf32>)
  return
}

// -----

// The layer count is bounded before the weights' count multiplies it.
func.func @layers_overflow(%x: tensor<4x2x3xf32>, %wi: tensor<20x3xf32>, %wh: tensor<20x5xf32>) {
  // expected-error @+1 {{'num_layers' must be 1 to 1024, got 9223372036854775807}}
  %out, %h, %c = rudnn.lstm %x weights(%wi, %wh) layers 9223372036854775807 bidirectional
      : (tensor<4x2x3xf32>, tensor<20x3xf32>, tensor<20x5xf32>)
      -> (tensor<4x2x10xf32>, tensor<2x2x5xf32>, tensor<2x2x5xf32>)
  return
}

// -----

// A negative unit count is refused, not read as a huge one.
func.func @negative_units(%gates: tensor<1x4x2x20xf32>, %state: tensor<1x3x2x5xf32>, %w: tensor<20x5xf32>) {
  // expected-error @+1 {{'units' must be 1 to the hidden size 5, got 18446744073709551615}}
  %out, %h, %c = rudnn.rnn_recurrence %gates, %state weights(%w) layer 0 units -1 weights_on_chip true
      : (tensor<1x4x2x20xf32>, tensor<1x3x2x5xf32>, tensor<20x5xf32>) -> (tensor<4x2x5xf32>, tensor<1x2x5xf32>, tensor<1x2x5xf32>)
  return
}

// -----

// A negative layer is refused, not read as the last one.
func.func @negative_layer(%gates: tensor<1x4x2x20xf32>, %state: tensor<1x3x2x5xf32>, %w: tensor<20x5xf32>) {
  // expected-error @+1 {{layer 18446744073709551615 has no slice of the 1 states}}
  %out, %h, %c = rudnn.rnn_recurrence %gates, %state weights(%w) layer -1 units 5 weights_on_chip true
      : (tensor<1x4x2x20xf32>, tensor<1x3x2x5xf32>, tensor<20x5xf32>) -> (tensor<4x2x5xf32>, tensor<1x2x5xf32>, tensor<1x2x5xf32>)
  return
}

// -----

// The backward reads the saved cells beside the gates.
func.func @gates_without_states(%x: tensor<4x2x3xf32>, %wi: tensor<20x3xf32>, %wh: tensor<20x5xf32>) {
  // expected-error @+1 {{'save_gates' needs 'save_states'}}
  %out, %h, %c, %g = rudnn.lstm %x weights(%wi, %wh) layers 1 save_gates
      : (tensor<4x2x3xf32>, tensor<20x3xf32>, tensor<20x5xf32>)
      -> (tensor<4x2x5xf32>, tensor<1x2x5xf32>, tensor<1x2x5xf32>, tensor<1x4x2x20xf32>)
  return
}

// -----

// What the forward saves follows its flags.
func.func @saved_count(%x: tensor<4x2x3xf32>, %wi: tensor<20x3xf32>, %wh: tensor<20x5xf32>) {
  // expected-error @+1 {{returns 1 saved tensors, expected 2}}
  %out, %h, %c, %s = rudnn.lstm %x weights(%wi, %wh) layers 1 save_states
      : (tensor<4x2x3xf32>, tensor<20x3xf32>, tensor<20x5xf32>)
      -> (tensor<4x2x5xf32>, tensor<1x2x5xf32>, tensor<1x2x5xf32>, tensor<1x4x2x5xf32>)
  return
}

// -----

// The saved cells have one slice a layer and direction.
func.func @saved_cells_shape(%x: tensor<4x2x3xf32>, %hid: tensor<1x4x2x5xf32>, %cells: tensor<2x4x2x5xf32>,
                             %dout: tensor<4x2x5xf32>, %wi: tensor<20x3xf32>, %wh: tensor<20x5xf32>) {
  // expected-error @+1 {{states N is 2, expected 1 to 1}}
  %dx, %dh0, %dc0, %g:2 = rudnn.lstm_backward %x saved(%hid, %cells) d_out %dout weights(%wi, %wh) layers 1
      : (tensor<4x2x3xf32>, tensor<1x4x2x5xf32>, tensor<2x4x2x5xf32>, tensor<4x2x5xf32>, tensor<20x3xf32>, tensor<20x5xf32>)
      -> (tensor<4x2x3xf32>, tensor<1x2x5xf32>, tensor<1x2x5xf32>, tensor<20x3xf32>, tensor<20x5xf32>)
  return
}

// -----

// One gradient per weight.
func.func @gradient_count(%x: tensor<4x2x3xf32>, %hid: tensor<1x4x2x5xf32>, %cells: tensor<1x4x2x5xf32>,
                          %dout: tensor<4x2x5xf32>, %wi: tensor<20x3xf32>, %wh: tensor<20x5xf32>) {
  // expected-error @+1 {{returns 1 weight gradients for 2 weights}}
  %dx, %dh0, %dc0, %g = rudnn.lstm_backward %x saved(%hid, %cells) d_out %dout weights(%wi, %wh) layers 1
      : (tensor<4x2x3xf32>, tensor<1x4x2x5xf32>, tensor<1x4x2x5xf32>, tensor<4x2x5xf32>, tensor<20x3xf32>, tensor<20x5xf32>)
      -> (tensor<4x2x3xf32>, tensor<1x2x5xf32>, tensor<1x2x5xf32>, tensor<20x3xf32>)
  return
}

// -----

// A backward recurrence reads one gate slice per direction or per state.
func.func @gate_slices(%gates: tensor<3x4x2x20xf32>, %cells: tensor<2x4x2x5xf32>, %dout: tensor<4x2x5xf32>, %w: tensor<20x5xf32>) {
  // expected-error @+1 {{'gates' has 3 slices: one per direction or per state (1 or 2)}}
  %dg, %db, %dh, %dc = rudnn.rnn_backward_recurrence %gates, %dout weights(%w) cells %cells layer 1 units 5 weights_on_chip true
      : (tensor<3x4x2x20xf32>, tensor<4x2x5xf32>, tensor<20x5xf32>, tensor<2x4x2x5xf32>)
      -> (tensor<1x4x2x20xf32>, tensor<1x20xf32>, tensor<2x2x5xf32>, tensor<2x2x5xf32>)
  return
}

// -----

// A projection on wgmma takes 16-bit inputs, or f32 in TF32.
func.func @wgmma_f32(%x: tensor<4x2x3xf32>, %wi: tensor<20x3xf32>) {
  // expected-error @+1 {{runs on wgmma with 16-bit inputs, or f32 ones in TF32 ('tf32'), only}}
  %gates, %state = rudnn.rnn_projection %x weights(%wi) layer 0 hidden 5 wgmma
      : (tensor<4x2x3xf32>, tensor<20x3xf32>) -> (tensor<1x4x2x20xf32>, tensor<1x3x2x5xf32>)
  return
}

// -----

// A projection's weight has G·H rows, G the cell's gates.
func.func @gate_rows(%x: tensor<4x2x3xf32>, %wi: tensor<21x3xf32>) {
  // expected-error @+1 {{'weight_ih' dim 0 (G) is 21, expected 20 as in '4 × 'hidden''}}
  %gates, %state = rudnn.rnn_projection %x weights(%wi) layer 0 hidden 5
      : (tensor<4x2x3xf32>, tensor<21x3xf32>) -> (tensor<1x4x2x20xf32>, tensor<1x3x2x5xf32>)
  return
}
