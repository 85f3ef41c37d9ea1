//===- kda/forward.cuh - Kimi Delta Attention forward, chunked ------------===//
//
// Per (batch, head) the sequence is cut into chunks of C tokens. Within a
// chunk, with Γ the inclusive cumulative sum of g and S0 the state at the
// chunk start, the delta rule unrolls to
//   (I + A) U = β ⊙ (V − (K ⊙ e^Γ) S0),
//   O = scale ((Q ⊙ e^Γ) S0 + B U),
//   S_end = diag(e^Γ_last) S0 + (K ⊙ e^(Γ_last − Γ))ᵀ U,
//   A_ij = β_i Σ_d k_id k_jd e^(Γ_id − Γ_jd),
//   B_ij = Σ_d q_id k_jd e^(Γ_id − Γ_jd),
// with A strictly and B non-strictly lower triangular. Every exponent is
// Γ_i − Γ_j with j ≤ i, never positive since g ≤ 0: nothing overflows, for
// g as low as −20 per step (factoring e^Γ_i · e^−Γ_j would overflow).
//
// Writing U = U0 − W S0 with W = (I+A)⁻¹ β(K ⊙ e^Γ), U0 = (I+A)⁻¹ βV splits
// the work into three kernels: `prepare` (chunk-parallel: Γ, A, B, the
// inverse of the unit lower-triangular I + A and the products by it),
// `propagate` (sequential over chunks, parallel over batch, heads and blocks of
// V: the states), and `output` (chunk-parallel). `recurrent` runs the
// recurrence token by token, for decode (T = 1).
//
// Every matrix product is a tile::mma_accumulate: tensor cores for 16-bit
// inputs (operands rounded to the input type, fp32 accumulation), FMA for
// f32 inputs, one code path for both.
//
//===----------------------------------------------------------------------===//

#pragma once

#include "rudnn/kda/chunk.cuh"
#include "rudnn/kda/output.cuh"
#include "rudnn/kda/prepare.cuh"
#include "rudnn/kda/propagate.cuh"
#include "rudnn/kda/recurrent.cuh"
