// RUN: rudnn-opt %s -split-input-file -verify-diagnostics

// The backward checks the forward's inputs too.
func.func @input_mismatch(%q: tensor<2x8x3x6xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>, %do: tensor<2x8x3x5xf32>) {
  // expected-error @+1 {{'k' dim 3 (K) is 4, expected 6 as in 'q'}}
  %dq, %dk, %dv, %dg, %dbeta = rudnn.kda_backward %q, %k, %v, %g, %beta d_output %do
      : (tensor<2x8x3x6xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>, tensor<2x8x3x5xf32>)
      -> (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>)
  return
}

// -----

// Saved boundaries must match ceil(T / chunk).
func.func @boundaries_count(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>, %b: tensor<3x2x3x4x5xf32>, %do: tensor<2x8x3x5xf32>) {
  // expected-error @+1 {{'boundaries' dim 0 (chunks) is 3, expected 1 = ceil(T=8 / chunk=64)}}
  %dq, %dk, %dv, %dg, %dbeta = rudnn.kda_backward %q, %k, %v, %g, %beta boundaries %b d_output %do chunk 64
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>, tensor<3x2x3x4x5xf32>, tensor<2x8x3x5xf32>)
      -> (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>)
  return
}

// -----

// d_output has v's shape.
func.func @d_output_shape(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>, %do: tensor<2x9x3x5xf32>) {
  // expected-error @+1 {{'d_output' dim 1 (T) is 9, expected 8 as in 'q'}}
  %dq, %dk, %dv, %dg, %dbeta = rudnn.kda_backward %q, %k, %v, %g, %beta d_output %do
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>, tensor<2x9x3x5xf32>)
      -> (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>)
  return
}

// -----

// d_output has v's element type.
func.func @d_output_dtype(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>, %do: tensor<2x8x3x5xbf16>) {
  // expected-error @+1 {{'d_output' element type must be 'f32' as 'v', got 'bf16'}}
  %dq, %dk, %dv, %dg, %dbeta = rudnn.kda_backward %q, %k, %v, %g, %beta d_output %do
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>, tensor<2x8x3x5xbf16>)
      -> (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>)
  return
}

// -----

// d_final_state is fp32.
func.func @d_final_state_dtype(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>, %do: tensor<2x8x3x5xf32>, %ds: tensor<2x3x4x5xf16>) {
  // expected-error @+1 {{'d_final_state' element type must be f32, got 'f16'}}
  %dq, %dk, %dv, %dg, %dbeta = rudnn.kda_backward %q, %k, %v, %g, %beta d_output %do d_final_state %ds
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>, tensor<2x8x3x5xf32>, tensor<2x3x4x5xf16>)
      -> (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>)
  return
}

// -----

// d_final_state is [B, H, K, V].
func.func @d_final_state_shape(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>, %do: tensor<2x8x3x5xf32>, %ds: tensor<2x3x4x4xf32>) {
  // expected-error @+1 {{'d_final_state' dim 3 (V) is 4, expected 5 as in 'v'}}
  %dq, %dk, %dv, %dg, %dbeta = rudnn.kda_backward %q, %k, %v, %g, %beta d_output %do d_final_state %ds
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>, tensor<2x8x3x5xf32>, tensor<2x3x4x4xf32>)
      -> (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>)
  return
}

// -----

// dq has q's element type.
func.func @dq_dtype(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>, %do: tensor<2x8x3x5xf32>) {
  // expected-error @+1 {{'dq' element type must be 'f32' as 'q', got 'f16'}}
  %dq, %dk, %dv, %dg, %dbeta = rudnn.kda_backward %q, %k, %v, %g, %beta d_output %do
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>, tensor<2x8x3x5xf32>)
      -> (tensor<2x8x3x4xf16>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>)
  return
}

// -----

// dv has v's shape.
func.func @dv_shape(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>, %do: tensor<2x8x3x5xf32>) {
  // expected-error @+1 {{'dv' dim 3 (V) is 4, expected 5 as in 'v'}}
  %dq, %dk, %dv, %dg, %dbeta = rudnn.kda_backward %q, %k, %v, %g, %beta d_output %do
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>, tensor<2x8x3x5xf32>)
      -> (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>)
  return
}

// -----

// dg is fp32 whatever g's type.
func.func @dg_dtype(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>, %do: tensor<2x8x3x5xf32>) {
  // expected-error @+1 {{'dg' element type must be f32, got 'bf16'}}
  %dq, %dk, %dv, %dg, %dbeta = rudnn.kda_backward %q, %k, %v, %g, %beta d_output %do
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>, tensor<2x8x3x5xf32>)
      -> (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xbf16>, tensor<2x8x3xf32>)
  return
}

