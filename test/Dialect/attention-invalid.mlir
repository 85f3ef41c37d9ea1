// RUN: rudnn-opt %s -split-input-file -verify-diagnostics

// -----

// Query heads are a multiple of the key heads.
func.func @heads(%q: tensor<2x8x4x16xf32>, %k: tensor<2x9x3x16xf32>, %v: tensor<2x9x3x12xf32>) {
  // expected-error @+1 {{query heads H = 4 must be a multiple of the key heads G = 3}}
  %o, %lse = rudnn.attention %q, %k, %v
      : (tensor<2x8x4x16xf32>, tensor<2x9x3x16xf32>, tensor<2x9x3x12xf32>) -> (tensor<2x8x4x12xf32>, tensor<2x4x8xf32>)
  return
}

// -----

// Keys and queries share D.
func.func @head_dim(%q: tensor<2x8x4x16xf32>, %k: tensor<2x9x2x8xf32>, %v: tensor<2x9x2x12xf32>) {
  // expected-error @+1 {{'k' dim 3 (D) is 8, expected 16 as in 'q'}}
  %o, %lse = rudnn.attention %q, %k, %v
      : (tensor<2x8x4x16xf32>, tensor<2x9x2x8xf32>, tensor<2x9x2x12xf32>) -> (tensor<2x8x4x12xf32>, tensor<2x4x8xf32>)
  return
}

// -----

// Keys and values share their length.
func.func @key_length(%q: tensor<2x8x4x16xf32>, %k: tensor<2x9x2x16xf32>, %v: tensor<2x7x2x12xf32>) {
  // expected-error @+1 {{'v' dim 1 (S) is 7, expected 9 as in 'k'}}
  %o, %lse = rudnn.attention %q, %k, %v
      : (tensor<2x8x4x16xf32>, tensor<2x9x2x16xf32>, tensor<2x7x2x12xf32>) -> (tensor<2x8x4x12xf32>, tensor<2x4x8xf32>)
  return
}

// -----

// Head dims are static.
func.func @dynamic_head_dim(%q: tensor<2x8x4x?xf32>, %k: tensor<2x9x2x?xf32>, %v: tensor<2x9x2x12xf32>) {
  // expected-error @+1 {{'q' dim 3 (D) must be static}}
  %o, %lse = rudnn.attention %q, %k, %v
      : (tensor<2x8x4x?xf32>, tensor<2x9x2x?xf32>, tensor<2x9x2x12xf32>) -> (tensor<2x8x4x12xf32>, tensor<2x4x8xf32>)
  return
}

// -----

// Head dims are at most 256.
func.func @head_dim_max(%q: tensor<2x8x4x16xf32>, %k: tensor<2x9x2x16xf32>, %v: tensor<2x9x2x300xf32>) {
  // expected-error @+1 {{head dim E is 300, expected 1 to 256}}
  %o, %lse = rudnn.attention %q, %k, %v
      : (tensor<2x8x4x16xf32>, tensor<2x9x2x16xf32>, tensor<2x9x2x300xf32>) -> (tensor<2x8x4x300xf32>, tensor<2x4x8xf32>)
  return
}

// -----

// q, k and v share one element type.
func.func @element_type(%q: tensor<2x8x4x16xf32>, %k: tensor<2x9x2x16xbf16>, %v: tensor<2x9x2x12xf32>) {
  // expected-error @+1 {{'k' element type must be 'f32' as 'q', got 'bf16'}}
  %o, %lse = rudnn.attention %q, %k, %v
      : (tensor<2x8x4x16xf32>, tensor<2x9x2x16xbf16>, tensor<2x9x2x12xf32>) -> (tensor<2x8x4x12xf32>, tensor<2x4x8xf32>)
  return
}

// -----

// o has q's element type.
func.func @output_type(%q: tensor<2x8x4x16xf32>, %k: tensor<2x9x2x16xf32>, %v: tensor<2x9x2x12xf32>) {
  // expected-error @+1 {{'o' element type must be 'f32' as 'q', got 'f16'}}
  %o, %lse = rudnn.attention %q, %k, %v
      : (tensor<2x8x4x16xf32>, tensor<2x9x2x16xf32>, tensor<2x9x2x12xf32>) -> (tensor<2x8x4x12xf16>, tensor<2x4x8xf32>)
  return
}

