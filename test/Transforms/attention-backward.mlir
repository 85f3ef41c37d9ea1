// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose | FileCheck %s --check-prefix=DECOMPOSE
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose -rudnn-plan | FileCheck %s --check-prefix=PLAN
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize | FileCheck %s --check-prefix=POLICY
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize="arch=sm_80" | FileCheck %s --check-prefix=SM80
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize="arch=sm_80" -rudnn-decompose -rudnn-plan | FileCheck %s --check-prefix=SM80PLAN

// The backward decomposes into the row terms, the gradients in one pass
// over each key tile and dq's conversion, each a kernel: the row terms
// [B, H, T] and dq's f32 sum (zeroed before each call) live in the plan's
// workspace; the gradients run over (key tiles, B·G) and sum each group's
// query heads in the block. The scale defaults to D^-0.5; 16-bit inputs on
// sm_90 get the Hopper kernel (`wgmma`, blocks of 128 keys), which these
// views, promising no alignment, cannot take: they run the sm_80 kernel,
// 64 keys a block. An sm_80 target gives them FlashAttention-2's 128 keys
// a block, eight warps.
// POLICY-LABEL: func.func @gradients
// POLICY: rudnn.attention_backward {{.*}} block_rows 128 wgmma {policy = "the Hopper kernel: 16-bit inputs on sm_90; 128 keys a block, each consumer warpgroup 64 with dK and dV in its registers (D, E <= 128)"}
// SM80-LABEL: func.func @gradients
// SM80: rudnn.attention_backward {{.*}} block_rows 128 {policy = "the sm_80 kernel: the target has no wgmma; 128 keys a block (16-bit inputs, D, E <= 128)"}
// SM80PLAN-LABEL: rudnn.plan @gradients
// SM80PLAN: rudnn.kernel @[[GRADIENTS:attention_bwd_gradients_bf16_d64_e32_causal_window16_0_keys128]] threads 256 shared_bytes 65536
// SM80PLAN: rudnn.launch @[[GRADIENTS]] grid [#rudnn.size<constant = 1, params = ["key_tiles128"], divisor = 1>, #rudnn.size<constant = 1, params = ["B", "G"], divisor = 1>
// DECOMPOSE-LABEL: func.func @gradients
// DECOMPOSE-SAME: %[[Q:[^:]*]]: tensor<?x?x?x64xbf16>
// DECOMPOSE-SAME: %[[K:[^:]*]]: tensor<?x?x?x64xbf16>
// DECOMPOSE-SAME: %[[V:[^:]*]]: tensor<?x?x?x32xbf16>
// DECOMPOSE-SAME: %[[L:[^:]*]]: tensor<?xi32>
// DECOMPOSE-SAME: %[[O:[^:]*]]: tensor<?x?x?x32xbf16>
// DECOMPOSE-SAME: %[[LSE:[^:]*]]: tensor<?x?x?xf32>
// DECOMPOSE-SAME: %[[DO:[^:]*]]: tensor<?x?x?x32xbf16>
// DECOMPOSE: %[[T:.*]] = rudnn.attention_row_terms %[[O]], %[[DO]]
// DECOMPOSE: %[[DK:.*]], %[[DV:.*]], %[[ACC:.*]] = rudnn.attention_gradients %[[Q]], %[[K]], %[[V]] key_lengths %[[L]] lse %[[LSE]] terms %[[T]] gradient %[[DO]] causal window (16, 0) softcap 3.000000e+01 scale 1.250000e-01 block_rows 64 :
// DECOMPOSE: %[[DQ:.*]] = rudnn.attention_dq_convert %[[ACC]] : tensor<?x?x?x64xf32> -> tensor<?x?x?x64xbf16>
// DECOMPOSE: return %[[DQ]], %[[DK]], %[[DV]]
// PLAN-LABEL: rudnn.plan @gradients
// PLAN: rudnn.buffer @terms "workspace" bytes <constant = 4, params = ["B", "H", "T"], divisor = 1>
// PLAN: rudnn.buffer @dq_accum "workspace" zeroed bytes <constant = 256, params = ["B", "T", "H"], divisor = 1>
// PLAN: rudnn.kernel @[[TERMS:attention_bwd_terms_bf16_e32]] threads 128
// PLAN: rudnn.launch @[[TERMS]] grid [#rudnn.size<constant = 1, params = ["query_quads"], divisor = 1>, #rudnn.size<constant = 1, params = ["B", "H"], divisor = 1>
// PLAN: rudnn.kernel @[[GRADIENTS:attention_bwd_gradients_bf16_d64_e32_causal_window16_0_keys64]] threads 128 shared_bytes 45056
// PLAN: rudnn.launch @[[GRADIENTS]] grid [#rudnn.size<constant = 1, params = ["key_tiles64"], divisor = 1>, #rudnn.size<constant = 1, params = ["B", "G"], divisor = 1>
// PLAN-SAME: args [@q, @k, @v, @key_lengths, 0, 0, 0, 0, 0, @lse, @d_output, @terms, 0, @dk, @dv, @dq_accum,
// PLAN: rudnn.kernel @[[CONVERT:attention_bwd_dq_bf16_d64]] threads 128
// PLAN: rudnn.launch @[[CONVERT]] grid [#rudnn.size<constant = 1, params = ["query_quads"], divisor = 1>, #rudnn.size<constant = 1, params = ["B", "H"], divisor = 1>
// PLAN-SAME: args [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, @dq, 0, 0, @dq_accum,
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

