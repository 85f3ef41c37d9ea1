// REQUIRES: sass
// RUN: rudnn-opt %s -rudnn-specialize="arch=sm_90" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report --rudnn-report-dims=T=512,B=64 | FileCheck %s
// RUN: sed -e 's/bidirectional$/bidirectional allow_tf32 false/' %s | rudnn-opt -rudnn-specialize="arch=sm_90" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report --rudnn-report-dims=T=512,B=64 | FileCheck %s --check-prefix=EXACT
// RUN: sed -e 's/bidirectional$/bidirectional allow_tf32 false/' %s | rudnn-opt -rudnn-specialize="arch=sm_90 smem-per-block=101376" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report --rudnn-report-dims=T=512,B=64 | FileCheck %s --check-prefix=STREAMED

// A bidirectional f32 layer of H = 1024 at B = 64: too large for a
// persistent grid's shared memory, so one launch a step, 256 blocks of 8
// units. Each launch loads its block's 32 W_hh rows (128 KiB) into shared
// memory once, by cp.async (LDGSTS), for all the entries: nothing spilled.
// The step's model counts the rows once (step_fixed_bytes) and the two
// blocks each SM takes in turn. By default the rows meet the staged states
// on tensor cores in TF32 (HMMA; 16 entries a pass, 200 KiB with the
// states' tile): 13.5 us a step, at the TF32 peak. In exact fp32 (EXACT)
// the same rows run on FMA, 8 entries a pass: 18.5 us. Where 99 KiB a
// block cannot hold the rows (STREAMED), every pass of 8 reads them from
// L2 again, 8 times the bytes: 39.4 us a step. The input projection runs
// on wgmma in TF32 (HGMMA m64n128k8 from 128-byte fp32 rows copied by
// LDGSTS, the gates stored 16 bytes at a time, nothing spilled, no
// serialized wgmma), in exact fp32 on FMA.
// CHECK-LABEL: kernel lstm_projection_f32_i1024_h1024_d2_wgmma_tf32
// CHECK-NEXT: block: 256 threads; grid (256, 32, 2) = 16384 blocks
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// CHECK-NOT: compiler:
// CHECK: sass: {{.*}} tensor {{[1-9][0-9]*}}, ldmatrix 0, cp.async {{[1-9][0-9]*}}, {{.*}}(HGMMA {{[1-9][0-9]*}}, LDGSTS {{[1-9][0-9]*}})
// CHECK-NEXT: global loads:
// CHECK-NEXT: global stores: {{.*}}, 128-bit {{[1-9][0-9]*}}
// CHECK-NEXT: wgmma shapes: 64x128x8 {{[1-9][0-9]*}}
// EXACT-LABEL: kernel lstm_projection_f32_i1024_h1024_d2
// EXACT-NEXT: block: 128 threads
// EXACT: sass: {{.*}} tensor 0,
// CHECK-LABEL: kernel lstm_recurrence_f32_h1024_d2_u8_step_onchip_tf32
// CHECK-NEXT: block: 256 threads; grid (256, 1, 1) = 256 blocks, 1.94 waves; launched T times (512)
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// CHECK-NEXT: shared memory: 0 bytes static, 204800 dynamic
// CHECK-NEXT: resident blocks per SM: 1
// CHECK-NEXT: model: {{.*}} (serial-bound)
// CHECK-NEXT: serial: 1 step x 13.54 us (a block's L2 reads 5.77, compute 1.12, x 2 blocks an SM, launch 2.00) = 13.5 us
// CHECK-NEXT: sass: {{.*}} tensor {{[1-9][0-9]*}}, ldmatrix 0, cp.async {{[1-9][0-9]*}}, {{.*}}(HMMA {{[1-9][0-9]*}}, LDGSTS {{[1-9][0-9]*}})
// EXACT-LABEL: kernel lstm_recurrence_f32_h1024_d2_u8_step_onchip
// EXACT-NEXT: block: 256 threads; grid (256, 1, 1) = 256 blocks, 1.94 waves; launched T times (512)
// EXACT-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// EXACT-NEXT: shared memory: 0 bytes static, 164864 dynamic
// EXACT-NEXT: resident blocks per SM: 1
// EXACT-NEXT: model: {{.*}} (serial-bound)
// EXACT-NEXT: serial: 1 step x 18.53 us (a block's L2 reads 5.77, compute 8.26, x 2 blocks an SM, launch 2.00) = 18.5 us
// EXACT-NEXT: sass: {{.*}} tensor 0, ldmatrix 0, cp.async {{[1-9][0-9]*}}, {{.*}}(LDGSTS {{[1-9][0-9]*}})
// STREAMED-LABEL: kernel lstm_recurrence_f32_h1024_d2_u8_step_streamed
// STREAMED: shared memory: 0 bytes static, 33792 dynamic
// STREAMED: serial: 1 step x 39.39 us (a block's L2 reads 18.70, compute 8.26, x 2 blocks an SM, launch 2.00) = 39.4 us
func.func @wide(%x: tensor<?x?x1024xf32> {rudnn.name = "x"},
                %wi: tensor<4096x1024xf32> {rudnn.name = "weight_ih_l0"},
                %wh: tensor<4096x1024xf32> {rudnn.name = "weight_hh_l0"},
                %wir: tensor<4096x1024xf32> {rudnn.name = "weight_ih_l0_reverse"},
                %whr: tensor<4096x1024xf32> {rudnn.name = "weight_hh_l0_reverse"})
    -> (tensor<?x?x2048xf32>, tensor<2x?x1024xf32>, tensor<2x?x1024xf32>) {
  %out, %h_n, %c_n = rudnn.lstm %x weights(%wi, %wh, %wir, %whr) layers 1
      bidirectional
      : (tensor<?x?x1024xf32>, tensor<4096x1024xf32>, tensor<4096x1024xf32>,
         tensor<4096x1024xf32>, tensor<4096x1024xf32>)
      -> (tensor<?x?x2048xf32>, tensor<2x?x1024xf32>, tensor<2x?x1024xf32>)
  return %out, %h_n, %c_n
      : tensor<?x?x2048xf32>, tensor<2x?x1024xf32>, tensor<2x?x1024xf32>
}