// -----

// lse is [B, H, T] f32.
func.func @lse_shape(%q: tensor<2x8x4x16xf32>, %k: tensor<2x9x2x16xf32>, %v: tensor<2x9x2x12xf32>) {
  // expected-error @+1 {{'lse' dim 1 (H) is 2, expected 4 as in 'q'}}
  %o, %lse = rudnn.attention %q, %k, %v
      : (tensor<2x8x4x16xf32>, tensor<2x9x2x16xf32>, tensor<2x9x2x12xf32>) -> (tensor<2x8x4x12xf32>, tensor<2x2x8xf32>)
  return
}

// -----

// Key lengths are i32.
func.func @lengths_type(%q: tensor<2x8x4x16xf32>, %k: tensor<2x9x2x16xf32>, %v: tensor<2x9x2x12xf32>, %l: tensor<2xi64>) {
  // expected-error @+1 {{'key_lengths' element type must be i32, got 'i64'}}
  %o, %lse = rudnn.attention %q, %k, %v key_lengths %l
      : (tensor<2x8x4x16xf32>, tensor<2x9x2x16xf32>, tensor<2x9x2x12xf32>, tensor<2xi64>) -> (tensor<2x8x4x12xf32>, tensor<2x4x8xf32>)
  return
}

// -----

// The key mask is [B, S] i1.
func.func @mask_shape(%q: tensor<2x8x4x16xf32>, %k: tensor<2x9x2x16xf32>, %v: tensor<2x9x2x12xf32>, %m: tensor<2x8xi1>) {
  // expected-error @+1 {{'key_mask' dim 1 (S) is 8, expected 9 as in 'k'}}
  %o, %lse = rudnn.attention %q, %k, %v key_mask %m
      : (tensor<2x8x4x16xf32>, tensor<2x9x2x16xf32>, tensor<2x9x2x12xf32>, tensor<2x8xi1>) -> (tensor<2x8x4x12xf32>, tensor<2x4x8xf32>)
  return
}

// -----

// Window bounds are -1 or at least 0.
func.func @window(%q: tensor<2x8x4x16xf32>, %k: tensor<2x9x2x16xf32>, %v: tensor<2x9x2x12xf32>) {
  // expected-error @+1 {{'window' bounds must be -1 (unbounded) or 0 to 1073741824}}
  %o, %lse = rudnn.attention %q, %k, %v window (-2, 3)
      : (tensor<2x8x4x16xf32>, tensor<2x9x2x16xf32>, tensor<2x9x2x12xf32>) -> (tensor<2x8x4x12xf32>, tensor<2x4x8xf32>)
  return
}

// -----

// A bounded window side stays within 2^30: the kernels add it to positions
// in 32-bit arithmetic.
func.func @window_wide(%q: tensor<2x8x4x16xf32>, %k: tensor<2x9x2x16xf32>, %v: tensor<2x9x2x12xf32>) {
  // expected-error @+1 {{'window' bounds must be -1 (unbounded) or 0 to 1073741824}}
  %o, %lse = rudnn.attention %q, %k, %v window (3, 2147483647)
      : (tensor<2x8x4x16xf32>, tensor<2x9x2x16xf32>, tensor<2x9x2x12xf32>) -> (tensor<2x8x4x12xf32>, tensor<2x4x8xf32>)
  return
}

// -----

// A softcap is positive.
func.func @softcap(%q: tensor<2x8x4x16xf32>, %k: tensor<2x9x2x16xf32>, %v: tensor<2x9x2x12xf32>) {
  // expected-error @+1 {{'softcap' must be positive and finite, got 0}}
  %o, %lse = rudnn.attention %q, %k, %v softcap 0.0
      : (tensor<2x8x4x16xf32>, tensor<2x9x2x16xf32>, tensor<2x9x2x12xf32>) -> (tensor<2x8x4x12xf32>, tensor<2x4x8xf32>)
  return
}

// -----