// -----

// Packed batches: the primitives take the entries' offsets; the row terms
// are [H, T], and the gradient kernel's blocks walk one head's packed key
// tiles (grid (tiles, G)) with no batch strides. f32 takes the sm_80 kernel,
// 64 keys a block.
// POLICY-LABEL: func.func @packed
// POLICY: block_rows 64 {policy = "the sm_80 kernel: the Hopper kernel multiplies 16-bit inputs; 64 keys a block"}
// DECOMPOSE-LABEL: func.func @packed
// DECOMPOSE-SAME: %[[Q:[^:]*]]: tensor<?x?x40xf32>
// DECOMPOSE-SAME: %[[K:[^:]*]]: tensor<?x?x40xf32>
// DECOMPOSE-SAME: %[[V:[^:]*]]: tensor<?x?x24xf32>
// DECOMPOSE-SAME: %[[CQ:[^:]*]]: tensor<?xi32>
// DECOMPOSE-SAME: %[[CK:[^:]*]]: tensor<?xi32>
// DECOMPOSE-SAME: %[[O:[^:]*]]: tensor<?x?x24xf32>
// DECOMPOSE-SAME: %[[LSE:[^:]*]]: tensor<?x?xf32>
// DECOMPOSE-SAME: %[[DO:[^:]*]]: tensor<?x?x24xf32>
// DECOMPOSE: %[[T:.*]] = rudnn.attention_row_terms %[[O]], %[[DO]] : tensor<?x?x24xf32>, tensor<?x?x24xf32> -> tensor<?x?xf32>
// DECOMPOSE: %[[DK:.*]], %[[DV:.*]], %[[ACC:.*]] = rudnn.attention_gradients %[[Q]], %[[K]], %[[V]] cu_seqlens(%[[CQ]], %[[CK]]) lse %[[LSE]] terms %[[T]] gradient %[[DO]] causal scale {{.*}} block_rows 64 :
// DECOMPOSE: %[[DQ:.*]] = rudnn.attention_dq_convert %[[ACC]] : tensor<?x?x40xf32> -> tensor<?x?x40xf32>
// DECOMPOSE: return %[[DQ]], %[[DK]], %[[DV]]
// PLAN-LABEL: rudnn.plan @packed
// PLAN: rudnn.buffer @terms "workspace" bytes <constant = 4, params = ["H", "T"], divisor = 1>
// PLAN: rudnn.kernel @[[TERMS:attention_varlen_bwd_terms_f32_e24]] threads 128
// PLAN: rudnn.launch @[[TERMS]] grid [#rudnn.size<constant = 1, params = ["query_quads"], divisor = 1>, #rudnn.size<constant = 1, params = ["H"], divisor = 1>
// PLAN: rudnn.kernel @[[GRADIENTS:attention_varlen_bwd_gradients_f32_d40_e24_causal_keys64]] threads 128
// PLAN: rudnn.launch @[[GRADIENTS]] grid [#rudnn.size<constant = 1, params = ["key_tiles64"], divisor = 1>, #rudnn.size<constant = 1, params = ["G"], divisor = 1>
// PLAN-SAME: args [@q, @k, @v, 0, 0, @cu_seqlens_q, @cu_seqlens_k, 0, 0, @lse, @d_output, @terms, 0, @dk, @dv, @dq_accum,
func.func @packed(%q: tensor<?x?x40xf32>, %k: tensor<?x?x40xf32>,
                  %v: tensor<?x?x24xf32>, %cu_q: tensor<?xi32>,
                  %cu_k: tensor<?xi32>, %o: tensor<?x?x24xf32>,
                  %lse: tensor<?x?xf32>, %do: tensor<?x?x24xf32>)
    -> (tensor<?x?x40xf32>, tensor<?x?x40xf32>, tensor<?x?x24xf32>) {
  %dq, %dk, %dv = rudnn.attention_varlen_backward %q, %k, %v
      cu_seqlens(%cu_q, %cu_k) output(%o, %lse) gradient %do causal
      : (tensor<?x?x40xf32>, tensor<?x?x40xf32>, tensor<?x?x24xf32>,
         tensor<?xi32>, tensor<?xi32>, tensor<?x?x24xf32>, tensor<?x?xf32>,
         tensor<?x?x24xf32>)
      -> (tensor<?x?x40xf32>, tensor<?x?x40xf32>, tensor<?x?x24xf32>)
  return %dq, %dk, %dv
      : tensor<?x?x40xf32>, tensor<?x?x40xf32>, tensor<?x?x24xf32>
}

