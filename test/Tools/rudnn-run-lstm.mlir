// The LSTM example runs and checks against the float64 reference: out and
// both final states. A packed, batch-first LSTM without an initial state
// (this file's own function) draws its lengths in [0, T], a length of 0
// leaving the entry's state at zero and its output 0.
//
// RUN: rm -rf %t.kernels
// RUN: rudnn-run %rudnn_src_root/examples/lstm.mlir --backend emulation --random 0 --dims T=6,B=3 --check --cache-dir %t.kernels | FileCheck %s --check-prefix=EXAMPLE
// EXAMPLE: result out: f32[6, 3, 96]
// EXAMPLE-NEXT: result h_n: f32[4, 3, 48]
// EXAMPLE-NEXT: result c_n: f32[4, 3, 48]
// EXAMPLE: check out: relative error {{.*}} ok
// EXAMPLE-NEXT: check h_n: relative error {{.*}} ok
// EXAMPLE-NEXT: check c_n: relative error {{.*}} ok
// EXAMPLE: compiles: 3
//
// RUN: rudnn-run %s --backend emulation --random 1 --dims B=6,T=5 --check --cache-dir %t.kernels | FileCheck %s --check-prefix=PACKED
// PACKED: result out: f32[6, 5, 14]
// PACKED: check out: relative error {{.*}} ok
// PACKED-NEXT: check h_n: relative error {{.*}} ok
func.func @main(%x: tensor<?x?x5xf32> {rudnn.name = "x"},
                %lengths: tensor<?xi32> {rudnn.name = "lengths"},
                %wi: tensor<28x5xf32> {rudnn.name = "weight_ih_l0"},
                %wh: tensor<28x7xf32> {rudnn.name = "weight_hh_l0"},
                %wir: tensor<28x5xf32> {rudnn.name = "weight_ih_l0_reverse"},
                %whr: tensor<28x7xf32> {rudnn.name = "weight_hh_l0_reverse"})
    -> (tensor<?x?x14xf32> {rudnn.name = "out"},
        tensor<2x?x7xf32> {rudnn.name = "h_n"}) {
  %out, %h_n, %c_n = rudnn.lstm %x lengths %lengths
      weights(%wi, %wh, %wir, %whr) layers 1 bidirectional batch_first
      : (tensor<?x?x5xf32>, tensor<?xi32>, tensor<28x5xf32>,
         tensor<28x7xf32>, tensor<28x5xf32>, tensor<28x7xf32>)
      -> (tensor<?x?x14xf32>, tensor<2x?x7xf32>, tensor<2x?x7xf32>)
  return %out, %h_n : tensor<?x?x14xf32>, tensor<2x?x7xf32>
}
