// REQUIRES: sass
// RUN: rudnn-opt %S/kda-kernel-report.mlir -rudnn-specialize="arch=sm_90" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report | FileCheck %s --check-prefix=FORWARD
// RUN: rudnn-opt %S/kda-backward-kernel-report.mlir -rudnn-specialize="arch=sm_90" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report | FileCheck %s --check-prefix=BACKWARD

// The global loads of every chunked bf16 KDA kernel at K = V = 128 whose
// views promise 16-byte aligned rows (rudnn.align = 16): the 16-bit tensors
// arrive by cp.async alone. What 16-bit loads remain are β, one scalar per
// token outside the main loops, and in `gradients` v's element at an odd
// last column. The f32 gate's rows arrive by cp.async too, Γ summed in
// shared memory: the few 32-bit loads left are the element-by-element
// copy of a view whose rows turn out unaligned (g promises nothing). (The
// decode kernel, a token at a time, is not tiled.)
// prepare: q, k and v by TMA (UTMALDG), g by cp.async.
// FORWARD-LABEL: kernel kda_fwd_prepare_bf16_f32_bf16_k128_v128_c64_a16_qd_tma
// FORWARD: sass: {{[0-9]+}} instructions; tensor {{[1-9][0-9]*}}, ldmatrix {{[1-9][0-9]*}}, cp.async {{[1-9][0-9]*}}, tma {{[1-9][0-9]*}}; {{.*}}UTMALDG {{[1-9][0-9]*}})
// FORWARD-NEXT: global loads: 8-bit 0, 16-bit 1, 32-bit {{[0-4]}},
// The walk forming the outputs: HGMMA, no ldmatrix; W, Kd and Qd by TMA
// (UTMALDG), U0, e^Γlast and the pairwise matrix by cp.async.
// FORWARD-LABEL: kernel kda_fwd_propagate_output_bf16_bf16_bf16_k128_v128_c64_wgmma
// FORWARD: sass: {{[0-9]+}} instructions; tensor {{[1-9][0-9]*}}, ldmatrix 0, cp.async {{[1-9][0-9]*}}, tma {{[1-9][0-9]*}}; {{.*}}(HGMMA {{[1-9][0-9]*}}, LDGSTS {{[1-9][0-9]*}}, UTMALDG {{[1-9][0-9]*}})
// FORWARD-NEXT: global loads: 8-bit 0, 16-bit 0,
// FORWARD-NOT: ----- kernel

// BACKWARD-LABEL: kernel kda_bwd_prepare_restore_bf16_f32_bf16_k128_v128_c64_a16_tma
// BACKWARD: sass: {{[0-9]+}} instructions; tensor {{[1-9][0-9]*}}, ldmatrix {{[1-9][0-9]*}}, cp.async {{[1-9][0-9]*}}, tma {{[1-9][0-9]*}}; {{.*}}UTMALDG {{[1-9][0-9]*}})
// BACKWARD-NEXT: global loads: 8-bit 0, 16-bit 1,
// The reverse walk: HGMMA, no ldmatrix; Kd, Qd and W by TMA, the pairwise
// matrix and e^Γlast by cp.async, and dO's rows a chunk ahead in 16-byte
// vectors (two: the compiler peels the first chunk's).
// BACKWARD-LABEL: kernel kda_bwd_state_gradient_bf16_bf16_bf16_k128_v128_c64_a16_wgmma
// BACKWARD: sass: {{[0-9]+}} instructions; tensor {{[1-9][0-9]*}}, ldmatrix 0, cp.async {{[1-9][0-9]*}}, tma {{[1-9][0-9]*}}; {{.*}}(HGMMA {{[1-9][0-9]*}}, LDGSTS {{[1-9][0-9]*}}, UTMALDG {{[1-9][0-9]*}})
// BACKWARD-NEXT: global loads: 8-bit 0, 16-bit 0, 32-bit 0, 64-bit 0, 128-bit {{[1-9]}}
// BACKWARD-LABEL: kernel kda_bwd_gradients_bf16_f32_bf16_k128_v128_c64_a16
// BACKWARD: sass: {{[0-9]+}} instructions; tensor {{[1-9][0-9]*}}, ldmatrix {{[1-9][0-9]*}}, cp.async {{[1-9][0-9]*}}
// BACKWARD-NEXT: global loads: 8-bit 0, 16-bit {{[0-5]}},
