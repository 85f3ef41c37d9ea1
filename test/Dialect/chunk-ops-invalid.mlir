// RUN: rudnn-opt %s -split-input-file -verify-diagnostics

// The chunk of a primitive is one of 16, 32, 64, 128.
func.func @decay_chunk(%g: tensor<?x?x?x8xf32>) {
  // expected-error @+1 {{'chunk' must be 16, 32 or 64, got 24}}
  %gamma = rudnn.chunk_decay %g chunk 24 : tensor<?x?x?x8xf32> -> tensor<?x?x?x24x8xf32>
  return
}

// -----

// Chunk tiles have C = chunk rows.
func.func @decay_rows(%g: tensor<?x?x?x8xf32>) {
  // expected-error @+1 {{'gamma' dim 3 (C) is 32, expected 16 as in 'chunk'}}
  %gamma = rudnn.chunk_decay %g chunk 16 : tensor<?x?x?x8xf32> -> tensor<?x?x?x32x8xf32>
  return
}

// -----

// Tiles are fp32.
func.func @decay_dtype(%g: tensor<?x?x?x8xf32>) {
  // expected-error @+1 {{'gamma' element type must be f32, got 'bf16'}}
  %gamma = rudnn.chunk_decay %g chunk 16 : tensor<?x?x?x8xf32> -> tensor<?x?x?x16x8xbf16>
  return
}

// -----

// The chunk count is ceil(T / C) when both are static.
func.func @decay_count(%g: tensor<2x40x3x8xf32>) {
  // expected-error @+1 {{chunk count N is 2, expected 3 = ceil(T=40 / chunk=16)}}
  %gamma = rudnn.chunk_decay %g chunk 16 : tensor<2x40x3x8xf32> -> tensor<2x3x2x16x8xf32>
  return
}

// -----

// Tiles keep the batch and heads of the sequence.
func.func @pairwise_heads(%q: tensor<2x?x3x8xf32>, %beta: tensor<2x?x3xf32>,
                          %gamma: tensor<2x4x?x16x8xf32>) {
  // expected-error @+1 {{'gamma' dim 1 (H) is 4, expected 3 as in 'beta'}}
  %a, %b = rudnn.chunk_pairwise %q, %q, %beta, %gamma chunk 16
      : tensor<2x?x3x8xf32>, tensor<2x?x3x8xf32>, tensor<2x?x3xf32>, tensor<2x4x?x16x8xf32>
      -> tensor<2x3x?x16x16xf32>, tensor<2x3x?x16x16xf32>
  return
}

// -----

// The pairwise matrices are C x C.
func.func @pairwise_square(%q: tensor<?x?x?x8xf32>, %beta: tensor<?x?x?xf32>,
                           %gamma: tensor<?x?x?x16x8xf32>) {
  // expected-error @+1 {{'strict' dim 4 (C) is 8, expected 16 as in 'chunk'}}
  %a, %b = rudnn.chunk_pairwise %q, %q, %beta, %gamma chunk 16
      : tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?xf32>, tensor<?x?x?x16x8xf32>
      -> tensor<?x?x?x16x8xf32>, tensor<?x?x?x16x16xf32>
  return
}

// -----

// The solve's v shares k's element type.
func.func @solve_dtype(%a: tensor<?x?x?x16x16xf32>, %k: tensor<?x?x?x8xbf16>,
                       %v: tensor<?x?x?x4xf32>, %beta: tensor<?x?x?xf32>,
                       %gamma: tensor<?x?x?x16x8xf32>) {
  // expected-error @+1 {{'v' element type must be 'bf16' as 'k', got 'f32'}}
  %w, %u0 = rudnn.chunk_solve %a, %k, %v, %beta, %gamma chunk 16
      : tensor<?x?x?x16x16xf32>, tensor<?x?x?x8xbf16>, tensor<?x?x?x4xf32>,
        tensor<?x?x?xf32>, tensor<?x?x?x16x8xf32>
      -> tensor<?x?x?x16x8xf32>, tensor<?x?x?x16x4xf32>
  return
}

// -----

// The propagation's boundaries are [N, B, H, K, V].
func.func @propagate_boundaries(%w: tensor<?x?x?x16x8xf32>, %u0: tensor<?x?x?x16x4xf32>,
                                %k: tensor<?x?x?x8xf32>, %gamma: tensor<?x?x?x16x8xf32>) {
  // expected-error @+1 {{'boundaries' dim 4 (V) is 8, expected 4 as in 'u0'}}
  %u, %b, %s = rudnn.chunk_propagate %w, %u0, %k, %gamma chunk 16
      : tensor<?x?x?x16x8xf32>, tensor<?x?x?x16x4xf32>, tensor<?x?x?x8xf32>,
        tensor<?x?x?x16x8xf32>
      -> tensor<?x?x?x16x4xf32>, tensor<?x?x?x8x8xf32>, tensor<?x?x8x4xf32>
  return
}

// -----

