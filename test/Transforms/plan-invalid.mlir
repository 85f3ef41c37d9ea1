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

// One KDA forward per function.
// expected-error @+1 {{rudnn-plan handles one KDA forward per function, found 2}}
func.func @two(%q: tensor<?x1x?x8xf32>, %beta: tensor<?x1x?xf32>) {
  %o, %s = rudnn.kda_recurrent %q, %q, %q, %q, %beta chunk 16 scale 0.5
      : (tensor<?x1x?x8xf32>, tensor<?x1x?x8xf32>, tensor<?x1x?x8xf32>,
         tensor<?x1x?x8xf32>, tensor<?x1x?xf32>)
      -> (tensor<?x1x?x8xf32>, tensor<?x?x8x8xf32>)
  %o2, %s2 = rudnn.kda_recurrent %q, %q, %q, %q, %beta chunk 16 scale 0.5
      : (tensor<?x1x?x8xf32>, tensor<?x1x?x8xf32>, tensor<?x1x?x8xf32>,
         tensor<?x1x?x8xf32>, tensor<?x1x?xf32>)
      -> (tensor<?x1x?x8xf32>, tensor<?x?x8x8xf32>)
  return
}

// -----

// Every tensor a plan binds is an argument of the function.
func.func @made_state(%q: tensor<?x1x?x8xf32>, %beta: tensor<?x1x?xf32>,
                      %b: index) {
  %s0 = tensor.empty(%b, %b) : tensor<?x?x8x8xf32>
  // expected-error @-3 {{plan inputs must be function arguments}}
  %o, %s = rudnn.kda_recurrent %q, %q, %q, %q, %beta initial_state %s0
      chunk 16 scale 0.5
      : (tensor<?x1x?x8xf32>, tensor<?x1x?x8xf32>, tensor<?x1x?x8xf32>,
         tensor<?x1x?x8xf32>, tensor<?x1x?xf32>, tensor<?x?x8x8xf32>)
      -> (tensor<?x1x?x8xf32>, tensor<?x?x8x8xf32>)
  return
}
