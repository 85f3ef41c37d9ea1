// RUN: rudnn-opt %s -split-input-file -rudnn-specialize | FileCheck %s --check-prefix=SPECIALIZE
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose | FileCheck %s --check-prefix=DECOMPOSE
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose | rudnn-opt -split-input-file | FileCheck %s --check-prefix=DECOMPOSE
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose -rudnn-plan | FileCheck %s --check-prefix=PLAN

// A call whose T may be small (a decoding step's shape) gets decode_split:
// up to 16 queries, each row's keys split over about 4 waves of 64-row
// blocks (2 of 80 KiB an SM at D = 128, 132 SMs). It decomposes into a
// dim_switch on T: the split chain (64-row blocks of 64 keys, parts of the
// keys, its finalize writing the parts, attention_combine merging them)
// for T up to 16, the plain chain (here the Hopper kernel) past that.
// The plan sizes the grid's z and the parts' workspace by a #rudnn.split
// parameter (at most one part per 256 keys), and the parts' buffers take
// memory only in calls the guard admits.
// SPECIALIZE-LABEL: func.func @dynamic_queries
// SPECIALIZE: block_q 128 block_k 128 blocks 132 wgmma decode_split (16, 1056)
// DECOMPOSE-LABEL: func.func @dynamic_queries
// DECOMPOSE-SAME: %[[Q:[^:]*]]: tensor<?x?x?x128xbf16>
// DECOMPOSE-SAME: %[[K:[^:]*]]: tensor<?x?x?x128xbf16>
// DECOMPOSE-SAME: %[[V:[^:]*]]: tensor<?x?x?x128xbf16>
// DECOMPOSE: %[[R:.*]]:2 = rudnn.dim_switch %[[Q]][1] cases [1, 17]
// DECOMPOSE: %[[S:.*]] = rudnn.attention_scores %[[Q]], %[[K]] scale {{.*}} block_q 64 block_k 64 split_keys 1056 {{.*}}:
// DECOMPOSE: %[[M:.*]] = rudnn.attention_mask %[[S]] causal
// DECOMPOSE: %[[P:.*]], %[[MAX:.*]], %[[SUM:.*]] = rudnn.attention_softmax %[[M]]
// DECOMPOSE: %[[ACC:.*]] = rudnn.attention_accumulate %[[P]], %[[V]]
// DECOMPOSE: %[[OP:.*]], %[[LP:.*]] = rudnn.attention_finalize %[[ACC]], %[[MAX]], %[[SUM]] {{.*}} -> tensor<?x?x?x?x128xf32>, tensor<?x?x?x?xf32>
// DECOMPOSE: %[[O:.*]], %[[LSE:.*]] = rudnn.attention_combine %[[OP]], %[[LP]] {{.*}} -> tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
// DECOMPOSE: rudnn.yield %[[O]], %[[LSE]]
// DECOMPOSE: rudnn.attention_scores %[[Q]], %[[K]] scale {{.*}} block_q 128 block_k 128 blocks 132 wgmma {{.*}}:
// DECOMPOSE: rudnn.attention_finalize {{.*}} -> tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
// DECOMPOSE: return %[[R]]#0, %[[R]]#1
// PLAN-LABEL: rudnn.plan @dynamic_queries
// PLAN-SAME: #rudnn.split<blocks = <constant = 1, params = ["B", "H"], divisor = 1>, target = 1056, max = <constant = 1, params = ["key_part_spans"], divisor = 1>>
// PLAN: rudnn.buffer @o_parts "workspace" bytes <constant = 512, params = ["B", "H", "T", "key_parts"], divisor = 1> {guard = "T", guard_max = 16 : i64, guard_min = 1 : i64}
// PLAN-NEXT: rudnn.buffer @lse_parts "workspace" bytes <constant = 4, params = ["B", "H", "T", "key_parts"], divisor = 1> {guard = "T", guard_max = 16 : i64, guard_min = 1 : i64}
// PLAN: rudnn.kernel @[[SPLIT:attention_fwd_bf16_d128_e128_bq64_bk64_causal_a16_split]] threads 128
// PLAN: rudnn.launch @[[SPLIT]] grid [#rudnn.size<constant = 1, params = ["query_tiles64"], divisor = 1>, #rudnn.size<constant = 1, params = ["B", "H"], divisor = 1>, #rudnn.size<constant = 1, params = ["key_parts"], divisor = 1>]
// PLAN-SAME: args [@q, @k, @v, 0, 0, 0, 0, 0, 0, 0, @o_parts, @lse_parts,
// PLAN-SAME: {guard = "T", guard_max = 16 : i64, guard_min = 1 : i64}
// PLAN: rudnn.kernel @[[COMBINE:attention_combine_bf16_e128]] threads 128
// PLAN: rudnn.launch @[[COMBINE]] grid [#rudnn.size<constant = 1, params = ["B", "H"], divisor = 1>, #rudnn.size<constant = 1, params = ["query_warps4"], divisor = 1>
// PLAN-SAME: args [@o_parts, @lse_parts, @o, @lse,
// PLAN-SAME: {guard = "T", guard_max = 16 : i64, guard_min = 1 : i64}
// PLAN: rudnn.launch @attention_fwd_bf16_d128_e128_bq128_bk128_causal_wgmma
// PLAN-SAME: {guard = "T", guard_max = 9223372036854775807 : i64, guard_min = 17 : i64}
func.func @dynamic_queries(%q: tensor<?x?x?x128xbf16> {rudnn.align = 16 : i64},
                           %k: tensor<?x?x?x128xbf16> {rudnn.align = 16 : i64},
                           %v: tensor<?x?x?x128xbf16> {rudnn.align = 16 : i64})
    -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = rudnn.attention %q, %k, %v causal
      : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
         tensor<?x?x?x128xbf16>)
      -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
}