// A persistent grid is the Hopper kernel's (wgmma).
func.func @blocks(%q: tensor<2x8x4x16xbf16>, %k: tensor<2x9x2x16xbf16>, %v: tensor<2x9x2x16xbf16>) {
  // expected-error @+1 {{'blocks' (a persistent grid) must be positive and goes with 'wgmma' (the Hopper kernel)}}
  %o, %lse = rudnn.attention %q, %k, %v block_q 128 blocks 4
      : (tensor<2x8x4x16xbf16>, tensor<2x9x2x16xbf16>, tensor<2x9x2x16xbf16>) -> (tensor<2x8x4x16xbf16>, tensor<2x4x8xf32>)
  return
}

// -----

// No blocks at all.
func.func @no_blocks(%q: tensor<2x8x4x16xbf16>, %k: tensor<2x9x2x16xbf16>, %v: tensor<2x9x2x16xbf16>) {
  // expected-error @+1 {{'blocks' (a persistent grid) must be positive}}
  %o, %lse = rudnn.attention %q, %k, %v block_q 128 blocks 0 wgmma
      : (tensor<2x8x4x16xbf16>, tensor<2x9x2x16xbf16>, tensor<2x9x2x16xbf16>) -> (tensor<2x8x4x16xbf16>, tensor<2x4x8xf32>)
  return
}

// -----

// Queries come 64 or 128 a block (the mma.sync kernel).
func.func @block_q(%q: tensor<2x8x4x16xf32>, %k: tensor<2x9x2x16xf32>, %v: tensor<2x9x2x12xf32>) {
  // expected-error @+1 {{'block_q' must be 64 or 128 (or 'wgmma'), got 32}}
  %o, %lse = rudnn.attention %q, %k, %v block_q 32
      : (tensor<2x8x4x16xf32>, tensor<2x9x2x16xf32>, tensor<2x9x2x12xf32>) -> (tensor<2x8x4x12xf32>, tensor<2x4x8xf32>)
  return
}

// -----

// f32 blocks keep 64 query rows: four warps of 32 would not hold their
// fp32 accumulators.
func.func @wide_f32(%q: tensor<2x8x4x16xf32>, %k: tensor<2x9x2x16xf32>, %v: tensor<2x9x2x12xf32>) {
  // expected-error @+1 {{'block_q' 128 takes 16-bit inputs (f32 blocks are 64 rows)}}
  %o, %lse = rudnn.attention %q, %k, %v block_q 128
      : (tensor<2x8x4x16xf32>, tensor<2x9x2x16xf32>, tensor<2x9x2x12xf32>) -> (tensor<2x8x4x12xf32>, tensor<2x4x8xf32>)
  return
}

// -----

// The Hopper kernel multiplies 16-bit inputs.
func.func @hopper_f32(%q: tensor<2x8x4x16xf32>, %k: tensor<2x9x2x16xf32>, %v: tensor<2x9x2x12xf32>) {
  // expected-error @+1 {{'wgmma' (the Hopper kernel) takes 16-bit inputs}}
  %o, %lse = rudnn.attention %q, %k, %v wgmma
      : (tensor<2x8x4x16xf32>, tensor<2x9x2x16xf32>, tensor<2x9x2x12xf32>) -> (tensor<2x8x4x12xf32>, tensor<2x4x8xf32>)
  return
}

// -----

// Its blocks are two or three consumer warpgroups of 64 rows.
func.func @hopper_block_q(%q: tensor<2x8x4x16xbf16>, %k: tensor<2x9x2x16xbf16>, %v: tensor<2x9x2x12xbf16>) {
  // expected-error @+1 {{'block_q' must be 128 or 192 with 'wgmma', got 64}}
  %o, %lse = rudnn.attention %q, %k, %v block_q 64 wgmma
      : (tensor<2x8x4x16xbf16>, tensor<2x9x2x16xbf16>, tensor<2x9x2x12xbf16>) -> (tensor<2x8x4x12xbf16>, tensor<2x4x8xf32>)
  return
}

// -----

// Three consumer warpgroups (block_q 192) hold rows of 64 columns at most.
func.func @hopper_three_groups(%q: tensor<2x8x4x16xbf16>, %k: tensor<2x9x2x16xbf16>, %v: tensor<2x9x2x72xbf16>) {
  // expected-error @+1 {{'block_q' 192 (three consumer warpgroups) takes head dims up to 64, got D = 16, E = 72}}
  %o, %lse = rudnn.attention %q, %k, %v block_q 192 wgmma
      : (tensor<2x8x4x16xbf16>, tensor<2x9x2x16xbf16>, tensor<2x9x2x72xbf16>) -> (tensor<2x8x4x72xbf16>, tensor<2x4x8xf32>)
  return
}

