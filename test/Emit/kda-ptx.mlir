// RUN: rudnn-opt %s -rudnn-specialize="arch=sm_90" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-to-ptx | FileCheck %s
// RUN: rudnn-opt %s -rudnn-specialize="arch=sm_80 smem-per-block=166912" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-to-ptx | FileCheck %s --check-prefix=SM80

// NVRTC compiles every kernel of the module's target: the decode kernel for
// T = 1 and the chunked ones; the state walk, on wgmma and forming the
// outputs too, for sm_90a.
// CHECK: ----- kernel kda_fwd_recurrent_bf16_f32_bf16_k128_v128_c64 (sm_90)
// CHECK: .target sm_90
// CHECK: .entry kda_fwd_recurrent_bf16_f32_bf16_k128_v128_c64(
// CHECK: .entry kda_fwd_prepare_bf16_f32_bf16_k128_v128_c64_qd(
// CHECK: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// CHECK: ----- kernel kda_fwd_propagate_output_bf16_bf16_bf16_k128_v128_c64_wgmma (sm_90a)
// CHECK: .target sm_90a
// CHECK: .entry kda_fwd_propagate_output_bf16_bf16_bf16_k128_v128_c64_wgmma(
// The state's products: U = U0 − W·S with both K-major, then Kdᵀ·U with Kd
// MN-major, the output's Qd·S and B·U K-major.
// CHECK: wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 0, 0;
// CHECK: wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 1, 0;
// CHECK: wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 0, 0;
// CHECK-NOT: ----- kernel
// SM80: .target sm_80
func.func @main(%q: tensor<?x?x?x128xbf16>, %g: tensor<?x?x?x128xf32>,
                %beta: tensor<?x?x?xbf16>) -> tensor<?x?x?x128xbf16> {
  %o, %s = rudnn.kda %q, %q, %q, %g, %beta
      : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
         tensor<?x?x?x128xf32>, tensor<?x?x?xbf16>)
      -> (tensor<?x?x?x128xbf16>, tensor<?x?x128x128xf32>)
  return %o : tensor<?x?x?x128xbf16>
}
