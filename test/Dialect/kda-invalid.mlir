// RUN: rudnn-opt %s -split-input-file -verify-diagnostics

// q must have rank 4.
func.func @q_rank(%q: tensor<2x8x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{'q' must have rank 4 [B, T, H, K], got rank 3}}
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta
      : (tensor<2x8x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>) -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xf32>)
  return
}

// -----

// beta must have rank 3.
func.func @beta_rank(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3x1xf32>) {
  // expected-error @+1 {{'beta' must have rank 3 [B, T, H], got rank 4}}
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x1xf32>) -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xf32>)
  return
}

// -----

// initial_state must have rank 4.
func.func @initial_state_rank(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>, %s0: tensor<2x3x20xf32>) {
  // expected-error @+1 {{'initial_state' must have rank 4 [B, H, K, V], got rank 3}}
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta initial_state %s0
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>, tensor<2x3x20xf32>) -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xf32>)
  return
}

// -----

// k's sequence length must match q's.
func.func @k_length(%q: tensor<2x8x3x4xf32>, %k: tensor<2x9x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{'k' dim 1 (T) is 9, expected 8 as in 'q'}}
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta
      : (tensor<2x8x3x4xf32>, tensor<2x9x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>) -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xf32>)
  return
}

// -----

// v's batch must match q's.
func.func @v_batch(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<1x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{'v' dim 0 (B) is 1, expected 2 as in 'q'}}
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<1x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>) -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xf32>)
  return
}

// -----

// g's feature dim must match q's.
func.func @g_features(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x6xf32>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{'g' dim 3 (K) is 6, expected 4 as in 'q'}}
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x6xf32>, tensor<2x8x3xf32>) -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xf32>)
  return
}

// -----

// beta's heads must match q's.
func.func @beta_heads(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x4xf32>) {
  // expected-error @+1 {{'beta' dim 2 (H) is 4, expected 3 as in 'q'}}
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x4xf32>) -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xf32>)
  return
}

// -----

// initial_state's V must match v's.
func.func @initial_state_value_dim(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>, %s0: tensor<2x3x4x4xf32>) {
  // expected-error @+1 {{'initial_state' dim 3 (V) is 4, expected 5 as in 'v'}}
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta initial_state %s0
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>, tensor<2x3x4x4xf32>) -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xf32>)
  return
}

// -----

// A dynamic dim binds nothing, so a later static one is checked against the first static.
func.func @dynamic_then_mismatch(%q: tensor<2x?x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x7x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{'v' dim 1 (T) is 7, expected 8 as in 'k'}}
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta
      : (tensor<2x?x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x7x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>) -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xf32>)
  return
}

// -----

// The feature dim K must be static.
func.func @dynamic_k(%q: tensor<2x8x3x?xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{'q' dim 3 (K) must be static}}
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta
      : (tensor<2x8x3x?xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>) -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xf32>)
  return
}

// -----

// The feature dim V must be static.
func.func @dynamic_v(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x?xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{'v' dim 3 (V) must be static}}
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x?xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>) -> (tensor<2x8x3x?xf32>, tensor<2x3x4x5xf32>)
  return
}

// -----

// q must hold f32, f16 or bf16.
func.func @q_integer(%q: tensor<2x8x3x4xi32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{'q' element type must be f32, f16 or bf16, got 'i32'}}
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta
      : (tensor<2x8x3x4xi32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>) -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xf32>)
  return
}

// -----

// k must have q's element type.
func.func @k_dtype(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf16>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{'k' element type must be 'f32' as 'q', got 'f16'}}
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf16>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>) -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xf32>)
  return
}

// -----

// v must have q's element type.
func.func @v_dtype(%q: tensor<2x8x3x4xbf16>, %k: tensor<2x8x3x4xbf16>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{'v' element type must be 'bf16' as 'q', got 'f32'}}
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta
      : (tensor<2x8x3x4xbf16>, tensor<2x8x3x4xbf16>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>) -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xf32>)
  return
}