// -----

// dbeta has beta's element type.
func.func @dbeta_dtype(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>, %do: tensor<2x8x3x5xf32>) {
  // expected-error @+1 {{'dbeta' element type must be 'f32' as 'beta', got 'f16'}}
  %dq, %dk, %dv, %dg, %dbeta = rudnn.kda_backward %q, %k, %v, %g, %beta d_output %do
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>, tensor<2x8x3x5xf32>)
      -> (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf16>)
  return
}

// -----

// An initial state needs its gradient.
func.func @missing_d_initial_state(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>, %s0: tensor<2x3x4x5xf32>, %do: tensor<2x8x3x5xf32>) {
  // expected-error @+1 {{'initial_state' is given, so the op must produce 'd_initial_state'}}
  %dq, %dk, %dv, %dg, %dbeta = rudnn.kda_backward %q, %k, %v, %g, %beta initial_state %s0 d_output %do
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>, tensor<2x3x4x5xf32>, tensor<2x8x3x5xf32>)
      -> (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>)
  return
}

// -----

// No initial state, no gradient for it.
func.func @extra_d_initial_state(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>, %do: tensor<2x8x3x5xf32>) {
  // expected-error @+1 {{'d_initial_state' is produced only when 'initial_state' is given}}
  %dq, %dk, %dv, %dg, %dbeta, %ds0 = rudnn.kda_backward %q, %k, %v, %g, %beta d_output %do
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>, tensor<2x8x3x5xf32>)
      -> (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>, tensor<2x3x4x5xf32>)
  return
}

// -----

// d_initial_state is fp32.
func.func @d_initial_state_dtype(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>, %s0: tensor<2x3x4x5xf32>, %do: tensor<2x8x3x5xf32>) {
  // expected-error @+1 {{'d_initial_state' element type must be f32, got 'bf16'}}
  %dq, %dk, %dv, %dg, %dbeta, %ds0 = rudnn.kda_backward %q, %k, %v, %g, %beta initial_state %s0 d_output %do
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>, tensor<2x3x4x5xf32>, tensor<2x8x3x5xf32>)
      -> (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>, tensor<2x3x4x5xbf16>)
  return
}

// -----

// The backward's chunk follows the forward's rules.
func.func @chunk_8(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>, %do: tensor<2x8x3x5xf32>) {
  // expected-error @+1 {{'chunk' must be 16, 32 or 64, got 8}}
  %dq, %dk, %dv, %dg, %dbeta = rudnn.kda_backward %q, %k, %v, %g, %beta d_output %do chunk 8
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>, tensor<2x8x3x5xf32>)
      -> (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>)
  return
}

// -----

// Saved tiles come with the saved boundaries.
func.func @tiles_without_boundaries(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>, %b: tensor<1x2x3x4x5xf32>, %do: tensor<2x8x3x5xf32>, %t: tensor<1x2x3x788xf32>) {
  // expected-error @+1 {{'tiles' come with the forward's 'boundaries'}}
  %dq, %dk, %dv, %dg, %dbeta = rudnn.kda_backward %q, %k, %v, %g, %beta tiles %t d_output %do chunk 16
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>, tensor<1x2x3x788xf32>, tensor<2x8x3x5xf32>)
      -> (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>)
  return
}

// -----

// Saved tiles hold the words the forward's kernels save.
func.func @tiles_words(%q: tensor<2x8x3x4xf32>, %k: tensor<2x8x3x4xf32>, %v: tensor<2x8x3x5xf32>, %g: tensor<2x8x3x4xf32>, %beta: tensor<2x8x3xf32>, %b: tensor<1x2x3x4x5xf32>, %do: tensor<2x8x3x5xf32>, %t: tensor<1x2x3x800xf32>) {
  // expected-error @+1 {{'tiles' dim 3 (W) must be 788 at K = 4, V = 5, chunk 16 and 'f32' inputs, got 800}}
  %dq, %dk, %dv, %dg, %dbeta = rudnn.kda_backward %q, %k, %v, %g, %beta boundaries %b tiles %t d_output %do chunk 16
      : (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>, tensor<1x2x3x4x5xf32>, tensor<1x2x3x800xf32>, tensor<2x8x3x5xf32>)
      -> (tensor<2x8x3x4xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3x5xf32>, tensor<2x8x3x4xf32>, tensor<2x8x3xf32>)
  return
}
