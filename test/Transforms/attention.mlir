// RUN: rudnn-opt %s -split-input-file -rudnn-specialize | FileCheck %s --check-prefix=SPECIALIZE
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize="smem-per-block=166912" | FileCheck %s --check-prefix=SMALL
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize="arch=sm_80" | FileCheck %s --check-prefix=SM80
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose | FileCheck %s --check-prefix=DECOMPOSE
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose | rudnn-opt -split-input-file | FileCheck %s --check-prefix=DECOMPOSE
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose -rudnn-plan | FileCheck %s --check-prefix=PLAN
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize="arch=sm_80" -rudnn-decompose -rudnn-plan | FileCheck %s --check-prefix=SM80PLAN

// The scale defaults to D^-0.5. On sm_90, 16-bit inputs take the Hopper
// kernel (wgmma: block_q 192 and 64 keys for padded batches up to D = 64,
// else block_q 128 and 128 keys up to D = 128); elsewhere the
// mma.sync kernel's tiles: 128 queries for 16-bit inputs, 64 for f32, key
// tiles of 64 up to D = 128 (32 where a warp takes 32 rows past D = 64),
// of 32 beyond, fewer where a target's shared memory is smaller (f32 at
// D = 256: 16 keys in an A100's 163 KiB). Masks, window and softcap reach
// the primitives; the five primitives are one kernel over (query tiles,
// B·H), its bindings the caller's tensors, null pointers for the absent
// key mask and offsets; T up to 16 takes the split chain
// (attention-decode.mlir). Views that do not promise 16-byte rows (no tensor
// map can read them) take the mma.sync kernel, 128 queries a block of four
// warps, one buffer each of K and V (32 KiB at D = 64).
// SPECIALIZE-LABEL: func.func @masked
// SPECIALIZE: rudnn.attention {{.*}} causal window (16, 0) softcap 3.000000e+01 scale 1.250000e-01 block_q 192 block_k 64 blocks 132 wgmma
// SMALL-LABEL: func.func @masked
// SMALL: block_q 192 block_k 64 blocks 132 wgmma
// SM80-LABEL: func.func @masked
// SM80: block_q 128 block_k 64 decode_split (16, {{[0-9]+}}) :
// DECOMPOSE-LABEL: func.func @masked
// DECOMPOSE-SAME: %[[Q:[^:]*]]: tensor<?x?x?x64xbf16>
// DECOMPOSE-SAME: %[[K:[^:]*]]: tensor<?x?x?x64xbf16>
// DECOMPOSE-SAME: %[[V:[^:]*]]: tensor<?x?x?x64xbf16>
// DECOMPOSE-SAME: %[[L:[^:]*]]: tensor<?xi32>
// DECOMPOSE: %[[R:.*]]:2 = rudnn.dim_switch %[[Q]][1] cases [1, 17]
// DECOMPOSE: rudnn.attention_combine
// DECOMPOSE: %[[S:.*]] = rudnn.attention_scores %[[Q]], %[[K]] scale 1.250000e-01 softcap 3.000000e+01 block_q 192 block_k 64 blocks 132 wgmma
// DECOMPOSE: %[[M:.*]] = rudnn.attention_mask %[[S]] key_lengths %[[L]] causal window (16, 0)
// DECOMPOSE: %[[P:.*]], %[[MAX:.*]], %[[SUM:.*]] = rudnn.attention_softmax %[[M]]
// DECOMPOSE: %[[ACC:.*]] = rudnn.attention_accumulate %[[P]], %[[V]]
// DECOMPOSE: %[[O:.*]], %[[LSE:.*]] = rudnn.attention_finalize %[[ACC]], %[[MAX]], %[[SUM]]
// DECOMPOSE: rudnn.yield %[[O]], %[[LSE]]
// DECOMPOSE: return %[[R]]#0, %[[R]]#1
// PLAN-LABEL: rudnn.plan @masked
// PLAN: rudnn.buffer @key_lengths "in"
// PLAN-NEXT: rudnn.buffer @o "out"
// PLAN-NEXT: rudnn.buffer @lse "out"
// PLAN: rudnn.kernel @[[KERNEL:attention_fwd_bf16_d64_e64_bq128_bk64_causal_softcap_window16_0]] threads 128 shared_bytes 32768
// PLAN: rudnn.attention_finalize
// PLAN-NEXT: rudnn.yield
// PLAN: rudnn.launch @[[KERNEL]] grid [#rudnn.size<constant = 1, params = ["query_tiles128"], divisor = 1>, #rudnn.size<constant = 1, params = ["B", "H"], divisor = 1>
// PLAN-SAME: args [@q, @k, @v, @key_lengths, 0, 0, 0, 0, @o, @lse,
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
// PLAN-NOT: rudnn.buffer @lse "
// PLAN: rudnn.launch @attention_fwd_f32_d256_e256_bq64_bk32 grid
// PLAN-SAME: args [@q, @k, @v, 0, @key_mask, 0, 0, 0, @o, 0,
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
// to each entry's block by the offsets; one kernel over (ceil(T / 128), H)
// whose blocks take the entries' query tiles in turn.
// SPECIALIZE-LABEL: func.func @packed
// SPECIALIZE: rudnn.attention_varlen {{.*}} cu_seqlens(%{{.*}}, %{{.*}}) causal scale 1.250000e-01 block_q 128 block_k 128 blocks 132 wgmma
// SM80-LABEL: func.func @packed
// SM80: block_q 128 block_k 64 :
// DECOMPOSE-LABEL: func.func @packed
// DECOMPOSE-SAME: %[[Q:[^:]*]]: tensor<?x?x64xbf16>
// DECOMPOSE-SAME: %[[CQ:[^:]*]]: tensor<?xi32>
// DECOMPOSE-SAME: %[[CK:[^:]*]]: tensor<?xi32>
// DECOMPOSE: %[[S:.*]] = rudnn.attention_scores %[[Q]], %{{.*}} scale {{.*}} : tensor<?x?x64xbf16>, tensor<?x?x64xbf16> -> tensor<?x?x?xf32>
// DECOMPOSE: rudnn.attention_mask %[[S]] cu_seqlens(%[[CQ]], %[[CK]]) causal
// DECOMPOSE: rudnn.attention_finalize {{.*}} -> tensor<?x?x64xbf16>, tensor<?x?xf32>
// PLAN-LABEL: rudnn.plan @packed
// PLAN: rudnn.launch @attention_varlen_fwd_bf16_d64_e64_bq128_bk64_causal grid [#rudnn.size<constant = 1, params = ["query_tiles128"], divisor = 1>, #rudnn.size<constant = 1, params = ["H"], divisor = 1>
// PLAN-SAME: args [@q, @k, @v, 0, 0, @cu_seqlens_q, @cu_seqlens_k, 0, @o, @lse,
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

