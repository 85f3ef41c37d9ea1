// RUN: rudnn-opt %s -split-input-file -verify-diagnostics

// -----

// Query heads are a multiple of the key heads.
func.func @heads(%q: tensor<2x1x6x16xf32>, %k: tensor<2x1x4x16xf32>, %v: tensor<2x1x4x16xf32>,
                 %kc: tensor<2x8x4x16xf32>, %vc: tensor<2x8x4x16xf32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{query heads H = 6 must be a multiple of the key heads G = 4}}
  %o, %k2, %v2, %lse, %s = rudnn.kv_cache_attention %q, %k, %v cache(%kc, %vc) lengths %l
      : (tensor<2x1x6x16xf32>, tensor<2x1x4x16xf32>, tensor<2x1x4x16xf32>, tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>, tensor<2xi32>)
      -> (tensor<2x1x6x16xf32>, tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>, tensor<2x6x1xf32>, tensor<2xi32>)
  return
}

// -----

// The caches hold the new tokens' type.
func.func @cache_type(%q: tensor<2x1x4x16xf32>, %k: tensor<2x1x4x16xf32>, %v: tensor<2x1x4x16xf32>,
                      %kc: tensor<2x8x4x16xbf16>, %vc: tensor<2x8x4x16xf32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{'k_cache' element type must be 'f32' as 'q', got 'bf16'}}
  %o, %k2, %v2, %lse, %s = rudnn.kv_cache_attention %q, %k, %v cache(%kc, %vc) lengths %l
      : (tensor<2x1x4x16xf32>, tensor<2x1x4x16xf32>, tensor<2x1x4x16xf32>, tensor<2x8x4x16xbf16>, tensor<2x8x4x16xf32>, tensor<2xi32>)
      -> (tensor<2x1x4x16xf32>, tensor<2x8x4x16xbf16>, tensor<2x8x4x16xf32>, tensor<2x4x1xf32>, tensor<2xi32>)
  return
}

// -----

// Each updated cache is its operand's memory, so its shape.
func.func @cache_result(%q: tensor<2x1x4x16xf32>, %k: tensor<2x1x4x16xf32>, %v: tensor<2x1x4x16xf32>,
                        %kc: tensor<2x8x4x16xf32>, %vc: tensor<2x8x4x16xf32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{'k_cache' dim 1 (S) is 9, expected 8 as in 'k_cache'}}
  %o, %k2, %v2, %lse, %s = rudnn.kv_cache_attention %q, %k, %v cache(%kc, %vc) lengths %l
      : (tensor<2x1x4x16xf32>, tensor<2x1x4x16xf32>, tensor<2x1x4x16xf32>, tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>, tensor<2xi32>)
      -> (tensor<2x1x4x16xf32>, tensor<2x9x4x16xf32>, tensor<2x8x4x16xf32>, tensor<2x4x1xf32>, tensor<2xi32>)
  return
}

// -----

// At most 64 parts.
func.func @splits(%q: tensor<2x1x4x16xf32>, %k: tensor<2x1x4x16xf32>, %v: tensor<2x1x4x16xf32>,
                  %kc: tensor<2x8x4x16xf32>, %vc: tensor<2x8x4x16xf32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{'splits' must be 1 to 64, got 65}}
  %o, %k2, %v2, %lse, %s = rudnn.kv_cache_attention %q, %k, %v cache(%kc, %vc) lengths %l splits 65
      : (tensor<2x1x4x16xf32>, tensor<2x1x4x16xf32>, tensor<2x1x4x16xf32>, tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>, tensor<2xi32>)
      -> (tensor<2x1x4x16xf32>, tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>, tensor<2x4x1xf32>, tensor<2xi32>)
  return
}

// -----

