// RUN: rudnn-opt %s -rudnn-decompose -verify-diagnostics

// Decomposition needs the parameters rudnn-specialize chooses.
func.func @unspecialized(%q: tensor<?x?x?x8xf32>, %beta: tensor<?x?x?xf32>) {
  // expected-error @+1 {{needs its chunk and scale: run rudnn-specialize before rudnn-decompose}}
  %o, %s = rudnn.kda %q, %q, %q, %q, %beta
      : (tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>,
         tensor<?x?x?x8xf32>, tensor<?x?x?xf32>)
      -> (tensor<?x?x?x8xf32>, tensor<?x?x8x8xf32>)
  return
}
