// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose | FileCheck %s
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-to-cuda | FileCheck %s --check-prefix=CUDA

// Views promising 16-byte aligned rows: the primitives are marked, and the
// kernels copying views are compiled for them (_a16, Alignment::Aligned);
// the walk copies none and keeps its name (the mma.sync chain here, `wgmma
// false`: the wgmma walk forms the outputs itself).
// CHECK-LABEL: func.func @aligned
// CHECK: rudnn.chunk_solve {{.*}} {rudnn.aligned_views}
// CHECK: rudnn.chunk_output {{.*}} {rudnn.aligned_views}
// CUDA-LABEL: __global__ void kda_fwd_prepare_bf16_f32_bf16_k64_v64_c64_a16(
// CUDA: rudnn::kda::prepare<64, 64, 64, rudnn::kda::Keep::Tiles, rudnn::tile::Alignment::Aligned>(p);
// CUDA-LABEL: __global__ void kda_fwd_propagate_bf16_bf16_bf16_k64_v64_c64(
// CUDA-LABEL: __global__ void kda_fwd_output_bf16_f32_bf16_k64_v64_c64_a16(
// CUDA: rudnn::kda::output<64, 64, 64, rudnn::tile::Alignment::Aligned>(p);
func.func @aligned(%q: tensor<2x128x4x64xbf16> {rudnn.align = 16 : i64},
                   %g: tensor<2x128x4x64xf32>, %beta: tensor<2x128x4xbf16>)
    -> tensor<2x128x4x64xbf16> {
  %o, %s = rudnn.kda %q, %q, %q, %g, %beta wgmma false
      : (tensor<2x128x4x64xbf16>, tensor<2x128x4x64xbf16>,
         tensor<2x128x4x64xbf16>, tensor<2x128x4x64xf32>,
         tensor<2x128x4xbf16>)
      -> (tensor<2x128x4x64xbf16>, tensor<2x4x64x64xf32>)
  return %o : tensor<2x128x4x64xbf16>
}

// -----

// One view without the promise (v) keeps every kernel general.
// CHECK-LABEL: func.func @mixed
// CHECK-NOT: rudnn.aligned_views
// CUDA-LABEL: __global__ void kda_fwd_prepare_bf16_f32_bf16_k64_v64_c64(
// CUDA: rudnn::kda::prepare<64, 64, 64>(p);
func.func @mixed(%q: tensor<2x128x4x64xbf16> {rudnn.align = 16 : i64},
                 %v: tensor<2x128x4x64xbf16>,
                 %g: tensor<2x128x4x64xf32>, %beta: tensor<2x128x4xbf16>)
    -> tensor<2x128x4x64xbf16> {
  %o, %s = rudnn.kda %q, %q, %v, %g, %beta wgmma false
      : (tensor<2x128x4x64xbf16>, tensor<2x128x4x64xbf16>,
         tensor<2x128x4x64xbf16>, tensor<2x128x4x64xf32>,
         tensor<2x128x4xbf16>)
      -> (tensor<2x128x4x64xbf16>, tensor<2x4x64x64xf32>)
  return %o : tensor<2x128x4x64xbf16>
}