// -----

// g must be a supported float type.
func.func @g_f64(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf64>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{'g' element type must be f32, f16 or bf16, got 'f64'}}
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf64>, tensor<2x8x3xf32>) -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xf32>)
  return
}

// -----

// beta must be a supported float type.
func.func @beta_integer(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xi8>) {
  // expected-error @+1 {{'beta' element type must be f32, f16 or bf16, got 'i8'}}
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xi8>) -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xf32>)
  return
}

// -----

// The initial state is fp32.
func.func @initial_state_f16(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>, %s0: tensor<2x3x4x5xf16>) {
  // expected-error @+1 {{'initial_state' element type must be f32, got 'f16'}}
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta initial_state %s0
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>, tensor<2x3x4x5xf16>) -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xf32>)
  return
}

// -----

// K is at most 256.
func.func @k_too_large(%q: tensor<2x8x3x300xf32>, %k: tensor<2x8x3x300xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x300xf32>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{feature dim K is 300, expected 1 to 256}}
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta
      : (tensor<2x8x3x300xf32>, tensor<2x8x3x300xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x300xf32>, tensor<2x8x3xf32>) -> (tensor<2x8x3x5xf32>, tensor<2x3x300x5xf32>)
  return
}

// -----

// V is at most 256.
func.func @v_too_large(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x257xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{feature dim V is 257, expected 1 to 256}}
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x257xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>) -> (tensor<2x8x3x257xf32>, tensor<2x3x4x257xf32>)
  return
}

// -----

// chunk is one of 16, 32, 64, 128.
func.func @chunk_48(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{'chunk' must be 16, 32 or 64, got 48}}
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta chunk 48
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>) -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xf32>)
  return
}

// -----

// scale must be positive.
func.func @scale_zero(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{'scale' must be positive and finite, got 0}}
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta scale 0.0
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>) -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xf32>)
  return
}

// -----

// scale must not be negative.
func.func @scale_negative(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{'scale' must be positive and finite, got -1}}
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta scale -1.0
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>) -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xf32>)
  return
}

// -----

// The output has v's shape.
func.func @output_shape(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{'output' dim 3 (V) is 4, expected 5 as in 'v'}}
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>) -> (tensor<2x8x3x4xf32>, tensor<2x3x4x5xf32>)
  return
}

// -----

// The output has v's element type.
func.func @output_dtype(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{'output' element type must be 'f32' as 'v', got 'f16'}}
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>) -> (tensor<2x8x3x5xf16>, tensor<2x3x4x5xf32>)
  return
}

// -----

// The final state is [B, H, K, V].
func.func @final_state_shape(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{'final_state' dim 2 (K) is 5, expected 4 as in 'q'}}
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>) -> (tensor<2x8x3x5xf32>, tensor<2x3x5x5xf32>)
  return
}

// -----

// The final state is fp32.
func.func @final_state_dtype(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{'final_state' element type must be f32, got 'bf16'}}
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>) -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xbf16>)
  return
}

// -----

// save_boundaries needs a boundaries result.
func.func @save_without_result(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{'save_boundaries' is set but the op has no 'boundaries' result}}
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta chunk 16 save_boundaries
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>) -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xf32>)
  return
}

// -----

// A boundaries result needs save_boundaries.
func.func @result_without_save(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{'boundaries' result is produced only with 'save_boundaries'}}
  %o, %s, %b = rudnn.kda %q, %k, %v, %g, %beta chunk 16
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>) -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xf32>, tensor<1x2x3x4x5xf32>)
  return
}

// -----

// The boundaries count is ceil(T / chunk).
func.func @boundaries_count(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{'boundaries' dim 0 (chunks) is 2, expected 1 = ceil(T=8 / chunk=16)}}
  %o, %s, %b = rudnn.kda %q, %k, %v, %g, %beta chunk 16 save_boundaries
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>) -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xf32>, tensor<2x2x3x4x5xf32>)
  return
}