// -----

// The Hopper kernel: views promising 16-byte rows, bf16, sm_90. q, k and v
// also reach it as TMA tensor maps, (dim, time, head, batch) innermost
// first over the caller's strides, in boxes of 64 columns by 128 rows; 384
// threads (a producer and two consumer warpgroups) over 128 queries a
// block, K and V in two stages of 128 keys, on a persistent grid of one
// block an SM (the target's 132) taking the query tiles in turn. Its model
// moves q, o and lse once a query row (516 bytes) and k and v once a
// key-value head's key row (512).
// SPECIALIZE-LABEL: func.func @hopper
// SPECIALIZE: rudnn.attention {{.*}} causal scale 0.0883883461 block_q 128 block_k 128 blocks 132 wgmma
// SM80-LABEL: func.func @hopper
// SM80: block_q 128 block_k 32 decode_split (16, {{[0-9]+}}) :
// SM80PLAN-LABEL: rudnn.plan @hopper
// SM80PLAN: rudnn.kernel @attention_fwd_bf16_d128_e128_bq128_bk32_causal_a16 threads 128 shared_bytes 49152
// PLAN-LABEL: rudnn.plan @hopper
// PLAN: rudnn.kernel @[[KERNEL:attention_fwd_bf16_d128_e128_bq128_bk128_causal_wgmma]] threads 384 shared_bytes 198656
// PLAN-SAME: memory_bytes <constant = 516, params = ["B", "H", "T"], divisor = 1> streamed_bytes <constant = 512, params = ["B", "G", "S"], divisor = 1>
// PLAN: rudnn.launch @[[KERNEL]] grid [#rudnn.size<constant = 132, params = [], divisor = 1>, #rudnn.size<constant = 1, params = [], divisor = 1>
// PLAN-SAME: #rudnn.tensor_map<buffer = "q", element_bytes = 2, dims = [128, #rudnn.param<name = "T", bits = 64>, #rudnn.param<name = "H", bits = 64>, #rudnn.param<name = "B", bits = 64>], strides = [#rudnn.param<name = "q_stride1", bits = 64>, #rudnn.param<name = "q_stride2", bits = 64>, #rudnn.param<name = "q_stride0", bits = 64>], box = [64, 128, 1, 1], swizzle_bytes = 128>
// PLAN-SAME: #rudnn.tensor_map<buffer = "k", element_bytes = 2, dims = [128, #rudnn.param<name = "S", bits = 64>, #rudnn.param<name = "G", bits = 64>, #rudnn.param<name = "B", bits = 64>], strides = [#rudnn.param<name = "k_stride1", bits = 64>, #rudnn.param<name = "k_stride2", bits = 64>, #rudnn.param<name = "k_stride0", bits = 64>], box = [64, 128, 1, 1], swizzle_bytes = 128>
// PLAN-SAME: #rudnn.tensor_map<buffer = "v", element_bytes = 2, dims = [128, #rudnn.param<name = "S", bits = 64>, #rudnn.param<name = "G", bits = 64>, #rudnn.param<name = "B", bits = 64>], strides = [#rudnn.param<name = "v_stride1", bits = 64>, #rudnn.param<name = "v_stride2", bits = 64>, #rudnn.param<name = "v_stride0", bits = 64>], box = [64, 128, 1, 1], swizzle_bytes = 128>
func.func @hopper(%q: tensor<?x?x?x128xbf16> {rudnn.align = 16 : i64},
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

// o returned with the promise of 16-byte rows too: the primitives are
// marked, and the Hopper kernel stores it through a fifth tensor map, in
// boxes of 64 columns by a consumer warp's 16 rows.
// DECOMPOSE-LABEL: func.func @hopper_aligned_output
// DECOMPOSE: rudnn.attention_finalize {{.*}} {rudnn.aligned_outputs, rudnn.aligned_views}
// PLAN-LABEL: rudnn.plan @hopper_aligned_output
// PLAN: rudnn.kernel @[[KERNEL:attention_fwd_bf16_d128_e128_bq128_bk128_wgmma_o16]]
// PLAN: rudnn.launch @[[KERNEL]]
// PLAN-SAME: #rudnn.tensor_map<buffer = "o", element_bytes = 2, dims = [128, #rudnn.param<name = "T", bits = 64>, #rudnn.param<name = "H", bits = 64>, #rudnn.param<name = "B", bits = 64>], strides = [#rudnn.param<name = "o_stride1", bits = 64>, #rudnn.param<name = "o_stride2", bits = 64>, #rudnn.param<name = "o_stride0", bits = 64>], box = [64, 16, 1, 1], swizzle_bytes = 128>
func.func @hopper_aligned_output(
    %q: tensor<?x?x?x128xbf16> {rudnn.align = 16 : i64},
    %k: tensor<?x?x?x128xbf16> {rudnn.align = 16 : i64},
    %v: tensor<?x?x?x128xbf16> {rudnn.align = 16 : i64})
    -> (tensor<?x?x?x128xbf16> {rudnn.align = 16 : i64}, tensor<?x?x?xf32>) {
  %o, %lse = rudnn.attention %q, %k, %v
      : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
         tensor<?x?x?x128xbf16>)
      -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
}