// -----

// Views promising 16-byte rows take the Hopper kernel: the gradients in one
// pass over each key tile, 384 threads over tiles of 128 keys, operands
// through tensor maps (boxes of 64 columns by the 128 keys or the 64
// queries of a step), dq summed in an f32 workspace the plan zeroes before
// each call; then dq's conversion, a warp a row.
// DECOMPOSE-LABEL: func.func @hopper
// DECOMPOSE: %[[T:.*]] = rudnn.attention_row_terms
// DECOMPOSE: %[[DK:.*]], %[[DV:.*]], %[[ACC:.*]] = rudnn.attention_gradients {{.*}} terms %[[T]] {{.*}} block_rows 128 wgmma {rudnn.aligned_views} : {{.*}} -> (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xf32>)
// DECOMPOSE: %[[DQ:.*]] = rudnn.attention_dq_convert %[[ACC]] {rudnn.aligned_views} : tensor<?x?x?x64xf32> -> tensor<?x?x?x64xbf16>
// DECOMPOSE: return %[[DQ]], %[[DK]], %[[DV]]
// PLAN-LABEL: rudnn.plan @hopper
// PLAN: rudnn.buffer @dq_accum "workspace" zeroed bytes <constant = 256, params = ["B", "T", "H"], divisor = 1>
// PLAN: rudnn.kernel @[[GRADIENTS:attention_bwd_gradients_bf16_d64_e64_causal_wgmma]] threads 384 shared_bytes 100352
// PLAN: rudnn.launch @[[GRADIENTS]] grid [#rudnn.size<constant = 1, params = ["key_tiles128"], divisor = 1>, #rudnn.size<constant = 1, params = ["B", "G"], divisor = 1>
// PLAN-SAME: args [@q, @k, @v, 0, 0, 0, 0, 0, 0, @lse, @d_output, @terms, 0, @dk, @dv, @dq_accum,
// PLAN-SAME: #rudnn.tensor_map<buffer = "q", element_bytes = 2, dims = [64, #rudnn.param<name = "T", bits = 64>, #rudnn.param<name = "H", bits = 64>, #rudnn.param<name = "B", bits = 64>], strides = [#rudnn.param<name = "q_stride1", bits = 64>, #rudnn.param<name = "q_stride2", bits = 64>, #rudnn.param<name = "q_stride0", bits = 64>], box = [64, 64, 1, 1], swizzle_bytes = 128>
// PLAN-SAME: #rudnn.tensor_map<buffer = "k", element_bytes = 2, dims = [64, #rudnn.param<name = "S", bits = 64>, #rudnn.param<name = "G", bits = 64>, #rudnn.param<name = "B", bits = 64>], strides = [#rudnn.param<name = "k_stride1", bits = 64>, #rudnn.param<name = "k_stride2", bits = 64>, #rudnn.param<name = "k_stride0", bits = 64>], box = [64, 128, 1, 1], swizzle_bytes = 128>
// PLAN: rudnn.kernel @[[CONVERT:attention_bwd_dq_bf16_d64]] threads 128
// PLAN: rudnn.launch @[[CONVERT]] grid [#rudnn.size<constant = 1, params = ["query_quads"], divisor = 1>, #rudnn.size<constant = 1, params = ["B", "H"], divisor = 1>
// PLAN-SAME: args [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, @dq, 0, 0, @dq_accum,
func.func @hopper(%q: tensor<?x?x?x64xbf16> {rudnn.align = 16 : i64},
                  %k: tensor<?x?x?x64xbf16> {rudnn.align = 16 : i64},
                  %v: tensor<?x?x?x64xbf16> {rudnn.align = 16 : i64},
                  %o: tensor<?x?x?x64xbf16>, %lse: tensor<?x?x?xf32>,
                  %do: tensor<?x?x?x64xbf16> {rudnn.align = 16 : i64})
    -> (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>) {
  %dq, %dk, %dv = rudnn.attention_backward %q, %k, %v output(%o, %lse)
      gradient %do causal
      : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>,
         tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>, tensor<?x?x?x64xbf16>)
      -> (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>)
  return %dq, %dk, %dv
      : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>
}

// -----

