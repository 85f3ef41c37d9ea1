// RUN: rudnn-opt %s -split-input-file -verify-diagnostics

// x is [N, C] or [M, N, C].
func.func @rank(%x: tensor<2x3x4x5xf32>) {
  // expected-error @+1 {{'x' must be [N, C] or [M, N, C], got rank 4}}
  %mean, %var = rudnn.moments %x
      : (tensor<2x3x4x5xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x4xf32>)
  return
}

// -----

// The normalised dim is static.
func.func @dynamic_features(%x: tensor<4x?xf32>) {
  // expected-error @+1 {{'x'}}
  %mean, %var = rudnn.moments %x
      : (tensor<4x?xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

// gamma has x's features.
func.func @gamma(%x: tensor<4x8xf32>, %g: tensor<9xf32>) {
  // expected-error @+1 {{'gamma'}}
  %y, %mean, %rstd, %h = rudnn.layer_norm %x gamma %g eps 1.0e-05
      : (tensor<4x8xf32>, tensor<9xf32>)
      -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x8xf32>)
  return
}

// -----

// The statistics are f32.
func.func @stats(%x: tensor<4x8xbf16>) {
  // expected-error @+1 {{'rstd' element type must be f32, got 'bf16'}}
  %y, %rstd, %h = rudnn.rms_norm %x eps 1.0e-05
      : (tensor<4x8xbf16>) -> (tensor<4x8xbf16>, tensor<4xbf16>, tensor<4x8xbf16>)
  return
}

// -----

// eps is finite and not negative.
func.func @eps(%x: tensor<4x8xf32>) {
  // expected-error @+1 {{'eps' must be finite and not negative, got -1}}
  %y, %rstd, %h = rudnn.rms_norm %x eps -1.0
      : (tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4xf32>, tensor<4x8xf32>)
  return
}

// -----

// A row a block holds in registers, 32 elements a thread at most.
func.func @too_long(%x: tensor<4x8193xf32>) {
  // expected-error @+1 {{rows of 8193 do not fit 256 threads (32 elements each): split them with 'chunk'}}
  %mean, %var = rudnn.moments %x threads 256
      : (tensor<4x8193xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

// Rows a block are for a warp a row.
func.func @rows_per_block(%x: tensor<4x64xf32>) {
  // expected-error @+1 {{'rows_per_block' is for a warp a row (threads 32), 1 to 32 rows}}
  %mean, %var = rudnn.moments %x threads 64 rows_per_block 2
      : (tensor<4x64xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return
}

// -----

// A split row's second pass reads the chunks' partials.
func.func @partials(%x: tensor<4x64xf32>) {
  // expected-error @+1 {{splits rows ('chunk'): needs their 'partials'}}
  %y, %mean, %second, %h = rudnn.norm_rows %x kind "moments" eps 0.0 threads 32 chunk 32
      : (tensor<4x64xf32>) -> (tensor<4x64xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x64xf32>)
  return
}

// -----

// The partials hold ⌈C / chunk⌉ summaries of three numbers a row.
func.func @partials_shape(%x: tensor<4x64xf32>) {
  // expected-error @+1 {{'partials'}}
  %p = rudnn.norm_partials %x kind "layer_norm" chunk 32 threads 32
      : (tensor<4x64xf32>) -> tensor<4x3x3xf32>
  return
}

// -----

// The kind is one of three.
func.func @kind(%x: tensor<4x64xf32>) {
  // expected-error @+1 {{'kind' must be moments, layer_norm or rms_norm, got 'group_norm'}}
  %p = rudnn.norm_partials %x kind "group_norm" chunk 32 threads 32
      : (tensor<4x64xf32>) -> tensor<4x2x3xf32>
  return
}

// -----

// A chunk of no elements is refused before the partials' count divides by it.
func.func @partials_chunk_zero(%x: tensor<4x64xf32>) {
  // expected-error @+1 {{'chunk' must be 1 to}}
  %p = rudnn.norm_partials %x kind "layer_norm" chunk 0 threads 32
      : (tensor<4x64xf32>) -> tensor<4x2x3xf32>
  return
}

// -----

// The second pass refuses a chunk of no elements as the first does.
func.func @rows_chunk_zero(%x: tensor<4x64xf32>, %p: tensor<4x2x3xf32>) {
  // expected-error @+1 {{'chunk' must be 1 to}}
  %y, %mean, %second, %h = rudnn.norm_rows %x partials %p kind "moments" eps 0.0 threads 32 chunk 0
      : (tensor<4x64xf32>, tensor<4x2x3xf32>) -> (tensor<4x64xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4x64xf32>)
  return
}