// -----

// A packed o with the promise: stored by 16-byte stores alone (a box would
// cross into the next entry's rows), so it has no tensor map. The blocks
// claim their query tiles from a counter the plan zeroes at each call.
// DECOMPOSE-LABEL: func.func @packed_aligned_output
// DECOMPOSE: rudnn.attention_finalize {{.*}} {rudnn.aligned_outputs, rudnn.aligned_views}
// PLAN-LABEL: rudnn.plan @packed_aligned_output
// PLAN: rudnn.buffer @tile_counter "workspace" zeroed bytes <constant = 4, params = [], divisor = 1>
// PLAN: rudnn.kernel @[[KERNEL:attention_varlen_fwd_bf16_d64_e64_bq128_bk128_wgmma_o16]]
// PLAN: rudnn.launch @[[KERNEL]]
// PLAN-NOT: buffer = "o"
// PLAN-SAME: @tile_counter
// PLAN: }
func.func @packed_aligned_output(
    %q: tensor<?x?x64xbf16> {rudnn.align = 16 : i64},
    %k: tensor<?x?x64xbf16> {rudnn.align = 16 : i64},
    %v: tensor<?x?x64xbf16> {rudnn.align = 16 : i64},
    %cu_q: tensor<?xi32>, %cu_k: tensor<?xi32>)
    -> (tensor<?x?x64xbf16> {rudnn.align = 16 : i64}, tensor<?x?xf32>) {
  %o, %lse = rudnn.attention_varlen %q, %k, %v cu_seqlens(%cu_q, %cu_k)
      : (tensor<?x?x64xbf16>, tensor<?x?x64xbf16>, tensor<?x?x64xbf16>,
         tensor<?xi32>, tensor<?xi32>)
      -> (tensor<?x?x64xbf16>, tensor<?x?xf32>)
  return %o, %lse : tensor<?x?x64xbf16>, tensor<?x?xf32>
}

