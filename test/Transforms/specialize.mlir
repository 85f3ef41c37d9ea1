// RUN: rudnn-opt %s -split-input-file -rudnn-specialize | FileCheck %s

// Defaults describe an H200; K = V = 64 fits chunk 64; the scale becomes
// K^-0.5; B, T and H stay dynamic.
// CHECK: module attributes {rudnn.target = #rudnn.target<arch = "sm_90", lanes = 32, smem_per_block = 232448, sm_count = 132>}
// CHECK-LABEL: func.func @small_features
// CHECK: %[[O:.*]], %[[S:.*]] = rudnn.kda %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} chunk 64 scale 1.250000e-01 {policy = {{.*}}} : (tensor<?x?x?x64xf32>
// CHECK-SAME: -> (tensor<?x?x?x64xf32>, tensor<?x?x64x64xf32>)
// CHECK: return %[[O]], %[[S]]
func.func @small_features(%q: tensor<?x?x?x64xf32>, %k: tensor<?x?x?x64xf32>,
                          %v: tensor<?x?x?x64xf32>, %g: tensor<?x?x?x64xf32>,
                          %beta: tensor<?x?x?xf32>)
    -> (tensor<?x?x?x64xf32>, tensor<?x?x64x64xf32>) {
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta
      : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>,
         tensor<?x?x?x64xf32>, tensor<?x?x?xf32>)
      -> (tensor<?x?x?x64xf32>, tensor<?x?x64x64xf32>)
  return %o, %s : tensor<?x?x?x64xf32>, tensor<?x?x64x64xf32>
}

// -----

// K = V = 256 takes chunk 32 on sm_90, the largest at which both walks run
// on wgmma (at chunk 64 the forward's would need 234 KiB); scale 1/16.
// CHECK-LABEL: func.func @large_features
// CHECK: rudnn.kda {{.*}} chunk 32 scale 6.250000e-02 wgmma true {policy = {{.*}}} :
func.func @large_features(%q: tensor<?x?x?x256xbf16>, %k: tensor<?x?x?x256xbf16>,
                          %v: tensor<?x?x?x256xbf16>, %g: tensor<?x?x?x256xf32>,
                          %beta: tensor<?x?x?xbf16>) -> tensor<?x?x?x256xbf16> {
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta
      : (tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16>,
         tensor<?x?x?x256xf32>, tensor<?x?x?xbf16>)
      -> (tensor<?x?x?x256xbf16>, tensor<?x?x256x256xf32>)
  return %o : tensor<?x?x?x256xbf16>
}

// -----

// The production shape, bf16 K = V = 128: the op records why its chunk and
// walk are what they are.
// CHECK-LABEL: func.func @production_policy
// CHECK: rudnn.kda {{.*}} chunk 64 scale 0.0883883461 wgmma true {policy = "chunk 64: the largest of 64, 32 and 16 that fits (its largest block takes 132096 of 232448 bytes); every decay factor exp(G_i - G_r) with r <= i, at most 1: finite at any gate; the state walk on wgmma, the state in fp32 accumulators, a chunk's 64 tokens the rows of its m64n16 products; the walks a block per sequence and head for each 16 value columns (8 a head), the other kernels a block per chunk and head"} :
func.func @production_policy(%q: tensor<?x?x?x128xbf16>,
                             %g: tensor<?x?x?x128xf32>,
                             %beta: tensor<?x?x?xbf16>)
    -> tensor<?x?x?x128xbf16> {
  %o, %s = rudnn.kda %q, %q, %q, %g, %beta
      : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
         tensor<?x?x?x128xf32>, tensor<?x?x?xbf16>)
      -> (tensor<?x?x?x128xbf16>, tensor<?x?x128x128xf32>)
  return %o : tensor<?x?x?x128xbf16>
}

// -----

// A chunk and scale already on the op are kept; 16-bit inputs on sm_90
// walk on wgmma.
// CHECK-LABEL: func.func @explicit_parameters
// CHECK: rudnn.kda {{.*}} chunk 16 scale 3.000000e+00 wgmma true {policy = {{.*}}} :
func.func @explicit_parameters(%q: tensor<1x5x1x8xf16>, %k: tensor<1x5x1x8xf16>,
                               %v: tensor<1x5x1x8xf16>, %g: tensor<1x5x1x8xf32>,
                               %beta: tensor<1x5x1xf16>) -> tensor<1x5x1x8xf16> {
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta chunk 16 scale 3.0
      : (tensor<1x5x1x8xf16>, tensor<1x5x1x8xf16>, tensor<1x5x1x8xf16>,
         tensor<1x5x1x8xf32>, tensor<1x5x1xf16>)
      -> (tensor<1x5x1x8xf16>, tensor<1x1x8x8xf32>)
  return %o : tensor<1x5x1x8xf16>
}

// -----

// `wgmma false` on the op keeps the mma.sync walk.
// CHECK-LABEL: func.func @mma_sync_walk
// CHECK: rudnn.kda {{.*}} chunk 64 scale 3.000000e+00 wgmma false {policy = {{.*}}} :
func.func @mma_sync_walk(%q: tensor<1x5x1x8xbf16>, %g: tensor<1x5x1x8xf32>,
                         %beta: tensor<1x5x1xbf16>) -> tensor<1x5x1x8xbf16> {
  %o, %s = rudnn.kda %q, %q, %q, %g, %beta scale 3.0 wgmma false
      : (tensor<1x5x1x8xbf16>, tensor<1x5x1x8xbf16>, tensor<1x5x1x8xbf16>,
         tensor<1x5x1x8xf32>, tensor<1x5x1xbf16>)
      -> (tensor<1x5x1x8xbf16>, tensor<1x1x8x8xf32>)
  return %o : tensor<1x5x1x8xbf16>
}

