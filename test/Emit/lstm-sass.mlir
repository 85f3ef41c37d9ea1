// REQUIRES: sass
// RUN: rudnn-opt %s -rudnn-specialize="arch=sm_90" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report --rudnn-report-dims=T=512,B=8 | FileCheck %s
// RUN: rudnn-opt %s -rudnn-specialize="arch=sm_90 smem-per-block=101376" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report --rudnn-report-dims=T=512,B=8 | FileCheck %s --check-prefix=MMA

// A bf16 layer of H = 512. The projection on wgmma (sm_90a): the 32 row
// tiles of T·B = 4096 rows (128 each, one a block) by 16 gate tiles of 128,
// both operands through cp.async (LDGSTS) into 128-byte swizzled tiles
// that wgmma reads (HGMMA, m64n128k16), the gates stored 16 bytes at a
// time; nothing spilled, no serialized wgmma (no compiler note). Its model
// is bound by the tiles re-read through L2, 128 MiB, twice the 64 x 64
// tiles' 256 MiB on mma.sync (HMMA through ldmatrix, LDSM) where shared
// memory is too small for wgmma's five stages (MMA). The
// recurrence: 64 blocks of 8 units, one an SM, each keeping its 32 W_hh
// rows (32 KiB) in a swizzled tile, filled once by cp.async, and meeting
// the staged hidden states on tensor cores through ldmatrix; nothing
// spilled, no stack. Its 512 steps bound it, not its bytes: each stages
// every entry's hidden state from L2 (the layer's bf16 outputs of the step
// before, by cp.async: 8 KiB a block at B = 8) and meets the others at a
// grid barrier.
// CHECK-LABEL: kernel lstm_projection_bf16_i512_h512_d1_wgmma
// CHECK-NEXT: block: 256 threads; grid (32, 16, 1) = 512 blocks
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// CHECK-NEXT: shared memory: 512 bytes static, 164864 dynamic
// CHECK-NEXT: resident blocks per SM: 1
// CHECK-NEXT: model: 36.0 MiB moved, 8.59 GFLOP, {{.*}} (L2-bound)
// CHECK-NEXT: shared operands: 195.0 MiB
// CHECK-NEXT: L2 operand tiles: 128.0 MiB
// CHECK-NOT: compiler:
// CHECK-NEXT: sass: {{[0-9]+}} instructions; tensor {{[1-9][0-9]*}}, ldmatrix 0, cp.async {{[1-9][0-9]*}}, tma 0; {{.*}} (HGMMA {{[1-9][0-9]*}}, LDGSTS {{[1-9][0-9]*}})
// CHECK-NEXT: global loads:
// CHECK-NEXT: global stores: {{.*}}, 128-bit {{[1-9][0-9]*}}
// CHECK-NEXT: wgmma shapes: 64x128x16 {{[1-9][0-9]*}}
// MMA-LABEL: kernel lstm_projection_bf16_i512_h512_d1
// MMA-NEXT: block: 128 threads; grid (64, 32, 1) = 2048 blocks
// MMA-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// MMA: L2 operand tiles: 256.0 MiB
// MMA-NEXT: sass: {{[0-9]+}} instructions; tensor {{[1-9][0-9]*}}, ldmatrix {{[1-9][0-9]*}}, cp.async {{[1-9][0-9]*}}, tma 0; {{.*}} (HMMA {{[1-9][0-9]*}}, LDGSTS {{[1-9][0-9]*}}, LDSM {{[1-9][0-9]*}})
// CHECK-LABEL: kernel lstm_recurrence_bf16_h512_d1_u8_onchip
// CHECK-NEXT: block: 256 threads; grid (64, 1, 1) = 64 blocks
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// CHECK-NEXT: shared memory: 0 bytes static, 57344 dynamic
// CHECK-NEXT: resident blocks per SM:
// CHECK-NEXT: model: 36.0 MiB moved, 8.59 GFLOP, {{.*}} (serial-bound)
// CHECK-NEXT: serial: 512 steps x 1.14 us (a block's L2 reads 0.14, compute 0.03, grid barrier 1.00) = 584.9 us
// CHECK-NEXT: sass: {{[0-9]+}} instructions; tensor {{[1-9][0-9]*}}, ldmatrix {{[1-9][0-9]*}}, cp.async {{[1-9][0-9]*}}, tma 0; {{.*}} (HMMA {{[1-9][0-9]*}}, LDGSTS {{[1-9][0-9]*}}, LDSM {{[1-9][0-9]*}})
func.func @layer(%x: tensor<?x?x512xbf16> {rudnn.name = "x"},
                 %wi: tensor<2048x512xbf16> {rudnn.name = "weight_ih_l0"},
                 %wh: tensor<2048x512xbf16> {rudnn.name = "weight_hh_l0"},
                 %bi: tensor<2048xbf16> {rudnn.name = "bias_ih_l0"},
                 %bh: tensor<2048xbf16> {rudnn.name = "bias_hh_l0"})
    -> (tensor<?x?x512xbf16>, tensor<1x?x512xbf16>, tensor<1x?x512xbf16>) {
  %out, %h_n, %c_n = rudnn.lstm %x weights(%wi, %wh, %bi, %bh) layers 1
      : (tensor<?x?x512xbf16>, tensor<2048x512xbf16>, tensor<2048x512xbf16>,
         tensor<2048xbf16>, tensor<2048xbf16>)
      -> (tensor<?x?x512xbf16>, tensor<1x?x512xbf16>, tensor<1x?x512xbf16>)
  return %out, %h_n, %c_n
      : tensor<?x?x512xbf16>, tensor<1x?x512xbf16>, tensor<1x?x512xbf16>
}
