// RUN: rudnn-opt %s -rudnn-specialize="arch=sm_90" -rudnn-decompose -rudnn-plan | rudnn-translate --rudnn-kernel-report --rudnn-report-dims=B=1,T=32768,H=16 | FileCheck %s
// RUN: rudnn-opt %s -rudnn-specialize="arch=sm_90" -rudnn-decompose -rudnn-plan | rudnn-opt | FileCheck %s --check-prefix=PLAN

// The plan carries the gradients kernel's two kinds of exponentials per
// chunk of a head, through a print and parse.
// PLAN: rudnn.kernel @kda_bwd_gradients_bf16_f32_bf16_k128_v128_c64_a16 {{.*}} exponentials <constant = 223360, {{.*}}> polynomial_exponentials <constant = 69632, params = ["N", "B", "H"], divisor = 1>

// The kernel report of the production-shape backward given the forward's
// boundaries, its views promising 16-byte aligned rows. Its workspace: the
// chunk tiles (57856 bytes), the decayed queries and (I + A)⁻¹ (24576) and
// the reverse walk's dS at the chunk's end and dU (49152) per chunk of 64
// tokens per head, 2056 bytes per token per head; with the 512 of the saved
// boundaries a training step holds 2568.
// CHECK: // plan @main at B=1,T=32768,H=16: workspace 1077936128 bytes (2056.0 per token per head)
// CHECK: // ----- kernel kda_bwd_prepare_restore_bf16_f32_bf16_k128_v128_c64_a16_tma
// CHECK-NEXT: block: 128 threads
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded
// The reverse walk on sm_90a keeps dS in wgmma accumulators: two stages of
// the chunk's operands in 128-byte swizzled column blocks (2 x 58368
// bytes), the staged dS, two of dO and −dU (10240), and 1024 of alignment
// slack; nothing spilled.
// CHECK: // ----- kernel kda_bwd_state_gradient_bf16_bf16_bf16_k128_v128_c64_a16_wgmma
// CHECK-NEXT: block: 128 threads
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded
// CHECK-NEXT: shared memory: 0 bytes static, 128000 dynamic
// 512 chunks a block: each chunk's critical path has two block barriers
// and 8 + 4 dependent wgmma (dU through Kd·dS, Bᵀ·dO beside it; then dS
// through Wᵀ·dU, Qdᵀ·dO beside it in accumulators of its own), under its
// 67584 bytes at an SM's share of L2 (dS at the chunk's end and dU leave
// in bf16).
// CHECK: model: {{.*}} (serial-bound)
// CHECK-NEXT: serial: 512 steps x 0.93 us (a block's L2 reads 0.93, compute 0.12, latency 0.28 of 2 block barriers and 12 dependent mma) = 476.4 us
// CHECK-NEXT: {{sass: [0-9]+ instructions; tensor [1-9][0-9]*, ldmatrix 0, cp.async [1-9][0-9]*.*\(HGMMA [1-9][0-9]*|sass: unavailable}}
// The input gradients: every operand by cp.async into shared tiles, every
// fp32 intermediate in 113408 bytes of dynamic shared memory (each phase's
// operands where the last phase's were), two blocks of eight warps an SM,
// products on tensor cores through ldmatrix, nothing spilled and no local
// arrays; dg written once (each feature step's reverse cumulative sum by
// shuffles), 2370 MiB in all: its bytes bound it. Its exponentials come
// close, 292992 per chunk of a head: the pairwise kk (88064, as
// prepare's), then per 16 x 8 tile the decays along its rows and its
// columns (each shared by the two matrices that meet them) and e^Γ,
// e^(Γlast − Γ) of each element (204800), and e^Γlast (128); the decays
// along the columns within each 16-token block (69632) are polynomials on
// the FP32 pipes, the rest special-function unit instructions.
// CHECK: // ----- kernel kda_bwd_gradients_bf16_f32_bf16_k128_v128_c64_a16
// CHECK-NEXT: block: 256 threads; grid (512, 16, 1) = 8192 blocks
// CHECK-NEXT: registers: {{[1-9][0-9]*}} per thread; spills: 0 bytes stored, 0 loaded; stack: 0 bytes
// CHECK-NEXT: shared memory: 0 bytes static, 113408 dynamic
// CHECK-NEXT: resident blocks per SM: 2
// CHECK-NEXT: model: 2370.0 MiB moved, {{[0-9.]+}} GFLOP, {{[0-9.]+}} FLOP/B; roofline 517.7 us (memory-bound)
// CHECK-NEXT: exponentials: 1829.8 M, 469.2 us at 3.9 T/s; 570.4 M more by polynomial on the FP32 pipes, 187.3 us;
// CHECK-NEXT: in turn (no overlap):
// CHECK-NEXT: {{sass: [0-9]+ instructions; tensor [1-9][0-9]*, ldmatrix [1-9][0-9]*, cp.async [1-9][0-9]*|sass: unavailable}}
func.func @main(%q: tensor<?x?x?x128xbf16> {rudnn.align = 16 : i64},
                %g: tensor<?x?x?x128xf32>,
                %beta: tensor<?x?x?xbf16>, %b: tensor<?x?x?x128x128xbf16>,
                %do: tensor<?x?x?x128xbf16> {rudnn.align = 16 : i64})
    -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
        tensor<?x?x?x128xbf16>, tensor<?x?x?x128xf32>, tensor<?x?x?xbf16>) {
  %dq, %dk, %dv, %dg, %db = rudnn.kda_backward %q, %q, %q, %g, %beta
      boundaries %b d_output %do chunk 64
      : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
         tensor<?x?x?x128xbf16>, tensor<?x?x?x128xf32>, tensor<?x?x?xbf16>,
         tensor<?x?x?x128x128xbf16>, tensor<?x?x?x128xbf16>)
      -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
          tensor<?x?x?x128xbf16>, tensor<?x?x?x128xf32>, tensor<?x?x?xbf16>)
  return %dq, %dk, %dv, %dg, %db
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
        tensor<?x?x?x128xbf16>, tensor<?x?x?x128xf32>, tensor<?x?x?xbf16>
}
