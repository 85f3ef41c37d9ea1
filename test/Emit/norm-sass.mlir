// REQUIRES: sass
// RUN: rudnn-opt %s -rudnn-specialize="arch=sm_90" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report --rudnn-report-dims=N=16384 | FileCheck %s

// A pre-norm LayerNorm over bf16 rows of 4096: a block of 256 a row, the
// row in registers; x, the residual, y and h move 16 bytes an access
// (LDG.128, STG.128), gamma and beta too; nothing spilled, no stack.
// CHECK-LABEL: kernel norm_rows_layer_norm_bf16_c4096_t256_nc
// CHECK-NEXT: block: 256 threads; grid (16384, 1, 1) = 16384 blocks
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// CHECK: model: 384.0 MiB moved
// CHECK: global loads: {{.*}} 128-bit {{[1-9][0-9]*}}
// CHECK-NEXT: global stores: {{.*}} 128-bit {{[1-9][0-9]*}}
func.func @pre_norm(%x: tensor<?x4096xbf16>, %r: tensor<?x4096xbf16>,
                %g: tensor<4096xbf16>, %b: tensor<4096xbf16>)
    -> (tensor<?x4096xbf16>, tensor<?xf32>, tensor<?xf32>,
        tensor<?x4096xbf16>) {
  %y, %mean, %rstd, %h = rudnn.layer_norm %x residual %r gamma %g beta %b
      eps 1.0e-05
      : (tensor<?x4096xbf16>, tensor<?x4096xbf16>, tensor<4096xbf16>,
         tensor<4096xbf16>)
      -> (tensor<?x4096xbf16>, tensor<?xf32>, tensor<?xf32>,
          tensor<?x4096xbf16>)
  return %y, %mean, %rstd, %h
      : tensor<?x4096xbf16>, tensor<?xf32>, tensor<?xf32>, tensor<?x4096xbf16>
}

// f32 rows of 1000: a warp a row (4 a block), 8 float4 a lane.
// CHECK-LABEL: kernel norm_rows_rms_norm_f32_c1000_t32_r4_nc
// CHECK-NEXT: block: 128 threads; grid (4096, 1, 1) = 4096 blocks
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// CHECK: global loads: {{.*}} 128-bit {{[1-9][0-9]*}}
// CHECK-NEXT: global stores: {{.*}} 128-bit {{[1-9][0-9]*}}
func.func @warp(%x: tensor<?x1000xf32>) -> tensor<?x1000xf32> {
  %y, %rstd, %h = rudnn.rms_norm %x eps 1.0e-06
      : (tensor<?x1000xf32>)
      -> (tensor<?x1000xf32>, tensor<?xf32>, tensor<?x1000xf32>)
  return %y : tensor<?x1000xf32>
}

// Split rows of 2^20: 128 chunks of 8192 a row, each block's summary to
// the workspace, then every chunk merges the row's 128 and normalises;
// both kernels move 16 bytes an access, nothing spilled.
// CHECK-LABEL: kernel norm_partials_layer_norm_bf16_c1048576_t256_chunk8192_nc
// CHECK-NEXT: block: 256 threads; grid (2097152, 1, 1)
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// CHECK: global loads: {{.*}} 128-bit {{[1-9][0-9]*}}
// CHECK-LABEL: kernel norm_rows_layer_norm_bf16_c1048576_t256_chunk8192_nc
// CHECK-NEXT: block: 256 threads; grid (2097152, 1, 1)
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// CHECK: global loads: {{.*}} 128-bit {{[1-9][0-9]*}}
// CHECK-NEXT: global stores: {{.*}} 128-bit {{[1-9][0-9]*}}
func.func @split(%x: tensor<?x1048576xbf16>, %g: tensor<1048576xbf16>)
    -> tensor<?x1048576xbf16> {
  %y, %mean, %rstd, %h = rudnn.layer_norm %x gamma %g eps 1.0e-05
      : (tensor<?x1048576xbf16>, tensor<1048576xbf16>)
      -> (tensor<?x1048576xbf16>, tensor<?xf32>, tensor<?xf32>,
          tensor<?x1048576xbf16>)
  return %y : tensor<?x1048576xbf16>
}
