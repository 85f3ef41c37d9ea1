// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose | FileCheck %s
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose | rudnn-opt -split-input-file | FileCheck %s
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose -mlir-print-op-generic | rudnn-opt -split-input-file | FileCheck %s

// A KDA forward becomes the chunked-recurrence chain; B, T, H stay dynamic,
// so a rudnn.dim_switch on T keeps the one-token kernel for T = 1. The
// arguments get their contract names and layouts.
// CHECK-LABEL: func.func @chunked
// CHECK-SAME: (%[[Q:[^:]*]]: {{.*}} {rudnn.layout = "BTHK", rudnn.name = "q"}, %[[K:[^:]*]]: {{.*}}, %[[V:[^:]*]]: {{.*}}, %[[G:[^:]*]]: {{.*}}, %[[BETA:[^:]*]]: {{.*}}, %[[S0:[^:]*]]: {{.*}} {rudnn.layout = "BHKV", rudnn.name = "initial_state"})
// CHECK-SAME: -> (tensor<?x?x?x32xbf16> {rudnn.layout = "BTHV", rudnn.name = "output"}, tensor<?x?x64x32xf32> {rudnn.aliases = "initial_state", rudnn.layout = "BHKV", rudnn.name = "final_state"})
// CHECK: %[[R:.*]]:2 = rudnn.dim_switch %[[Q]][1] cases [1, 2]
// CHECK-NEXT: %[[RO:.*]], %[[RS:.*]] = rudnn.kda_recurrent %[[Q]], %[[K]], %[[V]], %[[G]], %[[BETA]] initial_state %[[S0]] chunk 64
// CHECK-NEXT: rudnn.yield %[[RO]], %[[RS]]
// CHECK-NEXT: }, {
// CHECK-NEXT: %[[GAMMA:.*]] = rudnn.chunk_decay %[[G]] chunk 64 : tensor<?x?x?x64xf32> -> tensor<?x?x?x64x64xf32>
// CHECK: %[[STRICT:.*]], %[[PAIRWISE:.*]] = rudnn.chunk_pairwise %[[Q]], %[[K]], %[[BETA]], %[[GAMMA]] chunk 64
// CHECK: %[[W:.*]], %[[U0:.*]] = rudnn.chunk_solve %[[STRICT]], %[[K]], %[[V]], %[[BETA]], %[[GAMMA]] chunk 64
// CHECK: %[[U:.*]], %[[BOUNDS:.*]], %[[FINAL:.*]] = rudnn.chunk_propagate %[[W]], %[[U0]], %[[K]], %[[GAMMA]] initial_state %[[S0]] chunk 64
// CHECK-SAME: -> tensor<?x?x?x64x32xf32>, tensor<?x?x?x64x32xbf16>, tensor<?x?x64x32xf32>
// CHECK: %[[O:.*]] = rudnn.chunk_output %[[Q]], %[[G]], %[[PAIRWISE]], %[[U]], %[[BOUNDS]] chunk 64 scale 1.250000e-01
// CHECK-SAME: -> tensor<?x?x?x32xbf16>
// CHECK-NEXT: rudnn.yield %[[O]], %[[FINAL]]
// CHECK-NOT: rudnn.kda {{.*}}:
// CHECK: return %[[R]]#0, %[[R]]#1
func.func @chunked(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>,
                   %v: tensor<?x?x?x32xbf16>, %g: tensor<?x?x?x64xf32>,
                   %beta: tensor<?x?x?xf32>, %s0: tensor<?x?x64x32xf32>)
    -> (tensor<?x?x?x32xbf16>, tensor<?x?x64x32xf32>) {
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta initial_state %s0
      : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x32xbf16>,
         tensor<?x?x?x64xf32>, tensor<?x?x?xf32>, tensor<?x?x64x32xf32>)
      -> (tensor<?x?x?x32xbf16>, tensor<?x?x64x32xf32>)
  return %o, %s : tensor<?x?x?x32xbf16>, tensor<?x?x64x32xf32>
}

// -----

// A static length fixes the chunk count N = ceil(130 / 64) = 3, and saved
// boundaries come straight from the propagation.
// CHECK-LABEL: func.func @static_length
// CHECK: rudnn.chunk_decay {{.*}} -> tensor<2x3x3x64x16xf32>
// CHECK: %{{.*}}, %[[BOUNDS:.*]], %{{.*}} = rudnn.chunk_propagate
// CHECK-SAME: tensor<3x2x3x16x16xf32>
// CHECK: return %[[BOUNDS]]
func.func @static_length(%q: tensor<2x130x3x16xf32>, %g: tensor<2x130x3x16xf32>,
                         %beta: tensor<2x130x3xf32>) -> tensor<3x2x3x16x16xf32> {
  %o, %s, %b = rudnn.kda %q, %q, %q, %g, %beta chunk 64 save_boundaries
      : (tensor<2x130x3x16xf32>, tensor<2x130x3x16xf32>, tensor<2x130x3x16xf32>,
         tensor<2x130x3x16xf32>, tensor<2x130x3xf32>)
      -> (tensor<2x130x3x16xf32>, tensor<2x3x16x16xf32>, tensor<3x2x3x16x16xf32>)
  return %b : tensor<3x2x3x16x16xf32>
}

// -----

// One token: the fused recurrent kernel instead of the chain.
// CHECK-LABEL: func.func @decode
// CHECK: %[[O:.*]], %[[S:.*]] = rudnn.kda_recurrent %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} initial_state %{{.*}} chunk 64 scale 1.250000e-01
// CHECK-NOT: rudnn.chunk_
// CHECK: return %[[O]], %[[S]]
func.func @decode(%q: tensor<?x1x?x64xf32>, %beta: tensor<?x1x?xf32>,
                  %s0: tensor<?x?x64x64xf32>)
    -> (tensor<?x1x?x64xf32>, tensor<?x?x64x64xf32>) {
  %o, %s = rudnn.kda %q, %q, %q, %q, %beta initial_state %s0
      : (tensor<?x1x?x64xf32>, tensor<?x1x?x64xf32>, tensor<?x1x?x64xf32>,
         tensor<?x1x?x64xf32>, tensor<?x1x?xf32>, tensor<?x?x64x64xf32>)
      -> (tensor<?x1x?x64xf32>, tensor<?x?x64x64xf32>)
  return %o, %s : tensor<?x1x?x64xf32>, tensor<?x?x64x64xf32>
}