// -----

// Its key tiles follow the head dims: 128 keys up to D = 128.
func.func @hopper_keys(%q: tensor<2x8x4x16xbf16>, %k: tensor<2x9x2x16xbf16>, %v: tensor<2x9x2x12xbf16>) {
  // expected-error @+1 {{'block_k' must be 128 with 'wgmma' at these head dims, got 64}}
  %o, %lse = rudnn.attention %q, %k, %v block_q 128 block_k 64 wgmma
      : (tensor<2x8x4x16xbf16>, tensor<2x9x2x16xbf16>, tensor<2x9x2x12xbf16>) -> (tensor<2x8x4x12xbf16>, tensor<2x4x8xf32>)
  return
}

// -----

// Keys come 16, 32 or 64 a tile.
func.func @block_k(%q: tensor<2x8x4x16xf32>, %k: tensor<2x9x2x16xf32>, %v: tensor<2x9x2x12xf32>) {
  // expected-error @+1 {{'block_k' must be 16, 32 or 64, got 48}}
  %o, %lse = rudnn.attention %q, %k, %v block_k 48
      : (tensor<2x8x4x16xf32>, tensor<2x9x2x16xf32>, tensor<2x9x2x12xf32>) -> (tensor<2x8x4x12xf32>, tensor<2x4x8xf32>)
  return
}

// -----

// Both offsets count the entries plus one.
func.func @varlen_offsets(%q: tensor<10x4x16xf32>, %k: tensor<12x2x16xf32>, %v: tensor<12x2x8xf32>, %cq: tensor<3xi32>, %ck: tensor<4xi32>) {
  // expected-error @+1 {{'cu_seqlens_k' dim 0 (C) is 4, expected 3 as in 'cu_seqlens_q'}}
  %o, %lse = rudnn.attention_varlen %q, %k, %v cu_seqlens(%cq, %ck)
      : (tensor<10x4x16xf32>, tensor<12x2x16xf32>, tensor<12x2x8xf32>, tensor<3xi32>, tensor<4xi32>) -> (tensor<10x4x8xf32>, tensor<4x10xf32>)
  return
}

// -----

// Packed lse is [H, T].
func.func @varlen_lse(%q: tensor<10x4x16xf32>, %k: tensor<12x2x16xf32>, %v: tensor<12x2x8xf32>, %cq: tensor<3xi32>, %ck: tensor<3xi32>) {
  // expected-error @+1 {{'lse' dim 0 (H) is 10, expected 4 as in 'q'}}
  %o, %lse = rudnn.attention_varlen %q, %k, %v cu_seqlens(%cq, %ck)
      : (tensor<10x4x16xf32>, tensor<12x2x16xf32>, tensor<12x2x8xf32>, tensor<3xi32>, tensor<3xi32>) -> (tensor<10x4x8xf32>, tensor<10x4xf32>)
  return
}

// -----

