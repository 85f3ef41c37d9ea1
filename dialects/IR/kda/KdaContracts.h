//===- KdaContracts.h - The contracts of the KDA operators ------*- C++ -*-===//

#ifndef RUDNN_DIALECTS_IR_KDA_KDACONTRACTS_H
#define RUDNN_DIALECTS_IR_KDA_KDACONTRACTS_H

#include "dialects/IR/OperatorContract.h"

namespace rudnn {

/// Each contract comes in two forms: q, k and v with H heads alike, or
/// (`grouped`, GVA) q and k with Q heads, each shared by H / Q value heads.

/// Largest feature dimension (K or V) of a KDA operator.
inline constexpr int64_t kKdaMaxFeatureDim = 256;

/// rudnn.kda: q, k, v, g, beta, initial_state -> output, final_state,
/// boundaries.
const OperatorContract &kdaContract(bool grouped = false);

/// rudnn.kda_backward: the forward's operands, boundaries, d_output,
/// d_final_state -> dq, dk, dv, dg, dbeta, d_initial_state.
const OperatorContract &kdaBackwardContract(bool grouped = false);

/// rudnn.kda_varlen: q, k, v, g, beta [1, T, H, *] holding packed
/// sequences, cu_seqlens, initial_state [S, H, K, V] -> output,
/// final_state.
const OperatorContract &kdaVarlenContract(bool grouped = false);

/// rudnn.kda_varlen_backward: the forward's operands, d_output,
/// d_final_state -> dq, dk, dv, dg, dbeta, d_initial_state.
const OperatorContract &kdaVarlenBackwardContract(bool grouped = false);

/// rudnn.kda_decode: q, k, v, g, beta [B, T, H, *], state_pool [P, H, K,
/// V], slots [B] -> output, state_pool (updated), status.
const OperatorContract &kdaDecodeContract(bool grouped = false);

} // namespace rudnn

#endif // RUDNN_DIALECTS_IR_KDA_KDACONTRACTS_H