// -----

// The boundaries have q's element type.
func.func @boundaries_dtype(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{'boundaries' element type must be 'f32' as 'q', got 'f16'}}
  %o, %s, %b = rudnn.kda %q, %k, %v, %g, %beta chunk 16 save_boundaries
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>) -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xf32>, tensor<1x2x3x4x5xf16>)
  return
}

// -----

// The boundaries follow [N, B, H, K, V].
func.func @boundaries_heads(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{'boundaries' dim 2 (H) is 4, expected 3 as in 'q'}}
  %o, %s, %b = rudnn.kda %q, %k, %v, %g, %beta chunk 16 save_boundaries
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>) -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xf32>, tensor<1x2x4x4x5xf32>)
  return
}

// -----

// Operands must be ranked tensors.
func.func @unranked(%q: tensor<*xf32>, %v: tensor<2x8x3x5xf32>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{operand #0 must be ranked tensor of any type values}}
  %o, %s = rudnn.kda %q, %q, %v, %q, %beta
      : (tensor<*xf32>, tensor<*xf32>, tensor<2x8x3x5xf32>, tensor<*xf32>, tensor<2x8x3xf32>)
      -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xf32>)
  return
}

// -----

// Feature dims are at least 1.
func.func @k_zero(%q: tensor<2x8x3x0xf32>, %v: tensor<2x8x3x5xf32>,
                  %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{feature dim K is 0, expected 1 to 256}}
  %o, %s = rudnn.kda %q, %q, %v, %q, %beta
      : (tensor<2x8x3x0xf32>, tensor<2x8x3x0xf32>, tensor<2x8x3x5xf32>,
         tensor<2x8x3x0xf32>, tensor<2x8x3xf32>)
      -> (tensor<2x8x3x5xf32>, tensor<2x3x0x5xf32>)
  return
}

// -----

// The custom syntax names each optional operand by keyword.
func.func @misspelled_keyword(%q: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>,
                              %beta: tensor<2x8x3xf32>, %s0: tensor<2x3x4x5xf32>) {
  // expected-error @+1 {{expected ':'}}
  %o, %s = rudnn.kda %q, %q, %v, %q, %beta initial %s0
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>,
         tensor<2x8x3x4xf32>, tensor<2x8x3xf32>, tensor<2x3x4x5xf32>)
      -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xf32>)
  return
}

// -----

// save_tiles needs save_boundaries.
func.func @tiles_without_boundaries(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{'save_tiles' needs 'save_boundaries': the backward reads both}}
  %o, %s, %t = rudnn.kda %q, %k, %v, %g, %beta chunk 16 save_tiles
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>) -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xf32>, tensor<1x2x3x788xf32>)
  return
}

// -----

// save_tiles needs a tiles result.
func.func @save_tiles_without_result(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{'save_tiles' is set but the op has no 'tiles' result}}
  %o, %s, %b = rudnn.kda %q, %k, %v, %g, %beta chunk 16 save_boundaries save_tiles
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>) -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xf32>, tensor<1x2x3x4x5xf32>)
  return
}

// -----

// A tiles result needs save_tiles.
func.func @tiles_result_without_save(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{'tiles' result is produced only with 'save_tiles'}}
  %o, %s, %b, %t = rudnn.kda %q, %k, %v, %g, %beta chunk 16 save_boundaries
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>) -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xf32>, tensor<1x2x3x4x5xf32>, tensor<1x2x3x788xf32>)
  return
}

// -----

// The tiles hold W words per chunk and head, fixed by K, V, chunk and q's type.
func.func @tiles_words(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{'tiles' dim 3 (W) must be 788 at K = 4, V = 5, chunk 16 and 'f32' inputs, got 789}}
  %o, %s, %b, %t = rudnn.kda %q, %k, %v, %g, %beta chunk 16 save_boundaries save_tiles
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>) -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xf32>, tensor<1x2x3x4x5xf32>, tensor<1x2x3x789xf32>)
  return
}

