// RUN: rudnn-opt %s -split-input-file -rudnn-specialize | FileCheck %s --check-prefix=SPECIALIZE
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize="smem-per-block=101376" | FileCheck %s --check-prefix=SMALL
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose | FileCheck %s --check-prefix=DECOMPOSE
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose | rudnn-opt -split-input-file | FileCheck %s --check-prefix=DECOMPOSE
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose -rudnn-plan | FileCheck %s --check-prefix=PLAN

// The scale defaults to D^-0.5; the persistent grid holds as many blocks an
// SM as shared memory allows (three of 69904 bytes on an H200's 132 SMs,
// one in 99 KiB). The step becomes the partials, which take the caches and
// return them (the same memory), and the combine, which writes over the
// partials' o. The plan reads and writes the caches in place ("inout",
// returned under their own names); o is the caller's, the unreturned lse and
// the partials workspace; the unused status is a null pointer.
// SPECIALIZE-LABEL: func.func @decode
// SPECIALIZE: rudnn.kv_cache_attention {{.*}} scale 0.0883883461 blocks 396 warps 4
// SMALL-LABEL: func.func @decode
// SMALL: blocks 132 warps 4
// DECOMPOSE-LABEL: func.func @decode
// DECOMPOSE-SAME: %[[Q:[^:]*]]: tensor<?x1x32x128xbf16>
// DECOMPOSE-SAME: %[[K:[^:]*]]: tensor<?x1x8x128xbf16>
// DECOMPOSE-SAME: %[[V:[^:]*]]: tensor<?x1x8x128xbf16>
// DECOMPOSE-SAME: %[[KC:[^:]*]]: tensor<?x?x8x128xbf16>
// DECOMPOSE-SAME: %[[VC:[^:]*]]: tensor<?x?x8x128xbf16>
// DECOMPOSE-SAME: %[[L:[^:]*]]: tensor<?xi32>
// DECOMPOSE: %[[KOUT:[^,]*]], %[[VOUT:[^,]*]], %[[O1:[^,]*]], %[[LSE1:[^,]*]], %[[OP:[^,]*]], %[[LP:[^,]*]], %{{.*}} = rudnn.decode_partials %[[Q]], %[[K]], %[[V]] cache(%[[KC]], %[[VC]]) lengths %[[L]] scale 0.0883883461 blocks 396 warps 4
// DECOMPOSE-SAME: -> (tensor<?x?x8x128xbf16>, tensor<?x?x8x128xbf16>, tensor<?x1x32x128xbf16>, tensor<?x32x1xf32>, tensor<?x32x1x64x128xf32>, tensor<?x32x1x64xf32>, tensor<?xi32>)
// DECOMPOSE: %[[O:[^,]*]], %{{.*}} = rudnn.decode_combine %[[OP]], %[[LP]] into(%[[O1]], %[[LSE1]]) lengths %[[L]] blocks 396
// DECOMPOSE: return %[[O]], %[[KOUT]], %[[VOUT]]
// The partials hold the slots the runtime chooses for the call's rows:
// as many as 256 MiB holds (E + 1 floats a slot), 1 to 64.
// PLAN-LABEL: rudnn.plan @decode
// PLAN-SAME: "partial_slots"]
// PLAN-SAME: #rudnn.split<blocks = <constant = 1, params = ["B", "T", "H"], divisor = 1>, target = 520223, max = <constant = 64, params = [], divisor = 1>>
// PLAN: rudnn.buffer @q "in"
// PLAN: rudnn.buffer @k_cache "inout"
// PLAN-NEXT: rudnn.buffer @v_cache "inout"
// PLAN-NEXT: rudnn.buffer @cache_lengths "in"
// PLAN-NEXT: rudnn.buffer @o "out"
// PLAN-NEXT: rudnn.buffer @lse "workspace"
// PLAN-NEXT: rudnn.buffer @o_partial "workspace" bytes <constant = 512, params = ["B", "T", "H", "partial_slots"], divisor = 1>
// PLAN-NEXT: rudnn.buffer @lse_partial "workspace" bytes <constant = 4, params = ["B", "T", "H", "partial_slots"], divisor = 1>
// PLAN: rudnn.kernel @[[PARTIALS:decode_partials_bf16_d128_e128_w4_blocks396]] threads 128 shared_bytes 69904
// PLAN: rudnn.launch @[[PARTIALS]] grid [#rudnn.size<constant = 396, params = [], divisor = 1>
// PLAN-SAME: args [@q, @k, @v, @k_cache, @v_cache, 0, @o, @lse, @o_partial, @lse_partial, 0,
// PLAN: rudnn.kernel @[[COMBINE:decode_combine_bf16_e128_blocks396]] threads 128
// PLAN: rudnn.launch @[[COMBINE]] grid [#rudnn.size<constant = 1, params = ["B", "H"], divisor = 1>
// PLAN-SAME: args [@o_partial, @lse_partial, @o, 0,
func.func @decode(%q: tensor<?x1x32x128xbf16>, %k: tensor<?x1x8x128xbf16>,
                  %v: tensor<?x1x8x128xbf16>,
                  %k_cache: tensor<?x?x8x128xbf16>,
                  %v_cache: tensor<?x?x8x128xbf16>, %lengths: tensor<?xi32>)
    -> (tensor<?x1x32x128xbf16>, tensor<?x?x8x128xbf16>,
        tensor<?x?x8x128xbf16>) {
  %o, %kc, %vc, %lse, %status = rudnn.kv_cache_attention %q, %k, %v
      cache(%k_cache, %v_cache) lengths %lengths
      : (tensor<?x1x32x128xbf16>, tensor<?x1x8x128xbf16>,
         tensor<?x1x8x128xbf16>, tensor<?x?x8x128xbf16>,
         tensor<?x?x8x128xbf16>, tensor<?xi32>)
      -> (tensor<?x1x32x128xbf16>, tensor<?x?x8x128xbf16>,
          tensor<?x?x8x128xbf16>, tensor<?x32x1xf32>, tensor<?xi32>)
  return %o, %kc, %vc : tensor<?x1x32x128xbf16>, tensor<?x?x8x128xbf16>,
      tensor<?x?x8x128xbf16>
}

