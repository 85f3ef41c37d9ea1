// RUN: not rudnn-opt %s 2>&1 | FileCheck %s

// A case may read only values defined before the switch: a name a case uses
// is never bound to a later case's value (whose failed parse would free it
// under the first case's use).
// CHECK: error: custom op 'rudnn.dim_switch' a rudnn.dim_switch case uses a value defined after it
func.func @f(%q: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = rudnn.dim_switch %q[1] cases [1, 2] : tensor<?x?xf32> -> tensor<?x?xf32> {
    rudnn.yield %later : tensor<?x?xf32>
  }, {
    %later = tensor.cast %q : tensor<?x?xf32> to tensor<?x?xf32>
    rudnn.yield %later : tensor<?x?xf32> garbage
  }
  return %r : tensor<?x?xf32>
}
