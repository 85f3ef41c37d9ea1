// RUN: not rudnn-opt %s 2>&1 | FileCheck %s

// A case may read only values defined before the switch: a name a case uses
// is never bound to a later case's value (whose failed parse would free it
// under the first case's use). Such a forward reference is refused before
// parsing, as every forward reference is.
// CHECK: error: '%later' is used before it is defined: rudnn does not parse forward references
func.func @f(%q: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = rudnn.dim_switch %q[1] cases [1, 2] : tensor<?x?xf32> -> tensor<?x?xf32> {
    rudnn.yield %later : tensor<?x?xf32>
  }, {
    %later = tensor.cast %q : tensor<?x?xf32> to tensor<?x?xf32>
    rudnn.yield %later : tensor<?x?xf32> garbage
  }
  return %r : tensor<?x?xf32>
}
