// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose | FileCheck %s --check-prefix=DECOMPOSE
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose -rudnn-plan | FileCheck %s --check-prefix=PLAN

// The backward decomposes into the row terms and the key and query
// gradients, each a kernel: the row terms [B, H, T] live in the plan's
// workspace; the key gradients run over (key tiles, B·G) and sum each
// group's query heads in the block, the query gradients over (query tiles,
// B·H). The scale defaults to D^-0.5.
// DECOMPOSE-LABEL: func.func @gradients
// DECOMPOSE-SAME: %[[Q:[^:]*]]: tensor<?x?x?x64xbf16>
// DECOMPOSE-SAME: %[[K:[^:]*]]: tensor<?x?x?x64xbf16>
// DECOMPOSE-SAME: %[[V:[^:]*]]: tensor<?x?x?x32xbf16>
// DECOMPOSE-SAME: %[[L:[^:]*]]: tensor<?xi32>
// DECOMPOSE-SAME: %[[O:[^:]*]]: tensor<?x?x?x32xbf16>
// DECOMPOSE-SAME: %[[LSE:[^:]*]]: tensor<?x?x?xf32>
// DECOMPOSE-SAME: %[[DO:[^:]*]]: tensor<?x?x?x32xbf16>
// DECOMPOSE: %[[T:.*]] = rudnn.attention_row_terms %[[O]], %[[DO]]
// DECOMPOSE: %[[DK:.*]], %[[DV:.*]] = rudnn.attention_key_gradients %[[Q]], %[[K]], %[[V]] key_lengths %[[L]] lse %[[LSE]] terms %[[T]] gradient %[[DO]] causal window (16, 0) softcap 3.000000e+01 scale 1.250000e-01
// DECOMPOSE: %[[DQ:.*]] = rudnn.attention_query_gradients %[[Q]], %[[K]], %[[V]] key_lengths %[[L]] lse %[[LSE]] terms %[[T]] gradient %[[DO]] causal window (16, 0) softcap 3.000000e+01 scale 1.250000e-01
// DECOMPOSE: return %[[DQ]], %[[DK]], %[[DV]]
// PLAN-LABEL: rudnn.plan @gradients
// PLAN: rudnn.buffer @terms "workspace" bytes <constant = 4, params = ["B", "H", "T"], divisor = 1>
// PLAN: rudnn.kernel @[[TERMS:attention_bwd_terms_bf16_e32]] threads 128
// PLAN: rudnn.launch @[[TERMS]] grid [#rudnn.size<constant = 1, params = ["query_quads"], divisor = 1>, #rudnn.size<constant = 1, params = ["B", "H"], divisor = 1>
// PLAN: rudnn.kernel @[[KEYS:attention_bwd_keys_bf16_d64_e32_causal_window16_0]] threads 128 shared_bytes 36864
// PLAN: rudnn.launch @[[KEYS]] grid [#rudnn.size<constant = 1, params = ["key_tiles"], divisor = 1>, #rudnn.size<constant = 1, params = ["B", "G"], divisor = 1>
// PLAN-SAME: args [@q, @k, @v, @key_lengths, 0, 0, @lse, @d_output, @terms, 0, @dk, @dv,
// PLAN: rudnn.kernel @[[QUERIES:attention_bwd_queries_bf16_d64_e32_causal_window16_0]] threads 128 shared_bytes 36864
// PLAN: rudnn.launch @[[QUERIES]] grid [#rudnn.size<constant = 1, params = ["query_tiles"], divisor = 1>, #rudnn.size<constant = 1, params = ["B", "H"], divisor = 1>
// PLAN-SAME: args [@q, @k, @v, @key_lengths, 0, 0, @lse, @d_output, @terms, @dq, 0, 0,
func.func @gradients(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>,
                     %v: tensor<?x?x?x32xbf16>, %lengths: tensor<?xi32>,
                     %o: tensor<?x?x?x32xbf16>, %lse: tensor<?x?x?xf32>,
                     %do: tensor<?x?x?x32xbf16>)
    -> (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x32xbf16>) {
  %dq, %dk, %dv = rudnn.attention_backward %q, %k, %v key_lengths %lengths
      output(%o, %lse) gradient %do causal window (16, 0) softcap 30.0
      : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x32xbf16>,
         tensor<?xi32>, tensor<?x?x?x32xbf16>, tensor<?x?x?xf32>,
         tensor<?x?x?x32xbf16>)
      -> (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x32xbf16>)
  return %dq, %dk, %dv
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x32xbf16>
}
