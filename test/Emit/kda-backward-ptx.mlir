// RUN: rudnn-opt %s -rudnn-specialize="arch=sm_90" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-to-ptx | FileCheck %s
// RUN: sed -e 's/chunk 64$/chunk 64 wgmma false/' %s | rudnn-opt -rudnn-specialize="arch=sm_90" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-to-ptx | FileCheck %s --check-prefix=SYNC

// With bf16 inputs every kernel of the backward, prepare fused with the
// restore from saved boundaries, compiles for sm_90 with its products on
// tensor cores.
// The chunk-parallel kernels are on the tile layer: operands by cp.async,
// fragments by ldmatrix (.trans for the transposed ones).
// CHECK-LABEL: ----- kernel kda_bwd_prepare_restore_bf16_f32_bf16_k128_v128_c64 (sm_90)
// CHECK: .entry kda_bwd_prepare_restore_bf16_f32_bf16_k128_v128_c64(
// CHECK-DAG: cp.async.cg.shared.global
// CHECK-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// CHECK-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// The reverse walk keeps dS in wgmma accumulators (sm_90a): B, Qd and W
// read MN-major (the transpose bit of A set), Kd K-major, the staged
// operands K-major; Kd, Qd and W by TMA, dO's rows in 16-byte vectors.
// CHECK-LABEL: ----- kernel kda_bwd_state_gradient_bf16_bf16_bf16_k128_v128_c64_wgmma (sm_90a)
// CHECK-DAG: cp.async.cg.shared.global
// CHECK-DAG: cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes
// CHECK-DAG: ld.global.v4.u32
// CHECK-DAG: wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 1, 0;
// CHECK-DAG: wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {{.*}}, p, 1, 1, 0, 0;
// CHECK-DAG: wgmma.commit_group.sync.aligned
// CHECK-NOT: mma.sync.aligned
// `wgmma false` keeps it on the tile layer, dS in mma.sync accumulators.
// SYNC-LABEL: ----- kernel kda_bwd_state_gradient_bf16_bf16_bf16_k128_v128_c64 (sm_90)
// SYNC-DAG: cp.async.cg.shared.global
// SYNC-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// SYNC-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// SYNC-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
// SYNC-NOT: wgmma
// The input gradients too: (I + A)⁻ᵀ through ldmatrix .trans, the rest
// through plain ldmatrix.
// CHECK-LABEL: ----- kernel kda_bwd_gradients_bf16_f32_bf16_k128_v128_c64 (sm_90)
// CHECK: .entry kda_bwd_gradients_bf16_f32_bf16_k128_v128_c64(
// CHECK-DAG: cp.async.cg.shared.global
// CHECK-DAG: ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16
// CHECK-DAG: ldmatrix.sync.aligned.m8n8.x4.shared.b16
// CHECK-DAG: mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32
func.func @main(%q: tensor<?x?x?x128xbf16>, %g: tensor<?x?x?x128xf32>,
                %beta: tensor<?x?x?xbf16>, %b: tensor<?x?x?x128x128xbf16>,
                %do: tensor<?x?x?x128xbf16>)
    -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xf32>) {
  %dq, %dk, %dv, %dg, %db = rudnn.kda_backward %q, %q, %q, %g, %beta
      boundaries %b d_output %do chunk 64
      : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
         tensor<?x?x?x128xbf16>, tensor<?x?x?x128xf32>, tensor<?x?x?xbf16>,
         tensor<?x?x?x128x128xbf16>, tensor<?x?x?x128xbf16>)
      -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
          tensor<?x?x?x128xbf16>, tensor<?x?x?x128xf32>, tensor<?x?x?xbf16>)
  return %dq, %dg : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xf32>
}