// The restored updates take the boundaries' feature dims from w and u0.
func.func @restore_boundaries(%w: tensor<?x?x?x16x8xf32>, %u0: tensor<?x?x?x16x4xf32>,
                              %b: tensor<?x?x?x4x4xf32>) {
  // expected-error @+1 {{'boundaries' dim 3 (K) is 4, expected 8 as in 'w'}}
  %u = rudnn.chunk_restore %w, %u0, %b chunk 16
      : tensor<?x?x?x16x8xf32>, tensor<?x?x?x16x4xf32>, tensor<?x?x?x4x4xf32>
      -> tensor<?x?x?x16x4xf32>
  return
}

// -----

// The output's scale is positive.
func.func @output_scale(%q: tensor<?x?x?x8xf32>, %g: tensor<?x?x?x8xf32>,
                        %p: tensor<?x?x?x16x16xf32>, %u: tensor<?x?x?x16x4xf32>,
                        %b: tensor<?x?x?x8x4xf32>) {
  // expected-error @+1 {{'scale' must be positive and finite, got 0}}
  %o = rudnn.chunk_output %q, %g, %p, %u, %b chunk 16 scale 0.0
      : tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x16x16xf32>,
        tensor<?x?x?x16x4xf32>, tensor<?x?x?x8x4xf32> -> tensor<?x?x?x4xf32>
  return
}

// -----

// The output has q's element type.
func.func @output_dtype(%q: tensor<?x?x?x8xbf16>, %g: tensor<?x?x?x8xf32>,
                        %p: tensor<?x?x?x16x16xf32>, %u: tensor<?x?x?x16x4xf32>,
                        %b: tensor<?x?x?x8x4xbf16>) {
  // expected-error @+1 {{'output' element type must be 'bf16' as 'q', got 'f32'}}
  %o = rudnn.chunk_output %q, %g, %p, %u, %b chunk 16 scale 0.5
      : tensor<?x?x?x8xbf16>, tensor<?x?x?x8xf32>, tensor<?x?x?x16x16xf32>,
        tensor<?x?x?x16x4xf32>, tensor<?x?x?x8x4xbf16> -> tensor<?x?x?x4xf32>
  return
}

// -----

// The output's boundaries have q's element type.
func.func @output_boundaries_dtype(%q: tensor<?x?x?x8xbf16>,
                                   %g: tensor<?x?x?x8xf32>,
                                   %p: tensor<?x?x?x16x16xf32>,
                                   %u: tensor<?x?x?x16x4xf32>,
                                   %b: tensor<?x?x?x8x4xf32>) {
  // expected-error @+1 {{'boundaries' element type must be 'bf16' as 'q', got 'f32'}}
  %o = rudnn.chunk_output %q, %g, %p, %u, %b chunk 16 scale 0.5
      : tensor<?x?x?x8xbf16>, tensor<?x?x?x8xf32>, tensor<?x?x?x16x16xf32>,
        tensor<?x?x?x16x4xf32>, tensor<?x?x?x8x4xf32> -> tensor<?x?x?x4xbf16>
  return
}

// -----

// The recurrent form follows the forward's contract.
func.func @recurrent_state(%q: tensor<?x1x?x8xf32>, %beta: tensor<?x1x?xf32>) {
  // expected-error @+1 {{'final_state' element type must be f32, got 'f16'}}
  %o, %s = rudnn.kda_recurrent %q, %q, %q, %q, %beta chunk 16 scale 0.5
      : (tensor<?x1x?x8xf32>, tensor<?x1x?x8xf32>, tensor<?x1x?x8xf32>,
         tensor<?x1x?x8xf32>, tensor<?x1x?xf32>)
      -> (tensor<?x1x?x8xf32>, tensor<?x?x8x8xf16>)
  return
}

// -----

// Saved tiles are [N, B, H, W].
func.func @tiles_import_rank(%t: tensor<?x?x788xf32>) {
  // expected-error @+1 {{'tiles' must have rank 4 [N, B, H, W], got rank 3}}
  %gamma, %pairwise, %w, %u = rudnn.chunk_tiles_import %t chunk 16
      : tensor<?x?x788xf32> -> tensor<?x?x?x16x4xf32>, tensor<?x?x?x16x16xf32>,
        tensor<?x?x?x16x4xf32>, tensor<?x?x?x16x5xf32>
  return
}

// -----

// The chunk tiles a forward exports share K, the chunk and its dims.
func.func @tiles_export_shapes(%gamma: tensor<?x?x?x16x4xf32>, %pairwise: tensor<?x?x?x16x16xf32>, %w: tensor<?x?x?x16x6xf32>, %u: tensor<?x?x?x16x5xf32>) {
  // expected-error @+1 {{'w' dim 4 (K) is 6, expected 4 as in 'gamma'}}
  %t = rudnn.chunk_tiles_export %gamma, %pairwise, %w, %u chunk 16
      : tensor<?x?x?x16x4xf32>, tensor<?x?x?x16x16xf32>,
        tensor<?x?x?x16x6xf32>, tensor<?x?x?x16x5xf32> -> tensor<?x?x?x788xf32>
  return
}