// -----

// The backward is specialized the same way; K and V choose independently
// (K = 128, V = 32).
// CHECK-LABEL: func.func @backward
// CHECK: rudnn.kda_backward {{.*}} d_output %{{.*}} chunk 64 scale 0.0883883461 {policy = {{.*}}} :
func.func @backward(%q: tensor<?x?x?x128xf32>, %k: tensor<?x?x?x128xf32>,
                    %v: tensor<?x?x?x32xf32>, %g: tensor<?x?x?x128xf32>,
                    %beta: tensor<?x?x?xf32>, %do: tensor<?x?x?x32xf32>)
    -> tensor<?x?x?x128xf32> {
  %dq, %dk, %dv, %dg, %dbeta = rudnn.kda_backward %q, %k, %v, %g, %beta
      d_output %do
      : (tensor<?x?x?x128xf32>, tensor<?x?x?x128xf32>, tensor<?x?x?x32xf32>,
         tensor<?x?x?x128xf32>, tensor<?x?x?xf32>, tensor<?x?x?x32xf32>)
      -> (tensor<?x?x?x128xf32>, tensor<?x?x?x128xf32>, tensor<?x?x?x32xf32>,
          tensor<?x?x?x128xf32>, tensor<?x?x?xf32>)
  return %dq : tensor<?x?x?x128xf32>
}

// -----

// A 16-bit backward on sm_90 takes the reverse walk on wgmma; K = 256 at
// chunk 32 fits its shared memory.
// CHECK-LABEL: func.func @backward_wgmma
// CHECK: rudnn.kda_backward {{.*}} d_output %{{.*}} chunk 32 scale 6.250000e-02 wgmma true {policy = {{.*}}} :
func.func @backward_wgmma(%q: tensor<?x?x?x256xbf16>, %g: tensor<?x?x?x256xf32>,
                          %beta: tensor<?x?x?xbf16>, %do: tensor<?x?x?x256xbf16>)
    -> tensor<?x?x?x256xbf16> {
  %dq, %dk, %dv, %dg, %dbeta = rudnn.kda_backward %q, %q, %q, %g, %beta
      d_output %do
      : (tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16>,
         tensor<?x?x?x256xf32>, tensor<?x?x?xbf16>, tensor<?x?x?x256xbf16>)
      -> (tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16>,
          tensor<?x?x?x256xbf16>, tensor<?x?x?x256xf32>, tensor<?x?x?xbf16>)
  return %dq : tensor<?x?x?x256xbf16>
}

// -----

// An existing target is replaced by the one the options describe.
// CHECK: module attributes {rudnn.target = #rudnn.target<arch = "sm_90", lanes = 32, smem_per_block = 232448, sm_count = 132>}
// CHECK-LABEL: func.func @retarget
module attributes {rudnn.target = #rudnn.target<arch = "sm_80", lanes = 32,
                                                 smem_per_block = 166912,
                                                 sm_count = 108>} {
  func.func @retarget() {
    return
  }
}

// -----

// Saved tiles left open take the words the chosen chunk saves (K = 4, V = 5,
// f32, chunk 64), and the function returns the new type.
// CHECK-LABEL: func.func @saved_tiles
// CHECK-SAME: -> (tensor<?x?x?x5xf32>, tensor<?x?x?x4x5xf32>, tensor<?x?x?x{{[0-9]+}}xf32>)
// CHECK: %[[O:.*]], %{{.*}}, %[[SAVED:.*]]:2 = rudnn.kda {{.*}} chunk 64
// CHECK-SAME: -> (tensor<?x?x?x5xf32>, tensor<?x?x4x5xf32>, tensor<?x?x?x4x5xf32>, tensor<?x?x?x[[W:[0-9]+]]xf32>)
// CHECK: return %[[O]], %[[SAVED]]#0, %[[SAVED]]#1 : tensor<?x?x?x5xf32>, tensor<?x?x?x4x5xf32>, tensor<?x?x?x[[W]]xf32>
func.func @saved_tiles(%q: tensor<?x?x?x4xf32>, %v: tensor<?x?x?x5xf32>,
                       %beta: tensor<?x?x?xf32>)
    -> (tensor<?x?x?x5xf32>, tensor<?x?x?x4x5xf32>, tensor<?x?x?x?xf32>) {
  %o, %s, %b, %t = rudnn.kda %q, %q, %v, %q, %beta save_boundaries save_tiles
      : (tensor<?x?x?x4xf32>, tensor<?x?x?x4xf32>, tensor<?x?x?x5xf32>,
         tensor<?x?x?x4xf32>, tensor<?x?x?xf32>)
      -> (tensor<?x?x?x5xf32>, tensor<?x?x4x5xf32>, tensor<?x?x?x4x5xf32>,
          tensor<?x?x?x?xf32>)
  return %o, %b, %t : tensor<?x?x?x5xf32>, tensor<?x?x?x4x5xf32>, tensor<?x?x?x?xf32>
}
