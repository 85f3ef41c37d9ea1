// RUN: rudnn-opt %s -split-input-file -rudnn-plan -verify-diagnostics

// Operator ops are decomposed before planning.
func.func @undecomposed(%q: tensor<?x?x?x8xf32>, %beta: tensor<?x?x?xf32>) {
  // expected-error @+1 {{must be decomposed first: run rudnn-decompose before rudnn-plan}}
  %o, %s = rudnn.kda %q, %q, %q, %q, %beta chunk 16 scale 0.5
      : (tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>,
         tensor<?x?x?x8xf32>, tensor<?x?x?xf32>)
      -> (tensor<?x?x?x8xf32>, tensor<?x?x8x8xf32>)
  return
}

// -----

// Kernels read their sizes by layout letters: primitives written by hand
// need `rudnn.layout` on the arguments (rudnn-decompose sets it).
// expected-error @+1 {{no argument is laid out with dim 'B', which a kernel needs (rudnn.layout)}}
func.func @no_layout(%q: tensor<?x1x?x8xf32>, %beta: tensor<?x1x?xf32>)
    -> tensor<?x1x?x8xf32> {
  %o, %s = rudnn.kda_recurrent %q, %q, %q, %q, %beta chunk 16 scale 0.5
      : (tensor<?x1x?x8xf32>, tensor<?x1x?x8xf32>, tensor<?x1x?x8xf32>,
         tensor<?x1x?x8xf32>, tensor<?x1x?xf32>)
      -> (tensor<?x1x?x8xf32>, tensor<?x?x8x8xf32>)
  return %o : tensor<?x1x?x8xf32>
}

// -----

// A plan holds primitives only: every other tensor is an argument.
func.func @made_state(%q: tensor<?x1x?x8xf32>, %beta: tensor<?x1x?xf32>,
                      %b: index) {
  // expected-error @+1 {{'tensor.empty' op is no primitive rudnn-plan can outline}}
  %s0 = tensor.empty(%b, %b) : tensor<?x?x8x8xf32>
  %o, %s = rudnn.kda_recurrent %q, %q, %q, %q, %beta initial_state %s0
      chunk 16 scale 0.5
      : (tensor<?x1x?x8xf32>, tensor<?x1x?x8xf32>, tensor<?x1x?x8xf32>,
         tensor<?x1x?x8xf32>, tensor<?x1x?xf32>, tensor<?x?x8x8xf32>)
      -> (tensor<?x1x?x8xf32>, tensor<?x?x8x8xf32>)
  return
}

// -----

// A plan computes its results: an argument returned as it is has no kernel.
// expected-error @+1 {{returns argument #0 itself; rudnn-plan plans computations}}
func.func @passthrough(%q: tensor<?x1x?x8xf32> {rudnn.layout = "BTHK"},
                       %beta: tensor<?x1x?xf32>)
    -> (tensor<?x1x?x8xf32>, tensor<?x1x?x8xf32>) {
  %o, %s = rudnn.kda_recurrent %q, %q, %q, %q, %beta chunk 16 scale 0.5
      : (tensor<?x1x?x8xf32>, tensor<?x1x?x8xf32>, tensor<?x1x?x8xf32>,
         tensor<?x1x?x8xf32>, tensor<?x1x?xf32>)
      -> (tensor<?x1x?x8xf32>, tensor<?x?x8x8xf32>)
  return %q, %o : tensor<?x1x?x8xf32>, tensor<?x1x?x8xf32>
}