// -----

// A dynamic W cannot promise the size.
func.func @tiles_dynamic_words(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{'tiles' dim 3 (W) must be 788 at K = 4, V = 5, chunk 16 and 'f32' inputs, got a dynamic size}}
  %o, %s, %b, %t = rudnn.kda %q, %k, %v, %g, %beta chunk 16 save_boundaries save_tiles
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>) -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xf32>, tensor<1x2x3x4x5xf32>, tensor<1x2x3x?xf32>)
  return
}

// -----

// The tiles are f32 words.
func.func @tiles_type(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{'tiles' element type must be f32, got 'bf16'}}
  %o, %s, %b, %t = rudnn.kda %q, %k, %v, %g, %beta chunk 16 save_boundaries save_tiles
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>) -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xf32>, tensor<1x2x3x4x5xf32>, tensor<1x2x3x788xbf16>)
  return
}

// -----

// The tiles count ceil(T / chunk) chunks.
func.func @tiles_count(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{'tiles' dim 0 (N) is 2, expected 1 as in 'boundaries'}}
  %o, %s, %b, %t = rudnn.kda %q, %k, %v, %g, %beta chunk 16 save_boundaries save_tiles
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>) -> (tensor<2x8x3x5xf32>, tensor<2x3x4x5xf32>, tensor<1x2x3x4x5xf32>, tensor<2x2x3x788xf32>)
  return
}

// -----

// Packed sequences' offsets count one more than the states.
func.func @varlen_offsets_count_states(%q: tensor<1x10x2x16xf32>,
    %beta: tensor<1x10x2xf32>, %cu: tensor<3xi32>,
    %s0: tensor<3x2x16x16xf32>) {
  // expected-error @+1 {{dim C = 3 must be 1 × the dim S = 3 + 1}}
  %o, %s = rudnn.kda_varlen %q, %q, %q, %q, %beta cu_seqlens %cu
      initial_state %s0
      : (tensor<1x10x2x16xf32>, tensor<1x10x2x16xf32>, tensor<1x10x2x16xf32>,
         tensor<1x10x2x16xf32>, tensor<1x10x2xf32>, tensor<3xi32>,
         tensor<3x2x16x16xf32>)
      -> (tensor<1x10x2x16xf32>, tensor<3x2x16x16xf32>)
  return
}

// -----

// Packed sequences lie along T of one batch entry.
func.func @varlen_one_batch_entry(%q: tensor<2x10x2x16xf32>,
    %beta: tensor<2x10x2xf32>, %cu: tensor<4xi32>) {
  // expected-error @+1 {{dim B is 2, expected 1 to 1}}
  %o, %s = rudnn.kda_varlen %q, %q, %q, %q, %beta cu_seqlens %cu
      : (tensor<2x10x2x16xf32>, tensor<2x10x2x16xf32>, tensor<2x10x2x16xf32>,
         tensor<2x10x2x16xf32>, tensor<2x10x2xf32>, tensor<4xi32>)
      -> (tensor<2x10x2x16xf32>, tensor<3x2x16x16xf32>)
  return
}

// -----

// A packed forward saves a boundary per chunk slot: ceil(T / chunk) + S + 1.
func.func @varlen_boundary_slots(%q: tensor<1x40x2x16xf32>,
    %beta: tensor<1x40x2xf32>, %cu: tensor<4xi32>) {
  // expected-error @+1 {{'boundaries' dim 0 (chunks) is 3, expected 7 = ceil(T=40 / chunk=16) + S=3 + 1 (the packed chunk slots)}}
  %o, %s, %b = rudnn.kda_varlen %q, %q, %q, %q, %beta cu_seqlens %cu
      chunk 16 save_boundaries
      : (tensor<1x40x2x16xf32>, tensor<1x40x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<1x40x2x16xf32>, tensor<1x40x2xf32>, tensor<4xi32>)
      -> (tensor<1x40x2x16xf32>, tensor<3x2x16x16xf32>,
          tensor<3x1x2x16x16xf32>)
  return
}