// -----

// The promise on q, k and v but not on o: no output marker.
// DECOMPOSE-LABEL: func.func @unpromised_output
// DECOMPOSE: rudnn.attention_finalize {{.*}} {rudnn.aligned_views}
func.func @unpromised_output(
    %q: tensor<?x?x?x128xbf16> {rudnn.align = 16 : i64},
    %k: tensor<?x?x?x128xbf16> {rudnn.align = 16 : i64},
    %v: tensor<?x?x?x128xbf16> {rudnn.align = 16 : i64})
    -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = rudnn.attention %q, %k, %v
      : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
         tensor<?x?x?x128xbf16>)
      -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
}

// -----

// Past D = 128 a 128-query block is eight warps of 16 rows (a warp of 32
// would not hold its accumulators), one buffer each of 32 keys and values:
// 256 threads, 96 KiB.
// SM80-LABEL: func.func @wide_bf16
// SM80: block_q 128 block_k 32 decode_split (16, {{[0-9]+}}) :
// SM80PLAN-LABEL: rudnn.plan @wide_bf16
// SM80PLAN: rudnn.kernel @attention_fwd_bf16_d256_e256_bq128_bk32 threads 256 shared_bytes 98304
func.func @wide_bf16(%q: tensor<?x?x?x256xbf16>, %k: tensor<?x?x?x256xbf16>,
                     %v: tensor<?x?x?x256xbf16>)
    -> (tensor<?x?x?x256xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = rudnn.attention %q, %k, %v
      : (tensor<?x?x?x256xbf16>, tensor<?x?x?x256xbf16>,
         tensor<?x?x?x256xbf16>)
      -> (tensor<?x?x?x256xbf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x256xbf16>, tensor<?x?x?xf32>
}

// -----

// Tiles given without `wgmma` keep the mma.sync kernel on sm_90 too: the
// 64-row block of four warps of 16, two stages of K and V.
// SPECIALIZE-LABEL: func.func @given_tiles
// SPECIALIZE: block_q 64 block_k 64 decode_split (16, {{[0-9]+}}) :
// PLAN-LABEL: rudnn.plan @given_tiles
// PLAN: rudnn.kernel @attention_fwd_bf16_d64_e64_bq64_bk64_a16 threads 128 shared_bytes 40960
func.func @given_tiles(%q: tensor<?x?x?x64xbf16> {rudnn.align = 16 : i64},
                       %k: tensor<?x?x?x64xbf16> {rudnn.align = 16 : i64},
                       %v: tensor<?x?x?x64xbf16> {rudnn.align = 16 : i64})
    -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>) {
  %o, %lse = rudnn.attention %q, %k, %v block_q 64 block_k 64
      : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>,
         tensor<?x?x?x64xbf16>)
      -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
}
