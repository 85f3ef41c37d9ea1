// RUN: rudnn-opt %s -split-input-file -verify-diagnostics

// The arch must be spelled sm_XX.
// expected-error @+1 {{target arch must look like "sm_90" or "sm_90a", got "gfx90a"}}
module attributes {rudnn.target = #rudnn.target<arch = "gfx90a", lanes = 32, smem_per_block = 65536, sm_count = 104>} {}

// -----

// Tensor-core fragments need sm_80 or newer.
// expected-error @+1 {{target arch must be sm_80 or newer, got "sm_75"}}
module attributes {rudnn.target = #rudnn.target<arch = "sm_75", lanes = 32, smem_per_block = 65536, sm_count = 40>} {}

// -----

// A warp has 32 lanes.
// expected-error @+1 {{target lanes must be 32 (the warp width), got 64}}
module attributes {rudnn.target = #rudnn.target<arch = "sm_90", lanes = 64, smem_per_block = 232448, sm_count = 132>} {}

// -----

// Shared memory per block is positive.
// expected-error @+1 {{target smem_per_block must be in [1, 232448] bytes, got 0}}
module attributes {rudnn.target = #rudnn.target<arch = "sm_90", lanes = 32, smem_per_block = 0, sm_count = 132>} {}

// -----

// Shared memory per block stays within what any architecture offers.
// expected-error @+1 {{target smem_per_block must be in [1, 232448] bytes, got 262144}}
module attributes {rudnn.target = #rudnn.target<arch = "sm_90", lanes = 32, smem_per_block = 262144, sm_count = 132>} {}

// -----

// The SM count is positive.
// expected-error @+1 {{target sm_count must be positive, got 0}}
module attributes {rudnn.target = #rudnn.target<arch = "sm_90", lanes = 32, smem_per_block = 232448, sm_count = 0>} {}

// -----

// Every parameter is required.
// expected-error @+1 {{expected ','}}
module attributes {rudnn.target = #rudnn.target<arch = "sm_90", lanes = 32, smem_per_block = 232448>} {}

// -----

// The target belongs on a module.
// expected-error @+1 {{'rudnn.target' may only be attached to a builtin.module}}
func.func @on_function() attributes {rudnn.target = #rudnn.target<arch = "sm_90", lanes = 32, smem_per_block = 232448, sm_count = 132>} {
  return
}

// -----

// rudnn.target holds a #rudnn.target.
// expected-error @+1 {{'rudnn.target' must be a #rudnn.target, got "sm_90"}}
module attributes {rudnn.target = "sm_90"} {}

// -----

// The dialect knows no other discardable attribute.
// expected-error @+1 {{unknown attribute 'rudnn.chunk' of the rudnn dialect}}
module attributes {rudnn.chunk = 64} {}

// -----

// rudnn.name on an argument is a non-empty string.
// expected-error @+1 {{'rudnn.name' of argument #0 must be a non-empty string}}
func.func @unnamed(%x: tensor<4xf32> {rudnn.name = ""}) {
  return
}

// -----

// rudnn.name on a result is a string.
// expected-error @+1 {{'rudnn.name' of result #0 must be a non-empty string}}
func.func @numbered(%x: tensor<4xf32>) -> (tensor<4xf32> {rudnn.name = 3 : i64}) {
  return %x : tensor<4xf32>
}

// -----

// Arguments carry no other rudnn attribute.
// expected-error @+1 {{unknown attribute 'rudnn.dtype' of the rudnn dialect on argument #0}}
func.func @unknown_arg_attr(%x: tensor<4xf32> {rudnn.dtype = "f32"}) {
  return
}

// -----

// rudnn.align promises at least the 16 bytes a copy moves at once.
// expected-error @+1 {{'rudnn.align' of argument #0 must be a power of two of at least 16 bytes, got 8 : i64}}
func.func @align_8(%x: tensor<4xf32> {rudnn.align = 8 : i64}) {
  return
}

// -----

// ... and a power of two.
// expected-error @+1 {{'rudnn.align' of result #0 must be a power of two of at least 16 bytes, got 48 : i64}}
func.func @align_48(%x: tensor<4xf32>) -> (tensor<4xf32> {rudnn.align = 48 : i64}) {
  return %x : tensor<4xf32>
}

// -----

// rudnn.aligned_views is a unit attribute.
// expected-error @+1 {{'rudnn.aligned_views' must be a unit attribute}}
func.func @aligned_views() attributes {rudnn.aligned_views = 1 : i64} {
  return
}

// -----

// rudnn.aligned_outputs is a unit attribute.
// expected-error @+1 {{'rudnn.aligned_outputs' must be a unit attribute}}
func.func @aligned_outputs() attributes {rudnn.aligned_outputs = 1 : i64} {
  return
}
