// RUN: rudnn-opt %s -split-input-file -verify-diagnostics -rudnn-specialize="smem-per-block=16384"
// RUN: not rudnn-opt %s -split-input-file -rudnn-specialize="arch=sm_70" 2>&1 | FileCheck %s --check-prefix=ARCH
// RUN: not rudnn-opt %s -split-input-file -rudnn-specialize="set=chunk=24" 2>&1 | FileCheck %s --check-prefix=CHUNK
// RUN: not rudnn-opt %s -split-input-file -rudnn-specialize="set=tile=64" 2>&1 | FileCheck %s --check-prefix=UNKNOWN
// RUN: not rudnn-opt %s -split-input-file -rudnn-specialize="set=chunk" 2>&1 | FileCheck %s --check-prefix=SYNTAX
// RUN: not rudnn-opt %s -split-input-file -rudnn-specialize="lanes=16" 2>&1 | FileCheck %s --check-prefix=LANES

// ARCH: error: target arch must be sm_80 or newer, got "sm_70"
// CHUNK: error: 'rudnn.kda' op 'chunk' must be 16, 32 or 64, got 24
// UNKNOWN: error: 'set': no rudnn operator has an attribute 'tile'
// SYNTAX: error: 'set' takes name=value entries, got 'chunk'
// LANES: error: target lanes must be 32 (the warp width), got 16

// No chunk fits K = V = 256 in 16 KiB, and the op says which.
func.func @nothing_fits(%q: tensor<?x?x?x256xf32>, %beta: tensor<?x?x?xf32>) {
  // expected-error @+1 {{no chunk size fits K = 256, V = 256 in smem_per_block = 16384 bytes (needs 133696 for chunk 16)}}
  %o, %s = rudnn.kda %q, %q, %q, %q, %beta
      : (tensor<?x?x?x256xf32>, tensor<?x?x?x256xf32>, tensor<?x?x?x256xf32>,
         tensor<?x?x?x256xf32>, tensor<?x?x?xf32>)
      -> (tensor<?x?x?x256xf32>, tensor<?x?x256x256xf32>)
  return
}

// -----

// A chunk given on the op needs no choice, so it specializes in any budget.
func.func @explicit_chunk(%q: tensor<?x?x?x256xf32>, %beta: tensor<?x?x?xf32>) {
  %o, %s = rudnn.kda %q, %q, %q, %q, %beta chunk 16
      : (tensor<?x?x?x256xf32>, tensor<?x?x?x256xf32>, tensor<?x?x?x256xf32>,
         tensor<?x?x?x256xf32>, tensor<?x?x?xf32>)
      -> (tensor<?x?x?x256xf32>, tensor<?x?x256x256xf32>)
  return
}

// -----

// The attention backward's gradient blocks do not fit 16 KiB at D = 256.
func.func @backward_too_large(%q: tensor<?x?x?x256xf32>, %lse: tensor<?x?x?xf32>) {
  // expected-error @+1 {{the gradient blocks need 200704 bytes of shared memory at D = 256, E = 256 with 32-bit inputs; smem_per_block = 16384}}
  %dq, %dk, %dv = rudnn.attention_backward %q, %q, %q output(%q, %lse) gradient %q
      : (tensor<?x?x?x256xf32>, tensor<?x?x?x256xf32>, tensor<?x?x?x256xf32>,
         tensor<?x?x?x256xf32>, tensor<?x?x?xf32>, tensor<?x?x?x256xf32>)
      -> (tensor<?x?x?x256xf32>, tensor<?x?x?x256xf32>, tensor<?x?x?x256xf32>)
  return
}

// -----

// An LSTM's projection on wgmma asked for where it cannot run: f32 inputs
// kept exact (and here too little shared memory for its stages).
func.func @lstm_wgmma_f32(%x: tensor<?x?x3xf32>, %wi: tensor<20x3xf32>, %wh: tensor<20x5xf32>) {
  // expected-error @+1 {{'wgmma_projection' needs 16-bit inputs (or f32 with 'allow_tf32') on an sm_90 target with 164864 bytes of shared memory a block}}
  %out, %h, %c = rudnn.lstm %x weights(%wi, %wh) layers 1 wgmma_projection true allow_tf32 false
      : (tensor<?x?x3xf32>, tensor<20x3xf32>, tensor<20x5xf32>)
      -> (tensor<?x?x5xf32>, tensor<1x?x5xf32>, tensor<1x?x5xf32>)
  return
}

// -----

// KDA's walk on wgmma asked for f32 inputs: the state walk's wgmma takes
// 16-bit operands.
func.func @kda_wgmma_f32(%q: tensor<?x?x?x8xf32>, %beta: tensor<?x?x?xf32>) {
  // expected-error @+1 {{'wgmma' needs 16-bit inputs on sm_90a, K <= 256 and 62464 bytes of shared memory a block (target sm_90, K = 8, 32-bit inputs)}}
  %o, %s = rudnn.kda %q, %q, %q, %q, %beta chunk 16 wgmma true
      : (tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>,
         tensor<?x?x?x8xf32>, tensor<?x?x?xf32>)
      -> (tensor<?x?x?x8xf32>, tensor<?x?x8x8xf32>)
  return
}

// -----

// The backward's reverse walk on wgmma, asked for f32 inputs.
func.func @kda_backward_wgmma_f32(%q: tensor<?x?x?x8xf32>,
                                  %beta: tensor<?x?x?xf32>) {
  // expected-error @+1 {{'wgmma' needs 16-bit inputs on sm_90a, K <= 256 and 39936 bytes of shared memory a block (target sm_90, K = 8, 32-bit inputs)}}
  %dq, %dk, %dv, %dg, %dbeta = rudnn.kda_backward %q, %q, %q, %q, %beta
      d_output %q chunk 16 wgmma true
      : (tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>,
         tensor<?x?x?x8xf32>, tensor<?x?x?xf32>, tensor<?x?x?x8xf32>)
      -> (tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>,
          tensor<?x?x?x8xf32>, tensor<?x?x?xf32>)
  return
}