// -----

// Paged: the block table reaches the partials, the page size (16) names
// the kernel; forced splits and the status, when returned, are the
// caller's. f32 at D = 256 takes two warps a block (stages of 32 keys).
// SPECIALIZE-LABEL: func.func @paged
// SPECIALIZE: splits 5 blocks 132 warps 2
// DECOMPOSE-LABEL: func.func @paged
// DECOMPOSE: rudnn.decode_partials {{.*}} block_table %{{.*}} lengths %{{.*}} scale 6.250000e-02 blocks 132 warps 2 splits 5
// DECOMPOSE: rudnn.decode_combine {{.*}} blocks 132 splits 5
// PLAN-LABEL: rudnn.plan @paged
// PLAN: rudnn.buffer @k_pages "inout"
// PLAN-NEXT: rudnn.buffer @v_pages "inout"
// PLAN-NEXT: rudnn.buffer @block_table "in"
// PLAN: rudnn.buffer @status "out"
// Forced splits: that many slots a row.
// PLAN: rudnn.buffer @o_partial "workspace" bytes <constant = 5120, params = ["B", "T", "H"], divisor = 1>
// PLAN: rudnn.kernel @[[PARTIALS:decode_partials_f32_d256_e256_w2_page16_splits5_blocks132]] threads 64
// PLAN: rudnn.launch @[[PARTIALS]]
// PLAN-SAME: args [@q, @k, @v, @k_pages, @v_pages, @block_table, @o, @lse, @o_partial, @lse_partial, @status,
func.func @paged(%q: tensor<?x?x4x256xf32>, %k: tensor<?x?x2x256xf32>,
                 %v: tensor<?x?x2x256xf32>, %k_pages: tensor<?x16x2x256xf32>,
                 %v_pages: tensor<?x16x2x256xf32>, %table: tensor<?x?xi32>,
                 %lengths: tensor<?xi32>)
    -> (tensor<?x?x4x256xf32>, tensor<?x16x2x256xf32>,
        tensor<?x16x2x256xf32>, tensor<?xi32>) {
  %o, %kp, %vp, %lse, %status = rudnn.kv_cache_attention_paged %q, %k, %v
      pages(%k_pages, %v_pages) block_table %table lengths %lengths splits 5
      : (tensor<?x?x4x256xf32>, tensor<?x?x2x256xf32>, tensor<?x?x2x256xf32>,
         tensor<?x16x2x256xf32>, tensor<?x16x2x256xf32>, tensor<?x?xi32>,
         tensor<?xi32>)
      -> (tensor<?x?x4x256xf32>, tensor<?x16x2x256xf32>,
          tensor<?x16x2x256xf32>, tensor<?x4x?xf32>, tensor<?xi32>)
  return %o, %kp, %vp, %status : tensor<?x?x4x256xf32>,
      tensor<?x16x2x256xf32>, tensor<?x16x2x256xf32>, tensor<?xi32>
}

// -----

