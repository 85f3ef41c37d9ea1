// RUN: rudnn-opt %s -split-input-file -rudnn-specialize | FileCheck %s --check-prefix=SPECIALIZE
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose | FileCheck %s --check-prefix=DECOMPOSE
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose | rudnn-opt -split-input-file | FileCheck %s --check-prefix=DECOMPOSE
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose -rudnn-plan | FileCheck %s --check-prefix=PLAN

// Rows of 1000 fit a warp (32 elements a lane): a warp a row, 4 rows a
// block, one kernel; the grid counts blocks of 4 rows. h, which nothing
// returns, gets no memory (a null pointer).
// SPECIALIZE-LABEL: func.func @warp
// SPECIALIZE: rudnn.layer_norm {{.*}} threads 32 rows_per_block 4 {policy = "rows of 1000: a warp a row, 4 rows a block, the row in registers"}
// DECOMPOSE-LABEL: func.func @warp
// DECOMPOSE-SAME: %[[X:[^:]*]]: tensor<?x1000xf32>
// DECOMPOSE-SAME: %[[G:[^:]*]]: tensor<1000xf32>
// DECOMPOSE-SAME: %[[B:[^:]*]]: tensor<1000xf32>
// DECOMPOSE: %[[Y:[^,]*]], %[[MEAN:[^,]*]], %[[RSTD:[^,]*]], %{{.*}} = rudnn.norm_rows %[[X]] gamma %[[G]] beta %[[B]] kind "layer_norm" eps {{.*}} threads 32 rows_per_block 4
// DECOMPOSE: return %[[Y]], %[[MEAN]], %[[RSTD]]
// PLAN-LABEL: rudnn.plan @warp params ["row_groups", "N", "x_stride0", "y_stride0"] sources [#rudnn.dim<buffer = "x", index = 0, divisor = 4>
// PLAN: rudnn.kernel @[[K:norm_rows_layer_norm_f32_c1000_t32_r4_nc]] threads 128 memory_bytes <constant = 8000, params = ["N"], divisor = 1>
// PLAN: rudnn.launch @[[K]] grid [#rudnn.size<constant = 1, params = ["row_groups"], divisor = 1>
// PLAN-SAME: args [@x, 0, @gamma, @beta, @y, 0, @mean, @rstd, 0,
func.func @warp(%x: tensor<?x1000xf32>, %g: tensor<1000xf32>,
                %b: tensor<1000xf32>)
    -> (tensor<?x1000xf32>, tensor<?xf32>, tensor<?xf32>) {
  %y, %mean, %rstd, %h = rudnn.layer_norm %x gamma %g beta %b eps 1.0e-05
      : (tensor<?x1000xf32>, tensor<1000xf32>, tensor<1000xf32>)
      -> (tensor<?x1000xf32>, tensor<?xf32>, tensor<?xf32>,
          tensor<?x1000xf32>)
  return %y, %mean, %rstd : tensor<?x1000xf32>, tensor<?xf32>, tensor<?xf32>
}

// -----

// A pre-norm block's RMSNorm over [M, N, 4096] bf16: a block of 256 a row
// (16 elements a thread), the grid (N, M); y and h = x + residual
// returned, rstd not (null).
// SPECIALIZE-LABEL: func.func @block
// SPECIALIZE: rudnn.rms_norm {{.*}} threads 256 {policy = "rows of 4096: a block of 256 threads a row, the row in registers"}
// DECOMPOSE-LABEL: func.func @block
// DECOMPOSE: %[[Y:[^,]*]], %{{.*}}, %{{.*}}, %[[H:[^ ]*]] = rudnn.norm_rows %{{.*}} residual %{{.*}} gamma %{{.*}} kind "rms_norm" eps {{.*}} threads 256 {
// DECOMPOSE: return %[[Y]], %[[H]]
// PLAN-LABEL: rudnn.plan @block
// PLAN: rudnn.kernel @[[K:norm_rows_rms_norm_bf16_c4096_t256_mnc]] threads 256
// PLAN: rudnn.launch @[[K]] grid [#rudnn.size<constant = 1, params = ["N"], divisor = 1>, #rudnn.size<constant = 1, params = ["M"], divisor = 1>
// PLAN-SAME: args [@x, @residual, @gamma, 0, @y, @h, 0, 0, 0,
func.func @block(%x: tensor<?x?x4096xbf16>, %r: tensor<?x?x4096xbf16>,
                 %g: tensor<4096xbf16>)
    -> (tensor<?x?x4096xbf16>, tensor<?x?x4096xbf16>) {
  %y, %rstd, %h = rudnn.rms_norm %x residual %r gamma %g eps 1.0e-06
      : (tensor<?x?x4096xbf16>, tensor<?x?x4096xbf16>, tensor<4096xbf16>)
      -> (tensor<?x?x4096xbf16>, tensor<?x?xf32>, tensor<?x?x4096xbf16>)
  return %y, %h : tensor<?x?x4096xbf16>, tensor<?x?x4096xbf16>
}

// -----

// Rows of 65536 are split into 8 chunks of 8192 (a block of 256 each):
// every chunk's summary goes to the workspace ([N, 8, 3] f32), then each
// chunk's block merges the row's 8 and, for moments, chunk 0 writes them.
// SPECIALIZE-LABEL: func.func @split
// SPECIALIZE: rudnn.moments {{.*}} threads 256 chunk 8192 {policy = "rows of 65536: split into 8 chunks of 8192, a block each; their moments merged by every chunk"}
// DECOMPOSE-LABEL: func.func @split
// DECOMPOSE: %[[P:[^ ]*]] = rudnn.norm_partials %{{.*}} kind "moments" chunk 8192 threads 256 : (tensor<?x65536xf32>) -> tensor<?x8x3xf32>
// DECOMPOSE: %{{.*}}, %[[MEAN:[^,]*]], %[[VAR:[^,]*]], %{{.*}} = rudnn.norm_rows %{{.*}} partials %[[P]] kind "moments" {{.*}} threads 256 chunk 8192
// DECOMPOSE: return %[[MEAN]], %[[VAR]]
// PLAN-LABEL: rudnn.plan @split
// PLAN: rudnn.buffer @norm_partials "workspace" bytes <constant = 96, params = ["N"], divisor = 1>
// PLAN: rudnn.kernel @[[P:norm_partials_moments_f32_c65536_t256_chunk8192_nc]] threads 256
// PLAN: rudnn.launch @[[P]] grid [#rudnn.size<constant = 8, params = ["N"], divisor = 1>
// PLAN-SAME: args [@x, 0, 0, 0, 0, 0, 0, 0, @norm_partials,
// PLAN: rudnn.kernel @[[R:norm_rows_moments_f32_c65536_t256_chunk8192_nc]] threads 256
// PLAN: rudnn.launch @[[R]] grid [#rudnn.size<constant = 8, params = ["N"], divisor = 1>
// PLAN-SAME: args [@x, 0, 0, 0, 0, 0, @mean, @var, @norm_partials,
func.func @split(%x: tensor<?x65536xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %mean, %var = rudnn.moments %x
      : (tensor<?x65536xf32>) -> (tensor<?xf32>, tensor<?xf32>)
  return %mean, %var : tensor<?xf32>, tensor<?xf32>
}
