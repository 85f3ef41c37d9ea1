// A function compiled ahead of time (rudnn-translate --rudnn-to-bundle) and
// run in another process by rudnn-bundle-run, which links librudnn_runtime
// alone: the results equal the JIT's (rudnn-run, checked against float64).
// RUN: rm -rf %t && mkdir -p %t
// RUN: rudnn-translate %s --rudnn-to-bundle --rudnn-bundle-targets=emulation,sm_90 -o %t/norm.bundle
// RUN: rudnn-run %s --backend emulation --random 2 --dims N=21 --check --cache-dir "" --save-inputs %t/in --outputs %t/jit | FileCheck %s --check-prefix=JIT
// RUN: rudnn-bundle-run %t/norm.bundle --backend emulation --inputs %t/in --outputs %t/aot | FileCheck %s --check-prefix=AOT
// RUN: cmp %t/jit/y.npy %t/aot/y.npy
// RUN: cmp %t/jit/mean.npy %t/aot/mean.npy
// RUN: ldd %rudnn_tools_dir/rudnn-bundle-run | FileCheck %s --check-prefix=LINKS --implicit-check-not=libLLVM --implicit-check-not=libMLIR --implicit-check-not=librudnn.so --implicit-check-not=nvrtc
// JIT: check y: relative error {{.*}} ok
// AOT: bundle {{.*}}norm.bundle: function main on emulation
// AOT: result y: f32[21, 48]
// AOT: result mean: f32[21]
// LINKS: librudnn_runtime.so

// Only sm_90 kept: emulation has nothing to run, and says so.
// RUN: rudnn-translate %s --rudnn-to-bundle --rudnn-bundle-targets=sm_90 -o %t/gpu.bundle
// RUN: not rudnn-bundle-run %t/gpu.bundle --backend emulation --inputs %t/in 2>&1 | FileCheck %s --check-prefix=UNFIT
// UNFIT: rudnn-bundle-run: Unsupported: bundle '{{.*}}gpu.bundle' holds sm_90, not emulation

// A damaged bundle is refused.
// RUN: sed 's/"checksum":"./"checksum":"x/' %t/norm.bundle > %t/bad.bundle
// RUN: not rudnn-bundle-run %t/bad.bundle --backend emulation --inputs %t/in 2>&1 | FileCheck %s --check-prefix=DAMAGED
// DAMAGED: rudnn-bundle-run: InvalidArgument: bundle '{{.*}}bad.bundle': damaged: its checksum does not match its content

func.func @main(%x: tensor<?x48xf32> {rudnn.name = "x"},
                %gamma: tensor<48xf32> {rudnn.name = "gamma"},
                %beta: tensor<48xf32> {rudnn.name = "beta"})
    -> (tensor<?x48xf32> {rudnn.name = "y"}, tensor<?xf32> {rudnn.name = "mean"}) {
  %y, %mean, %rstd, %h = rudnn.layer_norm %x gamma %gamma beta %beta eps 1.0e-05
      : (tensor<?x48xf32>, tensor<48xf32>, tensor<48xf32>)
      -> (tensor<?x48xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?x48xf32>)
  return %y, %mean : tensor<?x48xf32>, tensor<?xf32>
}