// Attend only (no k, v), with every option: the partials take the left
// padding, the slopes and the options, the combine the padding and the
// window's left bound (where the keys start); the kernels' names say what
// they were compiled for, nothing is appended, and the slopes' batch
// stride is bound.
// DECOMPOSE-LABEL: func.func @options
// DECOMPOSE-SAME: %[[Q:[^:]*]]: tensor<?x2x8x64xf16>
// DECOMPOSE-SAME: %[[L:[^:]*]]: tensor<?xi32>
// DECOMPOSE-SAME: %[[PAD:[^:]*]]: tensor<?xi32>
// DECOMPOSE-SAME: %[[SLOPES:[^:]*]]: tensor<?x8xf32>
// DECOMPOSE: rudnn.decode_partials %[[Q]] cache(%{{[^,]*}}, %{{[^)]*}}) block_table %{{[^ ]*}} lengths %[[L]] leftpad %[[PAD]] alibi %[[SLOPES]] non_causal window (7, 3) softcap 3.000000e+01 scale 1.250000e-01
// DECOMPOSE: rudnn.decode_combine {{.*}} lengths %[[L]] leftpad %[[PAD]] attend_only window_left 7 blocks
// PLAN-LABEL: rudnn.plan @options
// PLAN: rudnn.kernel @[[PARTIALS:decode_partials_f16_d64_e64_w4_page16_blocks[0-9]+_attend_noncausal_window7_3_softcap_alibi]]
// PLAN: rudnn.launch @[[PARTIALS]]
// PLAN-SAME: args [@q, 0, 0, @k_pages, @v_pages, @block_table, @o, @lse, @o_partial, @lse_partial, 0,
// PLAN: rudnn.kernel @[[COMBINE:decode_combine_f16_e64_blocks[0-9]+_attend_left7]]
func.func @options(%q: tensor<?x2x8x64xf16>, %k_pages: tensor<?x16x2x64xf16>,
                   %v_pages: tensor<?x16x2x64xf16>, %table: tensor<?x?xi32>,
                   %lengths: tensor<?xi32>, %leftpad: tensor<?xi32>,
                   %slopes: tensor<?x8xf32>)
    -> (tensor<?x2x8x64xf16>) {
  %o, %kp, %vp, %lse, %status = rudnn.kv_cache_attention_paged %q
      pages(%k_pages, %v_pages) block_table %table lengths %lengths
      leftpad %leftpad alibi %slopes non_causal window (7, 3) softcap 30.0
      : (tensor<?x2x8x64xf16>, tensor<?x16x2x64xf16>, tensor<?x16x2x64xf16>,
         tensor<?x?xi32>, tensor<?xi32>, tensor<?xi32>, tensor<?x8xf32>)
      -> (tensor<?x2x8x64xf16>, tensor<?x16x2x64xf16>,
          tensor<?x16x2x64xf16>, tensor<?x8x2xf32>, tensor<?xi32>)
  return %o : tensor<?x2x8x64xf16>
}

// -----

// A pool of cache rows and the rotary embedding: the partials take the row
// map and the tables (the combine needs neither), the kernel is compiled
// for turning ("_rotary") and binds the pool's row count.
// DECOMPOSE-LABEL: func.func @rotary
// DECOMPOSE: rudnn.decode_partials {{.*}} lengths %{{[^ ]*}} batch_index %{{[^ ]*}} rotary(%{{[^,]*}}, %{{[^)]*}}) interleaved scale
// DECOMPOSE: rudnn.decode_combine {{.*}} lengths %{{[^ ]*}} blocks
// PLAN-LABEL: rudnn.plan @rotary
// PLAN: rudnn.kernel @[[PARTIALS:decode_partials_bf16_d128_e128_w4_blocks[0-9]+_rotary]]
// PLAN: rudnn.launch @[[PARTIALS]]
// PLAN-SAME: @cache_batch_idx, @rotary_cos, @rotary_sin
func.func @rotary(%q: tensor<?x1x32x128xbf16>, %k: tensor<?x1x8x128xbf16>,
                  %v: tensor<?x1x8x128xbf16>, %k_cache: tensor<?x?x8x128xbf16>,
                  %v_cache: tensor<?x?x8x128xbf16>, %lengths: tensor<?xi32>,
                  %rows: tensor<?xi32>, %cos: tensor<?x64xbf16>,
                  %sin: tensor<?x64xbf16>)
    -> (tensor<?x1x32x128xbf16>, tensor<?x?x8x128xbf16>,
        tensor<?x?x8x128xbf16>) {
  %o, %kc, %vc, %lse, %status = rudnn.kv_cache_attention %q, %k, %v
      cache(%k_cache, %v_cache) lengths %lengths batch_index %rows
      rotary(%cos, %sin) interleaved
      : (tensor<?x1x32x128xbf16>, tensor<?x1x8x128xbf16>,
         tensor<?x1x8x128xbf16>, tensor<?x?x8x128xbf16>,
         tensor<?x?x8x128xbf16>, tensor<?xi32>, tensor<?xi32>,
         tensor<?x64xbf16>, tensor<?x64xbf16>)
      -> (tensor<?x1x32x128xbf16>, tensor<?x?x8x128xbf16>,
          tensor<?x?x8x128xbf16>, tensor<?x32x1xf32>, tensor<?xi32>)
  return %o, %kc, %vc : tensor<?x1x32x128xbf16>, tensor<?x?x8x128xbf16>,
      tensor<?x?x8x128xbf16>
}