// -----

// A packed backward takes the forward's boundaries at its chunk slots.
func.func @varlen_backward_boundary_slots(%q: tensor<1x40x2x16xf32>,
    %beta: tensor<1x40x2xf32>, %cu: tensor<4xi32>,
    %b: tensor<6x1x2x16x16xf32>) {
  // expected-error @+1 {{'boundaries' dim 0 (chunks) is 6, expected 7}}
  %dq, %dk, %dv, %dg, %dbeta = rudnn.kda_varlen_backward %q, %q, %q, %q,
      %beta cu_seqlens %cu boundaries %b d_output %q chunk 16
      : (tensor<1x40x2x16xf32>, tensor<1x40x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<1x40x2x16xf32>, tensor<1x40x2xf32>, tensor<4xi32>,
         tensor<6x1x2x16x16xf32>, tensor<1x40x2x16xf32>)
      -> (tensor<1x40x2x16xf32>, tensor<1x40x2x16xf32>, tensor<1x40x2x16xf32>,
          tensor<1x40x2x16xf32>, tensor<1x40x2xf32>)
  return
}

// -----

// Tiles are saved with the boundaries.
func.func @varlen_tiles_need_boundaries(%q: tensor<1x40x2x16xf32>,
    %beta: tensor<1x40x2xf32>, %cu: tensor<4xi32>) {
  // expected-error @+1 {{'save_tiles' needs 'save_boundaries'}}
  %o, %s, %t = rudnn.kda_varlen %q, %q, %q, %q, %beta cu_seqlens %cu
      chunk 16 save_tiles
      : (tensor<1x40x2x16xf32>, tensor<1x40x2x16xf32>, tensor<1x40x2x16xf32>,
         tensor<1x40x2x16xf32>, tensor<1x40x2xf32>, tensor<4xi32>)
      -> (tensor<1x40x2x16xf32>, tensor<3x2x16x16xf32>, tensor<7x1x2x8xf32>)
  return
}

// -----

// A decoding step's pool holds states of the call's heads.
func.func @decode_pool_heads(%q: tensor<2x1x3x16xf32>, %beta: tensor<2x1x3xf32>,
    %pool: tensor<4x2x16x16xf32>, %slots: tensor<2xi32>) {
  // expected-error @+1 {{'state_pool' dim 1 (H) is 2, expected 3 as in 'q'}}
  %o, %p, %s = rudnn.kda_decode %q, %q, %q, %q, %beta pool(%pool, %slots)
      : (tensor<2x1x3x16xf32>, tensor<2x1x3x16xf32>, tensor<2x1x3x16xf32>,
         tensor<2x1x3x16xf32>, tensor<2x1x3xf32>, tensor<4x2x16x16xf32>,
         tensor<2xi32>)
      -> (tensor<2x1x3x16xf32>, tensor<4x2x16x16xf32>, tensor<2xi32>)
  return
}

// -----

// Grouped heads: q and k share each head among H / Q value heads.
func.func @grouped_heads_divide(%q: tensor<2x8x2x16xf32>,
    %v: tensor<2x8x3x16xf32>, %beta: tensor<2x8x3xf32>) {
  // expected-error @+1 {{dim H = 3 must be a multiple of the key heads Q = 2}}
  %o, %s = rudnn.kda %q, %q, %v, %v, %beta grouped_heads
      : (tensor<2x8x2x16xf32>, tensor<2x8x2x16xf32>, tensor<2x8x3x16xf32>,
         tensor<2x8x3x16xf32>, tensor<2x8x3xf32>)
      -> (tensor<2x8x3x16xf32>, tensor<2x3x16x16xf32>)
  return
}
