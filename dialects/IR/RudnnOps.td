//===- RudnnOps.td - rudnn's ops, one file per family ------*- tablegen -*-===//
//
// Operator ops are what users write, primitive ops what they decompose
// into, plan ops what rudnn-plan makes of them. Each family states its ops
// in its own file; this one includes them, one line a family.
//
//===----------------------------------------------------------------------===//

#ifndef RUDNN_OPS_TD
#define RUDNN_OPS_TD

include "dialects/IR/attention/RudnnAttentionOps.td"
include "dialects/IR/gru/RudnnGruOps.td"
include "dialects/IR/kda/RudnnKdaOps.td"
include "dialects/IR/kvcache/RudnnKvCacheOps.td"
include "dialects/IR/lstm/RudnnLstmOps.td"
include "dialects/IR/norm/RudnnNormOps.td"
include "dialects/IR/RudnnPlanOps.td"

#endif // RUDNN_OPS_TD
