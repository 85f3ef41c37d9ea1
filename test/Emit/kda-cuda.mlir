// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-to-cuda -split-input-file | FileCheck %s

// A static length: the chunked chain emits two kernels on sm_90 (prepare,
// keeping the decayed queries, and the wgmma walk forming the outputs too),
// each one translation unit calling its device-library building block with
// every specialization a constant, its signature built from the bindings
// in the order the block asks for them. Kernels that read no gate or beta
// are named with the input type there (one kernel serves every pair).
// CHECK: ----- kernel [[PREPARE:kda_fwd_prepare_bf16_f32_f32_k128_v64_c64_qd]]
// CHECK-NEXT: // Kimi Delta Attention forward: prepare.
// CHECK-NEXT: #include "rudnn/kda.cuh"
// CHECK: extern "C" __global__ void [[PREPARE]](
// CHECK-NEXT: const __nv_bfloat16 *q,
// CHECK-NEXT: const __nv_bfloat16 *k,
// CHECK-NEXT: const __nv_bfloat16 *v,
// CHECK-NEXT: const float *g,
// CHECK: float *workspace,
// CHECK-NEXT: long long q_b,
// CHECK: int batch,
// CHECK-NEXT: int length,
// CHECK-NEXT: int heads,
// CHECK-NEXT: float scale,
// CHECK-NEXT: int qk_heads) {
// CHECK: const rudnn::kda::ForwardParams<__nv_bfloat16, float, float> p = {
// CHECK: rudnn::kda::prepare<128, 64, 64, rudnn::kda::Keep::Queries>(p);
// CHECK: ----- kernel [[WALK:kda_fwd_propagate_output_bf16_bf16_bf16_k128_v64_c64_wgmma]]
// CHECK: static_assert(sizeof(rudnn::kda::WgmmaWalkOutputShared<128, 64, __nv_bfloat16>) == 131072);
// CHECK: extern "C" __global__ void [[WALK]](
// No boundaries are kept: the walk itself reads its states.
// CHECK-NOT: boundaries
// CHECK: __nv_bfloat16 *output,
// W, Kd and Qd come by TMA: the workspace as rows of K = 128 bf16.
// CHECK: const __grid_constant__ rudnn::arch::TensorMap workspace_rows) {
// CHECK: rudnn::kda::propagate<128, 64, 64, 16, true, true, true>(p, &workspace_rows);
// CHECK-NOT: ----- kernel
func.func @chunked(%q: tensor<?x100x?x128xbf16>, %v: tensor<?x100x?x64xbf16>,
                   %g: tensor<?x100x?x128xf32>, %beta: tensor<?x100x?xf32>)
    -> tensor<?x100x?x64xbf16> {
  %o, %s = rudnn.kda %q, %q, %v, %g, %beta
      : (tensor<?x100x?x128xbf16>, tensor<?x100x?x128xbf16>,
         tensor<?x100x?x64xbf16>, tensor<?x100x?x128xf32>, tensor<?x100x?xf32>)
      -> (tensor<?x100x?x64xbf16>, tensor<?x?x128x64xf32>)
  return %o : tensor<?x100x?x64xbf16>
}

// -----

// One token: the recurrent kernel alone, with 32 value columns a block.
// CHECK: ----- kernel kda_fwd_recurrent_f16_f16_f16_k16_v8_c64
// CHECK: rudnn::kda::recurrent<16, 8, 64, 32>(p);
// CHECK-NOT: ----- kernel
func.func @decode(%q: tensor<?x1x?x16xf16>, %v: tensor<?x1x?x8xf16>,
                  %beta: tensor<?x1x?xf16>) -> tensor<?x1x?x8xf16> {
  %o, %s = rudnn.kda %q, %q, %v, %q, %beta
      : (tensor<?x1x?x16xf16>, tensor<?x1x?x16xf16>, tensor<?x1x?x8xf16>,
         tensor<?x1x?x16xf16>, tensor<?x1x?xf16>)
      -> (tensor<?x1x?x8xf16>, tensor<?x?x16x8xf32>)
  return %o : tensor<?x1x?x8xf16>
}
