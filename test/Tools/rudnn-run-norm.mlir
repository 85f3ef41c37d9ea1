// The normalisation examples run and check against the float64 reference;
// rows of 777 features take scalar accesses, rows of 1000 and 4096 16-byte
// ones. This file's own function normalises x + residual in bf16 over
// [M, N, 40000]: rows split into chunks, their moments merged.
//
// RUN: rm -rf %t.kernels
// RUN: rudnn-run %rudnn_src_root/examples/layer_norm.mlir --backend emulation --random 0 --dims N=37 --check --cache-dir %t.kernels | FileCheck %s --check-prefix=LAYER
// LAYER: result y: f32[37, 1000]
// LAYER-NEXT: result mean: f32[37]
// LAYER-NEXT: result rstd: f32[37]
// LAYER: check y: relative error {{.*}} ok
// LAYER-NEXT: check mean: relative error {{.*}} ok
// LAYER-NEXT: check rstd: relative error {{.*}} ok
// LAYER: compiles: 1
//
// RUN: rudnn-run %rudnn_src_root/examples/rms_norm.mlir --backend emulation --random 1 --dims N=5 --check --cache-dir %t.kernels | FileCheck %s --check-prefix=RMS
// RMS: result y: f32[5, 4096]
// RMS: check y: relative error {{.*}} ok
// RMS-NEXT: check rstd: relative error {{.*}} ok
//
// RUN: rudnn-run %rudnn_src_root/examples/moments.mlir --backend emulation --random 2 --dims N=9 --check --cache-dir %t.kernels | FileCheck %s --check-prefix=MOMENTS
// MOMENTS: result mean: f32[9]
// MOMENTS-NEXT: result var: f32[9]
// MOMENTS: check mean: relative error {{.*}} ok
// MOMENTS-NEXT: check var: relative error {{.*}} ok
//
// RUN: rudnn-run %s --backend emulation --random 3 --dims M=2,N=2 --check --cache-dir %t.kernels | FileCheck %s --check-prefix=SPLIT
// SPLIT: result y: bf16[2, 2, 40000]
// SPLIT: check y: relative error {{.*}} ok
// SPLIT-NEXT: check rstd: relative error {{.*}} ok
// SPLIT-NEXT: check h: relative error {{.*}} ok
// SPLIT: compiles: 2
func.func @main(%x: tensor<?x?x40000xbf16> {rudnn.name = "x"},
                %r: tensor<?x?x40000xbf16> {rudnn.name = "residual"},
                %gamma: tensor<40000xbf16> {rudnn.name = "gamma"})
    -> (tensor<?x?x40000xbf16> {rudnn.name = "y"},
        tensor<?x?xf32> {rudnn.name = "rstd"},
        tensor<?x?x40000xbf16> {rudnn.name = "h"}) {
  %y, %rstd, %h = rudnn.rms_norm %x residual %r gamma %gamma eps 1.0e-06
      : (tensor<?x?x40000xbf16>, tensor<?x?x40000xbf16>, tensor<40000xbf16>)
      -> (tensor<?x?x40000xbf16>, tensor<?x?xf32>, tensor<?x?x40000xbf16>)
  return %y, %rstd, %h
      : tensor<?x?x40000xbf16>, tensor<?x?xf32>, tensor<?x?x40000xbf16>
}