// Pages hold 1 to 256 tokens, a static size.
func.func @page_size(%q: tensor<2x1x4x16xf32>, %k: tensor<2x1x4x16xf32>, %v: tensor<2x1x4x16xf32>,
                     %kp: tensor<3x512x4x16xf32>, %vp: tensor<3x512x4x16xf32>, %t: tensor<2x2xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{page size Z is 512, expected 1 to 256}}
  %o, %k2, %v2, %lse, %s = rudnn.kv_cache_attention_paged %q, %k, %v pages(%kp, %vp) block_table %t lengths %l
      : (tensor<2x1x4x16xf32>, tensor<2x1x4x16xf32>, tensor<2x1x4x16xf32>, tensor<3x512x4x16xf32>, tensor<3x512x4x16xf32>, tensor<2x2xi32>, tensor<2xi32>)
      -> (tensor<2x1x4x16xf32>, tensor<3x512x4x16xf32>, tensor<3x512x4x16xf32>, tensor<2x4x1xf32>, tensor<2xi32>)
  return
}

// -----

// The block table has a row per entry.
func.func @table(%q: tensor<2x1x4x16xf32>, %k: tensor<2x1x4x16xf32>, %v: tensor<2x1x4x16xf32>,
                 %kp: tensor<3x16x4x16xf32>, %vp: tensor<3x16x4x16xf32>, %t: tensor<3x2xi32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{'block_table' dim 0 (B) is 3, expected 2 as in 'q'}}
  %o, %k2, %v2, %lse, %s = rudnn.kv_cache_attention_paged %q, %k, %v pages(%kp, %vp) block_table %t lengths %l
      : (tensor<2x1x4x16xf32>, tensor<2x1x4x16xf32>, tensor<2x1x4x16xf32>, tensor<3x16x4x16xf32>, tensor<3x16x4x16xf32>, tensor<3x2xi32>, tensor<2xi32>)
      -> (tensor<2x1x4x16xf32>, tensor<3x16x4x16xf32>, tensor<3x16x4x16xf32>, tensor<2x4x1xf32>, tensor<2xi32>)
  return
}

// -----

// The lengths are i32.
func.func @lengths(%q: tensor<2x1x4x16xf32>, %k: tensor<2x1x4x16xf32>, %v: tensor<2x1x4x16xf32>,
                   %kc: tensor<2x8x4x16xf32>, %vc: tensor<2x8x4x16xf32>, %l: tensor<2xi64>) {
  // expected-error @+1 {{'cache_lengths' element type must be i32, got 'i64'}}
  %o, %k2, %v2, %lse, %s = rudnn.kv_cache_attention %q, %k, %v cache(%kc, %vc) lengths %l
      : (tensor<2x1x4x16xf32>, tensor<2x1x4x16xf32>, tensor<2x1x4x16xf32>, tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>, tensor<2xi64>)
      -> (tensor<2x1x4x16xf32>, tensor<2x8x4x16xf32>, tensor<2x8x4x16xf32>, tensor<2x4x1xf32>, tensor<2xi32>)
  return
}

// -----

// ALiBi takes a slope per entry and query head.
func.func @slopes(%q: tensor<2x1x4x16xf32>, %kc: tensor<2x8x2x16xf32>, %vc: tensor<2x8x2x16xf32>,
                  %l: tensor<2xi32>, %slopes: tensor<2x2xf32>) {
  // expected-error @+1 {{'alibi_slopes' dim 1 (H) is 2, expected 4 as in 'q'}}
  %o, %k2, %v2, %lse, %s = rudnn.kv_cache_attention %q cache(%kc, %vc) lengths %l alibi %slopes
      : (tensor<2x1x4x16xf32>, tensor<2x8x2x16xf32>, tensor<2x8x2x16xf32>, tensor<2xi32>, tensor<2x2xf32>)
      -> (tensor<2x1x4x16xf32>, tensor<2x8x2x16xf32>, tensor<2x8x2x16xf32>, tensor<2x4x1xf32>, tensor<2xi32>)
  return
}

// -----