// A packed mask takes offsets, not key lengths.
func.func @packed_mask(%s: tensor<4x10x12xf32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{packed scores [H, T, S] take the entries' offsets (cu_seqlens) and no lengths or mask}}
  %m = rudnn.attention_mask %s key_lengths %l : tensor<4x10x12xf32>, tensor<2xi32> -> tensor<4x10x12xf32>
  return
}

// -----

// The backward's lse is [B, H, T], as the forward returns it.
func.func @backward_lse(%q: tensor<2x8x4x16xf32>, %k: tensor<2x9x2x16xf32>, %v: tensor<2x9x2x12xf32>, %o: tensor<2x8x4x12xf32>, %lse: tensor<2x8x4xf32>, %do: tensor<2x8x4x12xf32>) {
  // expected-error @+1 {{'lse' dim 1 (H) is 8, expected 4 as in 'q'}}
  %dq, %dk, %dv = rudnn.attention_backward %q, %k, %v output(%o, %lse) gradient %do
      : (tensor<2x8x4x16xf32>, tensor<2x9x2x16xf32>, tensor<2x9x2x12xf32>, tensor<2x8x4x12xf32>, tensor<2x8x4xf32>, tensor<2x8x4x12xf32>) -> (tensor<2x8x4x16xf32>, tensor<2x9x2x16xf32>, tensor<2x9x2x12xf32>)
  return
}

// -----

// The incoming gradient has the inputs' type.
func.func @backward_gradient_type(%q: tensor<2x8x4x16xf32>, %k: tensor<2x9x2x16xf32>, %v: tensor<2x9x2x12xf32>, %o: tensor<2x8x4x12xf32>, %lse: tensor<2x4x8xf32>, %do: tensor<2x8x4x12xbf16>) {
  // expected-error @+1 {{'d_output' element type must be 'f32' as 'q', got 'bf16'}}
  %dq, %dk, %dv = rudnn.attention_backward %q, %k, %v output(%o, %lse) gradient %do
      : (tensor<2x8x4x16xf32>, tensor<2x9x2x16xf32>, tensor<2x9x2x12xf32>, tensor<2x8x4x12xf32>, tensor<2x4x8xf32>, tensor<2x8x4x12xbf16>) -> (tensor<2x8x4x16xf32>, tensor<2x9x2x16xf32>, tensor<2x9x2x12xf32>)
  return
}

// -----

// dk has the key heads of k, not the query heads.
func.func @backward_dk(%q: tensor<2x8x4x16xf32>, %k: tensor<2x9x2x16xf32>, %v: tensor<2x9x2x12xf32>, %o: tensor<2x8x4x12xf32>, %lse: tensor<2x4x8xf32>, %do: tensor<2x8x4x12xf32>) {
  // expected-error @+1 {{'dk' dim 2 (G) is 4, expected 2 as in 'k'}}
  %dq, %dk, %dv = rudnn.attention_backward %q, %k, %v output(%o, %lse) gradient %do
      : (tensor<2x8x4x16xf32>, tensor<2x9x2x16xf32>, tensor<2x9x2x12xf32>, tensor<2x8x4x12xf32>, tensor<2x4x8xf32>, tensor<2x8x4x12xf32>) -> (tensor<2x8x4x16xf32>, tensor<2x9x4x16xf32>, tensor<2x9x2x12xf32>)
  return
}

// -----

// The packed backward's lse is [H, T], as the packed forward returns it.
func.func @varlen_backward_lse(%q: tensor<10x4x16xf32>, %k: tensor<12x2x16xf32>, %v: tensor<12x2x8xf32>, %cu_q: tensor<3xi32>, %cu_k: tensor<3xi32>, %o: tensor<10x4x8xf32>, %lse: tensor<10x4xf32>, %do: tensor<10x4x8xf32>) {
  // expected-error @+1 {{'lse' dim 0 (H) is 10, expected 4 as in 'q'}}
  %dq, %dk, %dv = rudnn.attention_varlen_backward %q, %k, %v cu_seqlens(%cu_q, %cu_k) output(%o, %lse) gradient %do
      : (tensor<10x4x16xf32>, tensor<12x2x16xf32>, tensor<12x2x8xf32>, tensor<3xi32>, tensor<3xi32>, tensor<10x4x8xf32>, tensor<10x4xf32>, tensor<10x4x8xf32>) -> (tensor<10x4x16xf32>, tensor<12x2x16xf32>, tensor<12x2x8xf32>)
  return
}

// -----

// A packed gradient primitive takes the entries' offsets, not lengths.
func.func @packed_gradients_with_lengths(%q: tensor<10x4x16xf32>, %k: tensor<12x2x16xf32>, %v: tensor<12x2x8xf32>, %lengths: tensor<3xi32>, %lse: tensor<4x10xf32>, %terms: tensor<4x10xf32>, %do: tensor<10x4x8xf32>) {
  // expected-error @+1 {{packed q [T, H, D] takes the entries' offsets (cu_seqlens) and no lengths or mask}}
  %dk, %dv, %acc = rudnn.attention_gradients %q, %k, %v key_lengths %lengths lse %lse terms %terms gradient %do scale 0.25 block_rows 64
      : (tensor<10x4x16xf32>, tensor<12x2x16xf32>, tensor<12x2x8xf32>, tensor<3xi32>, tensor<4x10xf32>, tensor<4x10xf32>, tensor<10x4x8xf32>) -> (tensor<12x2x16xf32>, tensor<12x2x8xf32>, tensor<10x4x16xf32>)
  return
}

// -----

// The Hopper kernel is for 16-bit inputs.
func.func @backward_wgmma_f32(%q: tensor<2x8x4x16xf32>, %k: tensor<2x9x2x16xf32>, %v: tensor<2x9x2x12xf32>, %o: tensor<2x8x4x12xf32>, %lse: tensor<2x4x8xf32>, %do: tensor<2x8x4x12xf32>) {
  // expected-error @+1 {{'wgmma' (the Hopper kernel) takes 16-bit inputs and head dims up to 256}}
  %dq, %dk, %dv = rudnn.attention_backward %q, %k, %v output(%o, %lse) gradient %do block_rows 128 wgmma
      : (tensor<2x8x4x16xf32>, tensor<2x9x2x16xf32>, tensor<2x9x2x12xf32>, tensor<2x8x4x12xf32>, tensor<2x4x8xf32>, tensor<2x8x4x12xf32>) -> (tensor<2x8x4x16xf32>, tensor<2x9x2x16xf32>, tensor<2x9x2x12xf32>)
  return
}

// -----

// Without `wgmma`, the sm_80 kernel's blocks are 64 keys, or 128 for
// 16-bit inputs with head dims to 128: not f32's.
func.func @backward_rows_sm80(%q: tensor<2x8x4x16xf32>, %k: tensor<2x9x2x16xf32>, %v: tensor<2x9x2x12xf32>, %o: tensor<2x8x4x12xf32>, %lse: tensor<2x4x8xf32>, %do: tensor<2x8x4x12xf32>) {
  // expected-error @+1 {{'block_rows' of the sm_80 kernel must be 64, or 128 for 16-bit inputs with head dims to 128, got 128}}
  %dq, %dk, %dv = rudnn.attention_backward %q, %k, %v output(%o, %lse) gradient %do block_rows 128
      : (tensor<2x8x4x16xf32>, tensor<2x9x2x16xf32>, tensor<2x9x2x12xf32>, tensor<2x8x4x12xf32>, tensor<2x4x8xf32>, tensor<2x8x4x12xf32>) -> (tensor<2x8x4x16xf32>, tensor<2x9x2x16xf32>, tensor<2x9x2x12xf32>)
  return
}

// -----

// Nor past head dims of 128.
func.func @backward_rows_sm80_wide(%q: tensor<2x8x4x160xbf16>, %k: tensor<2x9x2x160xbf16>, %v: tensor<2x9x2x12xbf16>, %o: tensor<2x8x4x12xbf16>, %lse: tensor<2x4x8xf32>, %do: tensor<2x8x4x12xbf16>) {
  // expected-error @+1 {{'block_rows' of the sm_80 kernel must be 64, or 128 for 16-bit inputs with head dims to 128, got 128}}
  %dq, %dk, %dv = rudnn.attention_backward %q, %k, %v output(%o, %lse) gradient %do block_rows 128
      : (tensor<2x8x4x160xbf16>, tensor<2x9x2x160xbf16>, tensor<2x9x2x12xbf16>, tensor<2x8x4x12xbf16>, tensor<2x4x8xf32>, tensor<2x8x4x12xbf16>) -> (tensor<2x8x4x160xbf16>, tensor<2x9x2x160xbf16>, tensor<2x9x2x12xbf16>)
  return
}

// -----

// Past D = E = 128 the Hopper kernel's blocks are 64 keys.
func.func @backward_rows_wide(%q: tensor<2x8x4x192xbf16>, %k: tensor<2x9x2x192xbf16>, %v: tensor<2x9x2x12xbf16>, %o: tensor<2x8x4x12xbf16>, %lse: tensor<2x4x8xf32>, %do: tensor<2x8x4x12xbf16>) {
  // expected-error @+1 {{'block_rows' of the Hopper kernel at D = 192, E = 12 must be 64, got 128}}
  %dq, %dk, %dv = rudnn.attention_backward %q, %k, %v output(%o, %lse) gradient %do block_rows 128 wgmma
      : (tensor<2x8x4x192xbf16>, tensor<2x9x2x192xbf16>, tensor<2x9x2x12xbf16>, tensor<2x8x4x12xbf16>, tensor<2x4x8xf32>, tensor<2x8x4x12xbf16>) -> (tensor<2x8x4x192xbf16>, tensor<2x9x2x192xbf16>, tensor<2x9x2x12xbf16>)
  return
}

// -----

// The Hopper kernel's blocks have 128 keys up to D = E = 128.
func.func @backward_rows(%q: tensor<2x8x4x16xbf16>, %k: tensor<2x9x2x16xbf16>, %v: tensor<2x9x2x12xbf16>, %o: tensor<2x8x4x12xbf16>, %lse: tensor<2x4x8xf32>, %do: tensor<2x8x4x12xbf16>) {
  // expected-error @+1 {{'block_rows' of the Hopper kernel at D = 16, E = 12 must be 128, got 96}}
  %dq, %dk, %dv = rudnn.attention_backward %q, %k, %v output(%o, %lse) gradient %do block_rows 96 wgmma
      : (tensor<2x8x4x16xbf16>, tensor<2x9x2x16xbf16>, tensor<2x9x2x12xbf16>, tensor<2x8x4x12xbf16>, tensor<2x4x8xf32>, tensor<2x8x4x12xbf16>) -> (tensor<2x8x4x16xbf16>, tensor<2x9x2x16xbf16>, tensor<2x9x2x12xbf16>)
  return
}

// -----

// The deterministic kernel's grid goes with 'deterministic'.
func.func @backward_blocks(%q: tensor<2x8x4x16xbf16>, %k: tensor<2x9x2x16xbf16>, %v: tensor<2x9x2x12xbf16>, %o: tensor<2x8x4x12xbf16>, %lse: tensor<2x4x8xf32>, %do: tensor<2x8x4x12xbf16>) {
  // expected-error @+1 {{'blocks' (the deterministic kernel's persistent grid) must be positive and goes with 'deterministic'}}
  %dq, %dk, %dv = rudnn.attention_backward %q, %k, %v output(%o, %lse) gradient %do blocks 132
      : (tensor<2x8x4x16xbf16>, tensor<2x9x2x16xbf16>, tensor<2x9x2x12xbf16>, tensor<2x8x4x12xbf16>, tensor<2x4x8xf32>, tensor<2x8x4x12xbf16>) -> (tensor<2x8x4x16xbf16>, tensor<2x9x2x16xbf16>, tensor<2x9x2x12xbf16>)
  return
}

// -----

// decode_split takes at most one 64-row block's queries.
func.func @decode_split_queries(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) {
  // expected-error @+1 {{'decode_split' takes the most queries a split call has (0 to 64) and the blocks it aims at (positive)}}
  %o, %lse = rudnn.attention %q, %k, %v decode_split (65, 1056)
      : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>) -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>)
  return
}

