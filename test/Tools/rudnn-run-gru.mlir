// rudnn.gru runs and checks against the float64 reference (torch.nn.GRU's
// semantics: gates r, z, n, b_hn inside the reset product): the example;
// two
// bidirectional f32 layers over packed sequences with h0 and biases,
// every result including what it saves for the backward; then one bf16
// layer, batch first, without biases or h0, one launch a step.
//
// RUN: rm -rf %t.kernels
// RUN: rudnn-run %rudnn_src_root/examples/gru.mlir --backend emulation --random 0 --dims T=5,B=3 --check --cache-dir %t.kernels | FileCheck %s --check-prefix=EXAMPLE
// EXAMPLE: result out: f32[5, 3, 96]
// EXAMPLE-NEXT: result h_n: f32[4, 3, 48]
// EXAMPLE: check out: relative error {{.*}} ok
// EXAMPLE-NEXT: check h_n: relative error {{.*}} ok
// RUN: rudnn-run %s --entry stack --backend emulation --random 3 --dims T=6,B=3 --check --cache-dir %t.kernels | FileCheck %s --check-prefix=STACK
// STACK: result out: f32[6, 3, 14]
// STACK-NEXT: result h_n: f32[4, 3, 7]
// STACK-NEXT: result hidden: f32[2, 6, 3, 14]
// STACK-NEXT: result gates: f32[4, 6, 3, 28]
// STACK: check out: relative error {{.*}} ok
// STACK-NEXT: check h_n: relative error {{.*}} ok
// STACK-NEXT: check hidden: relative error {{.*}} ok
// STACK-NEXT: check gates: relative error {{.*}} ok
//
// RUN: rudnn-run %s --entry per_step --backend emulation --random 4 --dims B=5,T=4 --check --cache-dir %t.kernels | FileCheck %s --check-prefix=STEP
// STEP: result out: bf16[5, 4, 9]
// STEP: check out: relative error {{.*}} ok
// STEP-NEXT: check h_n: relative error {{.*}} ok
func.func @stack(%x: tensor<?x?x5xf32> {rudnn.name = "x"},
              %h0: tensor<4x?x7xf32> {rudnn.name = "h0"},
              %lengths: tensor<?xi32> {rudnn.name = "lengths"},
              %weight_ih_l0: tensor<21x5xf32> {rudnn.name = "weight_ih_l0"},
              %weight_hh_l0: tensor<21x7xf32> {rudnn.name = "weight_hh_l0"},
              %bias_ih_l0: tensor<21xf32> {rudnn.name = "bias_ih_l0"},
              %bias_hh_l0: tensor<21xf32> {rudnn.name = "bias_hh_l0"},
              %weight_ih_l0_reverse: tensor<21x5xf32> {rudnn.name = "weight_ih_l0_reverse"},
              %weight_hh_l0_reverse: tensor<21x7xf32> {rudnn.name = "weight_hh_l0_reverse"},
              %bias_ih_l0_reverse: tensor<21xf32> {rudnn.name = "bias_ih_l0_reverse"},
              %bias_hh_l0_reverse: tensor<21xf32> {rudnn.name = "bias_hh_l0_reverse"},
              %weight_ih_l1: tensor<21x14xf32> {rudnn.name = "weight_ih_l1"},
              %weight_hh_l1: tensor<21x7xf32> {rudnn.name = "weight_hh_l1"},
              %bias_ih_l1: tensor<21xf32> {rudnn.name = "bias_ih_l1"},
              %bias_hh_l1: tensor<21xf32> {rudnn.name = "bias_hh_l1"},
              %weight_ih_l1_reverse: tensor<21x14xf32> {rudnn.name = "weight_ih_l1_reverse"},
              %weight_hh_l1_reverse: tensor<21x7xf32> {rudnn.name = "weight_hh_l1_reverse"},
              %bias_ih_l1_reverse: tensor<21xf32> {rudnn.name = "bias_ih_l1_reverse"},
              %bias_hh_l1_reverse: tensor<21xf32> {rudnn.name = "bias_hh_l1_reverse"})
    -> (tensor<?x?x14xf32> {rudnn.name = "out"},
        tensor<4x?x7xf32> {rudnn.name = "h_n"},
        tensor<2x?x?x14xf32> {rudnn.name = "hidden"},
        tensor<4x?x?x28xf32> {rudnn.name = "gates"}) {
  %out, %h_n, %saved:2 = rudnn.gru %x h0 %h0 lengths %lengths
      weights(%weight_ih_l0, %weight_hh_l0, %bias_ih_l0, %bias_hh_l0, %weight_ih_l0_reverse, %weight_hh_l0_reverse, %bias_ih_l0_reverse, %bias_hh_l0_reverse, %weight_ih_l1, %weight_hh_l1, %bias_ih_l1, %bias_hh_l1, %weight_ih_l1_reverse, %weight_hh_l1_reverse, %bias_ih_l1_reverse, %bias_hh_l1_reverse)
      layers 2 bidirectional save_states
      : (tensor<?x?x5xf32>, tensor<4x?x7xf32>, tensor<?xi32>, tensor<21x5xf32>, tensor<21x7xf32>, tensor<21xf32>, tensor<21xf32>, tensor<21x5xf32>, tensor<21x7xf32>, tensor<21xf32>, tensor<21xf32>, tensor<21x14xf32>, tensor<21x7xf32>, tensor<21xf32>, tensor<21xf32>, tensor<21x14xf32>, tensor<21x7xf32>, tensor<21xf32>, tensor<21xf32>)
      -> (tensor<?x?x14xf32>, tensor<4x?x7xf32>, tensor<2x?x?x14xf32>, tensor<4x?x?x28xf32>)
  return %out, %h_n, %saved#0, %saved#1 : tensor<?x?x14xf32>, tensor<4x?x7xf32>, tensor<2x?x?x14xf32>, tensor<4x?x?x28xf32>
}

func.func @per_step(%x: tensor<?x?x6xbf16> {rudnn.name = "x"},
                    %wi: tensor<27x6xbf16> {rudnn.name = "weight_ih_l0"},
                    %wh: tensor<27x9xbf16> {rudnn.name = "weight_hh_l0"})
    -> (tensor<?x?x9xbf16> {rudnn.name = "out"},
        tensor<1x?x9xbf16> {rudnn.name = "h_n"}) {
  %out, %h_n = rudnn.gru %x weights(%wi, %wh) layers 1 batch_first per_step true
      : (tensor<?x?x6xbf16>, tensor<27x6xbf16>, tensor<27x9xbf16>)
      -> (tensor<?x?x9xbf16>, tensor<1x?x9xbf16>)
  return %out, %h_n : tensor<?x?x9xbf16>, tensor<1x?x9xbf16>
}
