// rudnn-run --operators prints each operator's contract, the one statement
// the verifiers, the JIT API's checks and rudnn-run's inputs all read.
// RUN: rudnn-run --operators | FileCheck %s

// CHECK-LABEL: rudnn.kda: Kimi Delta Attention forward
// CHECK-NEXT: dims: B (batch), T (sequence length), H (heads), K (key and query features, static, 1 to 256), V (value features, static, 1 to 256), N (chunks, ceil(T / chunk))
// CHECK-NEXT: operands:
// CHECK-NEXT: q [B, T, H, K] f32, f16 or bf16: queries
// CHECK-NEXT: k [B, T, H, K] as 'q'
// CHECK:      initial_state [B, H, K, V] f32, optional
// CHECK-NEXT: a_log [H] f32, optional
// CHECK-NEXT: dt_bias [H, K] f32, optional
// CHECK-NEXT: results:
// CHECK-NEXT: output [B, T, H, V] as 'v'
// CHECK:      boundaries [N, B, H, K, V] as 'q', optional

// CHECK-LABEL: rudnn.kda_backward: Kimi Delta Attention backward
// CHECK:      d_output [B, T, H, V] as 'v'
// CHECK:      results:
// CHECK-NEXT: dq [B, T, H, K] as 'q'
// CHECK:      d_initial_state [B, H, K, V] f32, optional