// -----

// A split's scores are the mma.sync kernel's 64-row blocks.
func.func @split_keys_wgmma(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>) {
  // expected-error @+1 {{'split_keys' (the blocks a split aims at) must be positive, over padded queries in blocks of 64 rows, without 'wgmma'}}
  %s = rudnn.attention_scores %q, %k scale 1.250000e-01 block_q 128 block_k 128 wgmma split_keys 1056
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x?xf32>
  return
}

// -----

// The Hopper scores' key tiles are ones a tensor map can load.
func.func @scores_wgmma_keys(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>) {
  // expected-error @+1 {{'block_k' must be 64 or 128 with 'wgmma', got 2147483647}}
  %s = rudnn.attention_scores %q, %k scale 1.250000e-01 block_q 128 block_k 2147483647 wgmma
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x?xf32>
  return
}

// -----

// The deterministic kernel's grid is a cooperative one the primitive names.
func.func @gradients_deterministic_grid(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>, %lse: tensor<?x?x?xf32>, %do: tensor<?x?x?x64xbf16>) {
  // expected-error @+1 {{'deterministic' needs 'blocks', its cooperative grid (rudnn-specialize sets the target's SM count)}}
  %dk, %dv, %acc = rudnn.attention_gradients %q, %k, %v lse %lse terms %lse gradient %do scale 1.250000e-01 block_rows 128 deterministic
      : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>, tensor<?x?x?xf32>, tensor<?x?x?x64xbf16>) -> (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xf32>)
  return
}
