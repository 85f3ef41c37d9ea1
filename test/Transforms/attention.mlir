// RUN: rudnn-opt %s -split-input-file -rudnn-specialize | FileCheck %s --check-prefix=SPECIALIZE
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize="smem-per-block=166912" | FileCheck %s --check-prefix=SMALL
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose | FileCheck %s --check-prefix=DECOMPOSE
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose | rudnn-opt -split-input-file | FileCheck %s --check-prefix=DECOMPOSE
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose -rudnn-plan | FileCheck %s --check-prefix=PLAN

// The scale defaults to D^-0.5; key tiles of 64 up to D = 128, of 32
// beyond, fewer where a target's shared memory is smaller (f32 at D = 256:
// 16 keys in an A100's 163 KiB). Masks, window and softcap reach the
// primitives; the five primitives are one kernel over (query tiles, B·H),
// its bindings the caller's tensors, null pointers for the absent key mask
// and offsets.
// SPECIALIZE-LABEL: func.func @masked
// SPECIALIZE: rudnn.attention {{.*}} causal window (16, 0) softcap 3.000000e+01 scale 1.250000e-01 block_q 64 block_k 64
// SMALL-LABEL: func.func @masked
// SMALL: block_q 64 block_k 64
// DECOMPOSE-LABEL: func.func @masked
// DECOMPOSE-SAME: %[[Q:[^:]*]]: tensor<?x?x?x64xbf16>
// DECOMPOSE-SAME: %[[K:[^:]*]]: tensor<?x?x?x64xbf16>
// DECOMPOSE-SAME: %[[V:[^:]*]]: tensor<?x?x?x64xbf16>
// DECOMPOSE-SAME: %[[L:[^:]*]]: tensor<?xi32>
// DECOMPOSE: %[[S:.*]] = rudnn.attention_scores %[[Q]], %[[K]] scale 1.250000e-01 softcap 3.000000e+01 block_q 64 block_k 64
// DECOMPOSE: %[[M:.*]] = rudnn.attention_mask %[[S]] key_lengths %[[L]] causal window (16, 0)
// DECOMPOSE: %[[P:.*]], %[[MAX:.*]], %[[SUM:.*]] = rudnn.attention_softmax %[[M]]
// DECOMPOSE: %[[ACC:.*]] = rudnn.attention_accumulate %[[P]], %[[V]]
// DECOMPOSE: %[[O:.*]], %[[LSE:.*]] = rudnn.attention_finalize %[[ACC]], %[[MAX]], %[[SUM]]
// DECOMPOSE: return %[[O]], %[[LSE]]
// PLAN-LABEL: rudnn.plan @masked
// PLAN: rudnn.buffer @key_lengths "in"
// PLAN-NEXT: rudnn.buffer @o "out"
// PLAN-NEXT: rudnn.buffer @lse "out"
// PLAN: rudnn.kernel @[[KERNEL:attention_fwd_bf16_d64_e64_bk64_causal_window16_0]] threads 128 shared_bytes 40960
// PLAN: rudnn.attention_finalize
// PLAN-NEXT: rudnn.yield
// PLAN: rudnn.launch @[[KERNEL]] grid [#rudnn.size<constant = 1, params = ["query_tiles"], divisor = 1>, #rudnn.size<constant = 1, params = ["B", "H"], divisor = 1>
// PLAN-SAME: args [@q, @k, @v, @key_lengths, 0, 0, 0, @o, @lse,
func.func @masked(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>,
                  %v: tensor<?x?x?x64xbf16>, %lengths: tensor<?xi32>)
    -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = rudnn.attention %q, %k, %v key_lengths %lengths causal
      window (16, 0) softcap 30.0
      : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>,
         tensor<?xi32>)
      -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
}

// -----

// D = 256: 32 keys a tile (16 for f32 in 163 KiB). An lse nobody returns
// is bound to a null pointer: the kernel does not write it.
// SPECIALIZE-LABEL: func.func @wide
// SPECIALIZE: scale 6.250000e-02 block_q 64 block_k 32
// SMALL-LABEL: func.func @wide
// SMALL: block_q 64 block_k 16
// PLAN-LABEL: rudnn.plan @wide
// PLAN-NOT: @lse
// PLAN: rudnn.launch @attention_fwd_f32_d256_e256_bk32
// PLAN-SAME: args [@q, @k, @v, 0, @key_mask, 0, 0, @o, 0,
func.func @wide(%q: tensor<?x?x?x256xf32>, %k: tensor<?x?x?x256xf32>,
                %v: tensor<?x?x?x256xf32>, %mask: tensor<?x?xi1>)
    -> tensor<?x?x?x256xf32> {
  %o, %lse = rudnn.attention %q, %k, %v key_mask %mask
      : (tensor<?x?x?x256xf32>, tensor<?x?x?x256xf32>, tensor<?x?x?x256xf32>,
         tensor<?x?xi1>)
      -> (tensor<?x?x?x256xf32>, tensor<?x?x?xf32>)
  return %o : tensor<?x?x?x256xf32>
}

// -----

// Packed batches: scores [H, T, S] over every packed query and key, masked
// to each entry's block by the offsets; one kernel over (ceil(T / 64), H)
// whose blocks take the entries' query tiles in turn.
// SPECIALIZE-LABEL: func.func @packed
// SPECIALIZE: rudnn.attention_varlen {{.*}} cu_seqlens(%{{.*}}, %{{.*}}) causal scale 1.250000e-01 block_q 64 block_k 64
// DECOMPOSE-LABEL: func.func @packed
// DECOMPOSE-SAME: %[[Q:[^:]*]]: tensor<?x?x64xbf16>
// DECOMPOSE-SAME: %[[CQ:[^:]*]]: tensor<?xi32>
// DECOMPOSE-SAME: %[[CK:[^:]*]]: tensor<?xi32>
// DECOMPOSE: %[[S:.*]] = rudnn.attention_scores %[[Q]], %{{.*}} scale {{.*}} : tensor<?x?x64xbf16>, tensor<?x?x64xbf16> -> tensor<?x?x?xf32>
// DECOMPOSE: rudnn.attention_mask %[[S]] cu_seqlens(%[[CQ]], %[[CK]]) causal
// DECOMPOSE: rudnn.attention_finalize {{.*}} -> tensor<?x?x64xbf16>, tensor<?x?xf32>
// PLAN-LABEL: rudnn.plan @packed
// PLAN: rudnn.launch @attention_varlen_fwd_bf16_d64_e64_bk64_causal grid [#rudnn.size<constant = 1, params = ["query_tiles"], divisor = 1>, #rudnn.size<constant = 1, params = ["H"], divisor = 1>
// PLAN-SAME: args [@q, @k, @v, 0, 0, @cu_seqlens_q, @cu_seqlens_k, @o, @lse,
func.func @packed(%q: tensor<?x?x64xbf16>, %k: tensor<?x?x64xbf16>,
                  %v: tensor<?x?x64xbf16>, %cu_q: tensor<?xi32>,
                  %cu_k: tensor<?xi32>)
    -> (tensor<?x?x64xbf16>, tensor<?x?xf32>) {
  %o, %lse = rudnn.attention_varlen %q, %k, %v cu_seqlens(%cu_q, %cu_k) causal
      : (tensor<?x?x64xbf16>, tensor<?x?x64xbf16>, tensor<?x?x64xbf16>,
         tensor<?xi32>, tensor<?xi32>)
      -> (tensor<?x?x64xbf16>, tensor<?x?xf32>)
  return %o, %lse : tensor<?x?x64xbf16>, tensor<?x?xf32>
}
