// RUN: not rudnn-translate --rudnn-to-cuda %s 2>&1 | FileCheck %s

// Operator ops must be decomposed before emission.
// CHECK: error: cannot emit an operator op: run rudnn-specialize and rudnn-decompose first
func.func @main(%q: tensor<?x?x?x8xf32>, %beta: tensor<?x?x?xf32>) {
  %o, %s = rudnn.kda %q, %q, %q, %q, %beta
      : (tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>,
         tensor<?x?x?x8xf32>, tensor<?x?x?xf32>)
      -> (tensor<?x?x?x8xf32>, tensor<?x?x8x8xf32>)
  return
}

// -----

// Primitives are emitted as the kernels rudnn-plan outlines.
// RUN: not rudnn-translate --rudnn-to-cuda -split-input-file %s 2>&1 | FileCheck %s --check-prefix=UNPLANNED
// UNPLANNED: error: cannot emit a primitive outside a kernel: run rudnn-plan first
func.func @unplanned(%g: tensor<?x?x?x8xf32>) -> tensor<?x?x?x16x8xf32> {
  %gamma = rudnn.chunk_decay %g chunk 16
      : tensor<?x?x?x8xf32> -> tensor<?x?x?x16x8xf32>
  return %gamma : tensor<?x?x?x16x8xf32>
}