// -----

// One query known: the split chain alone, no dim_switch; f32 at D = 256
// takes tiles of 32 keys.
// DECOMPOSE-LABEL: func.func @one_query
// DECOMPOSE-NOT: rudnn.dim_switch
// DECOMPOSE: rudnn.attention_scores {{.*}} block_q 64 block_k 32 split_keys
// DECOMPOSE: rudnn.attention_combine
// DECOMPOSE-NOT: rudnn.attention_scores
// DECOMPOSE: return
func.func @one_query(%q: tensor<?x1x?x256xf32>, %k: tensor<?x?x?x256xf32>,
                     %v: tensor<?x?x?x256xf32>)
    -> (tensor<?x1x?x256xf32>, tensor<?x?x1xf32>) {
  %o, %lse = rudnn.attention %q, %k, %v
      : (tensor<?x1x?x256xf32>, tensor<?x?x?x256xf32>, tensor<?x?x?x256xf32>)
      -> (tensor<?x1x?x256xf32>, tensor<?x?x1xf32>)
  return %o, %lse : tensor<?x1x?x256xf32>, tensor<?x?x1xf32>
}

// -----

// Many queries known: no decode_split, one chain.
// SPECIALIZE-LABEL: func.func @many_queries
// SPECIALIZE-NOT: decode_split
// SPECIALIZE: return
// DECOMPOSE-LABEL: func.func @many_queries
// DECOMPOSE-NOT: rudnn.dim_switch
// DECOMPOSE-NOT: split_keys
// DECOMPOSE: return
func.func @many_queries(%q: tensor<?x64x?x64xbf16>, %k: tensor<?x?x?x64xbf16>,
                        %v: tensor<?x?x?x64xbf16>)
    -> (tensor<?x64x?x64xbf16>, tensor<?x?x64xf32>) {
  %o, %lse = rudnn.attention %q, %k, %v causal
      : (tensor<?x64x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>)
      -> (tensor<?x64x?x64xbf16>, tensor<?x?x64xf32>)
  return %o, %lse : tensor<?x64x?x64xbf16>, tensor<?x?x64xf32>
}

// -----

// decode_split (0, ...) turns the split off.
// DECOMPOSE-LABEL: func.func @split_off
// DECOMPOSE-NOT: rudnn.dim_switch
// DECOMPOSE-NOT: split_keys
// DECOMPOSE: return
func.func @split_off(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>,
                     %v: tensor<?x?x?x64xbf16>)
    -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = rudnn.attention %q, %k, %v decode_split (0, 1)
      : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>)
      -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
}