// deterministic: the Hopper kernel on a cooperative persistent grid of one
// block an SM (the target's 132), each query tile's dq shares added in key
// tile order, counted by semaphores (a 64-column block of each query tile
// of 64) in zeroed workspace. On sm_80 likewise (the target's SM count),
// a semaphore a query tile of the kernel's 32-query steps.
// SM80PLAN-LABEL: rudnn.plan @deterministic
// SM80PLAN: rudnn.buffer @dq_semaphores "workspace" zeroed bytes <constant = 4, params = ["B", "H", "query_tiles32"], divisor = 1>
// SM80PLAN: rudnn.kernel @[[GRADIENTS:attention_bwd_gradients_bf16_d128_e64_deterministic_keys128_a16]] threads 256 {{.*}} cooperative
// SM80PLAN: rudnn.launch @[[GRADIENTS]] grid [#rudnn.size<constant = 132, params = [], divisor = 1>, #rudnn.size<constant = 1, params = [], divisor = 1>
// SM80PLAN-SAME: @dq_semaphores]
// DECOMPOSE-LABEL: func.func @deterministic
// DECOMPOSE: rudnn.attention_gradients {{.*}} block_rows 128 wgmma deterministic blocks 132
// PLAN-LABEL: rudnn.plan @deterministic
// PLAN: rudnn.buffer @dq_semaphores "workspace" zeroed bytes <constant = 8, params = ["B", "H", "query_tiles64"], divisor = 1>
// PLAN: rudnn.kernel @[[GRADIENTS:attention_bwd_gradients_bf16_d128_e64_deterministic_wgmma]] threads 384 {{.*}} cooperative
// PLAN: rudnn.launch @[[GRADIENTS]] grid [#rudnn.size<constant = 132, params = [], divisor = 1>, #rudnn.size<constant = 1, params = [], divisor = 1>
// PLAN-SAME: @dq_semaphores]
func.func @deterministic(%q: tensor<?x?x?x128xbf16> {rudnn.align = 16 : i64},
                         %k: tensor<?x?x?x128xbf16> {rudnn.align = 16 : i64},
                         %v: tensor<?x?x?x64xbf16> {rudnn.align = 16 : i64},
                         %o: tensor<?x?x?x64xbf16>, %lse: tensor<?x?x?xf32>,
                         %do: tensor<?x?x?x64xbf16> {rudnn.align = 16 : i64})
    -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x64xbf16>) {
  %dq, %dk, %dv = rudnn.attention_backward %q, %k, %v output(%o, %lse)
      gradient %do deterministic
      : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x64xbf16>,
         tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>, tensor<?x?x?x64xbf16>)
      -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x64xbf16>)
  return %dq, %dk, %dv
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x64xbf16>
}

// -----

// Past D = E = 128 the Hopper kernel takes 64 keys a block, both consumer
// warpgroups over them, each half of dK's and dV's columns.
// POLICY-LABEL: func.func @wide
// POLICY: rudnn.attention_backward {{.*}} block_rows 64 wgmma {policy = "the Hopper kernel: 16-bit inputs on sm_90; D or E past 128, so 64 keys a block that both warpgroups share, each accumulating half of dK's and dV's columns"}
// DECOMPOSE-LABEL: func.func @wide
// DECOMPOSE: rudnn.attention_gradients {{.*}} block_rows 64 wgmma {rudnn.aligned_views}
// PLAN-LABEL: rudnn.plan @wide
// PLAN: rudnn.kernel @[[GRADIENTS:attention_bwd_gradients_bf16_d192_e256_wgmma]] threads 384 shared_bytes 206848
// PLAN: rudnn.launch @[[GRADIENTS]] grid [#rudnn.size<constant = 1, params = ["key_tiles64"], divisor = 1>
func.func @wide(%q: tensor<?x?x?x192xbf16> {rudnn.align = 16 : i64},
                %k: tensor<?x?x?x192xbf16> {rudnn.align = 16 : i64},
                %v: tensor<?x?x?x256xbf16> {rudnn.align = 16 : i64},
                %o: tensor<?x?x?x256xbf16>, %lse: tensor<?x?x?xf32>,
                %do: tensor<?x?x?x256xbf16> {rudnn.align = 16 : i64})
    -> (tensor<?x?x?x192xbf16>, tensor<?x?x?x192xbf16>, tensor<?x?x?x256xbf16>) {
  %dq, %dk, %dv = rudnn.attention_backward %q, %k, %v output(%o, %lse)
      gradient %do
      : (tensor<?x?x?x192xbf16>, tensor<?x?x?x192xbf16>, tensor<?x?x?x256xbf16>,
         tensor<?x?x?x256xbf16>, tensor<?x?x?xf32>, tensor<?x?x?x256xbf16>)
      -> (tensor<?x?x?x192xbf16>, tensor<?x?x?x192xbf16>, tensor<?x?x?x256xbf16>)
  return %dq, %dk, %dv
      : tensor<?x?x?x192xbf16>, tensor<?x?x?x192xbf16>, tensor<?x?x?x256xbf16>
}