// A softcap is positive (absent: none).
func.func @softcap(%q: tensor<2x1x4x16xf32>, %kc: tensor<2x8x2x16xf32>, %vc: tensor<2x8x2x16xf32>,
                   %l: tensor<2xi32>, %pad: tensor<2xi32>) {
  // expected-error @+1 {{'softcap' must be positive and finite, got -1}}
  %o, %k2, %v2, %lse, %s = rudnn.kv_cache_attention %q cache(%kc, %vc) lengths %l leftpad %pad softcap -1.0
      : (tensor<2x1x4x16xf32>, tensor<2x8x2x16xf32>, tensor<2x8x2x16xf32>, tensor<2xi32>, tensor<2xi32>)
      -> (tensor<2x1x4x16xf32>, tensor<2x8x2x16xf32>, tensor<2x8x2x16xf32>, tensor<2x4x1xf32>, tensor<2xi32>)
  return
}

// -----

// The rotary embedding turns new keys: an attend-only call takes none.
func.func @rotary_attend_only(%q: tensor<2x1x4x16xf32>, %kc: tensor<2x8x2x16xf32>, %vc: tensor<2x8x2x16xf32>,
                              %l: tensor<2xi32>, %cos: tensor<9x4xf32>) {
  // expected-error @+1 {{rotates the new tokens' keys: 'rotary' needs 'k' and 'v'}}
  %o, %k2, %v2, %lse, %s = rudnn.kv_cache_attention %q cache(%kc, %vc) lengths %l rotary(%cos, %cos)
      : (tensor<2x1x4x16xf32>, tensor<2x8x2x16xf32>, tensor<2x8x2x16xf32>, tensor<2xi32>, tensor<9x4xf32>, tensor<9x4xf32>)
      -> (tensor<2x1x4x16xf32>, tensor<2x8x2x16xf32>, tensor<2x8x2x16xf32>, tensor<2x4x1xf32>, tensor<2xi32>)
  return
}

// -----

// At most D / 2 pairs turn.
func.func @rotary_pairs(%q: tensor<2x1x4x16xf32>, %k: tensor<2x1x2x16xf32>, %kc: tensor<2x8x2x16xf32>,
                        %vc: tensor<2x8x2x16xf32>, %l: tensor<2xi32>, %cos: tensor<9x9xf32>) {
  // expected-error @+1 {{'rotary_cos' holds 9 pairs a position: at most D / 2 = 8}}
  %o, %k2, %v2, %lse, %s = rudnn.kv_cache_attention %q, %k, %k cache(%kc, %vc) lengths %l rotary(%cos, %cos)
      : (tensor<2x1x4x16xf32>, tensor<2x1x2x16xf32>, tensor<2x1x2x16xf32>, tensor<2x8x2x16xf32>, tensor<2x8x2x16xf32>, tensor<2xi32>, tensor<9x9xf32>, tensor<9x9xf32>)
      -> (tensor<2x1x4x16xf32>, tensor<2x8x2x16xf32>, tensor<2x8x2x16xf32>, tensor<2x4x1xf32>, tensor<2xi32>)
  return
}

// -----

// Without a row map, cache row b is entry b's.
func.func @rows(%q: tensor<2x1x4x16xf32>, %kc: tensor<3x8x2x16xf32>, %vc: tensor<3x8x2x16xf32>, %l: tensor<2xi32>) {
  // expected-error @+1 {{has 3 cache rows for 2 entries: without 'cache_batch_idx' they are one each}}
  %o, %k2, %v2, %lse, %s = rudnn.kv_cache_attention %q cache(%kc, %vc) lengths %l
      : (tensor<2x1x4x16xf32>, tensor<3x8x2x16xf32>, tensor<3x8x2x16xf32>, tensor<2xi32>)
      -> (tensor<2x1x4x16xf32>, tensor<3x8x2x16xf32>, tensor<3x8x2x16xf32>, tensor<2x4x1xf32>, tensor<2xi32>)
  return
}
