// RUN: rudnn-opt %s -split-input-file -rudnn-specialize | FileCheck %s --check-prefix=SPECIALIZE
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize="smem-per-block=101376" | FileCheck %s --check-prefix=SMALL
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose | FileCheck %s --check-prefix=DECOMPOSE
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose | rudnn-opt -split-input-file | FileCheck %s --check-prefix=DECOMPOSE
// RUN: rudnn-opt %s -split-input-file -rudnn-specialize -rudnn-decompose -rudnn-plan | FileCheck %s --check-prefix=PLAN

// A two-layer bf16 LSTM over packed sequences. The recurrence spreads H =
// 256 units over 32 blocks of 8 (at least 8 a block, one block an SM) and
// keeps each block's W_hh rows in shared memory, saying why; the input
// projections run on wgmma in 128 x 128 tiles (16-bit inputs on sm_90),
// and on mma.sync where a block's shared memory cannot hold their five
// stages (SMALL). Each layer becomes its projection and its recurrence; the second recurrence writes
// its slices of the first's h_n and c_n. The plan launches each recurrence
// cooperatively, one kernel serving both layers; the first layer's output
// and c_n are workspace, and the last layer, whose c_n nothing reads, gets
// a null pointer for it.
// SPECIALIZE-LABEL: func.func @stack
// SPECIALIZE: rudnn.lstm {{.*}} layers 2 units 8 weights_on_chip true per_step false wgmma_projection true {policy = "1 x 256 hidden units over 32 blocks of 8 (one an SM, 132 SMs); W_hh rows kept in shared memory (32768 of 232448 bytes); input projection on wgmma, 128 x 128 tiles"}
// SMALL-LABEL: func.func @stack
// SMALL: units 8 weights_on_chip true per_step false wgmma_projection false {policy = "{{.*}}; input projection on mma.sync, 64 x 64 tiles"}
// DECOMPOSE-LABEL: func.func @stack
// DECOMPOSE-SAME: %[[X:[^:]*]]: tensor<?x?x128xbf16>
// DECOMPOSE-SAME: %[[LEN:[^:]*]]: tensor<?xi32>
// DECOMPOSE-SAME: %[[WI0:[^:]*]]: tensor<1024x128xbf16>
// DECOMPOSE-SAME: %[[WH0:[^:]*]]: tensor<1024x256xbf16>
// DECOMPOSE-SAME: %[[WI1:[^:]*]]: tensor<1024x256xbf16>
// DECOMPOSE-SAME: %[[WH1:[^:]*]]: tensor<1024x256xbf16>
// DECOMPOSE: %[[G0:[^,]*]], %[[S0:[^ ]*]] = rudnn.rnn_projection %[[X]] weights(%[[WI0]]) layer 0 hidden 256 wgmma :
// DECOMPOSE-SAME: -> (tensor<1x?x?x1024xf32>, tensor<1x3x?x256xf32>)
// DECOMPOSE: %[[OUT0:[^,]*]], %[[HN0:[^,]*]], %[[CN0:[^ ]*]] = rudnn.rnn_recurrence %[[G0]], %[[S0]] weights(%[[WH0]]) lengths %[[LEN]] layer 0 units 8 weights_on_chip true
// DECOMPOSE: %[[G1:[^,]*]], %[[S1:[^ ]*]] = rudnn.rnn_projection %[[OUT0]] weights(%[[WI1]]) layer 1 hidden 256
// DECOMPOSE: %[[OUT1:[^,]*]], %[[HN1:[^,]*]], %{{.*}} = rudnn.rnn_recurrence %[[G1]], %[[S1]] weights(%[[WH1]]) lengths %[[LEN]] h_n %[[HN0]] c_n %[[CN0]] layer 1 units 8
// DECOMPOSE: return %[[OUT1]], %[[HN1]]
// PLAN-LABEL: rudnn.plan @stack
// PLAN: rudnn.buffer @out "out"
// PLAN-NEXT: rudnn.buffer @h_n "out"
// PLAN-NEXT: rudnn.buffer @gates "workspace" bytes <constant = 4096, params = ["T", "B"], divisor = 1>
// PLAN-NEXT: rudnn.buffer @lstm_state "workspace" bytes <constant = 3088, params = ["B"], divisor = 1>
// PLAN-NEXT: rudnn.buffer @layer_out "workspace" bytes <constant = 512, params = ["T", "B"], divisor = 1>
// PLAN-NEXT: rudnn.buffer @c_n "workspace" bytes <constant = 1024, params = ["B"], divisor = 1>
// PLAN: rudnn.kernel @[[PROJ:lstm_projection_bf16_i128_h256_d1_wgmma]] threads 256 shared_bytes 164864 {{.*}} flops_per_shared_byte 42 flops_per_l2_byte 64
// PLAN: rudnn.launch @[[PROJ]] grid [#rudnn.size<constant = 1, params = ["step_tiles16", "batch_tiles"], divisor = 1>, #rudnn.size<constant = 8, params = [], divisor = 1>, #rudnn.size<constant = 1, params = [], divisor = 1>]
// PLAN: rudnn.kernel @[[REC:lstm_recurrence_bf16_h256_d1_u8_onchip]] threads 256 shared_bytes 32768 cooperative
// PLAN: rudnn.launch @[[REC]] grid [#rudnn.size<constant = 32, params = [], divisor = 1>
// PLAN-SAME: args [@gates, @weight_hh_l0, 0, {{.*}}, @lengths, @lstm_state, @layer_out, {{.*}}, @h_n, @c_n,
// PLAN: rudnn.kernel @lstm_projection_bf16_i256_h256_d1
// PLAN-NOT: rudnn.kernel
// PLAN: rudnn.launch @[[REC]] grid
// PLAN-SAME: args [@gates_1, @weight_hh_l1, 0, {{.*}}, @lengths, @lstm_state_1, @out, {{.*}}, @h_n, 0,
func.func @stack(%x: tensor<?x?x128xbf16>, %lengths: tensor<?xi32>,
                 %wi0: tensor<1024x128xbf16>, %wh0: tensor<1024x256xbf16>,
                 %wi1: tensor<1024x256xbf16>, %wh1: tensor<1024x256xbf16>)
    -> (tensor<?x?x256xbf16>, tensor<2x?x256xbf16>) {
  %out, %h_n, %c_n = rudnn.lstm %x lengths %lengths
      weights(%wi0, %wh0, %wi1, %wh1) layers 2
      : (tensor<?x?x128xbf16>, tensor<?xi32>, tensor<1024x128xbf16>,
         tensor<1024x256xbf16>, tensor<1024x256xbf16>, tensor<1024x256xbf16>)
      -> (tensor<?x?x256xbf16>, tensor<2x?x256xbf16>, tensor<2x?x256xbf16>)
  return %out, %h_n : tensor<?x?x256xbf16>, tensor<2x?x256xbf16>
}

// -----

// A bidirectional f32 layer of H = 1024, batch first, with biases and an
// initial state. A persistent grid would give each SM 16 units, whose W_hh
// rows (328 KiB a block in TF32's tiles with the staged states, 290 KiB as
// exact fp32 rows) fit an H200's shared memory only in bf16: each step
// reads W_hh from L2 anyway, so the recurrence runs one launch a step, 256 blocks of 8 units, repeated over T
// by the plan (and said why). Each launch loads its blocks' rows on chip
// once for all entries (read from L2 each pass of 8 entries where 99 KiB
// a block cannot hold them, the SMALL run). The model's step reads the
// rows once whatever the batch (step_fixed_bytes: 32 rows of 1024 floats).
// f32 products run on tensor cores in TF32 unless asked otherwise
// (allow_tf32, as PyTorch's cuDNN default): the projection (on wgmma, as
// 16-bit inputs' on sm_90), and the rows on chip against the states (their
// tiles 200 KiB). The projection runs both directions.
// SPECIALIZE-LABEL: func.func @wide
// SPECIALIZE: units 8 weights_on_chip true per_step true wgmma_projection true allow_tf32 true {policy = "2 x 1024 hidden units over 256 blocks of 8, one launch a step (recorded in a CUDA graph; a persistent grid's W_hh rows would take 335872 of 232448 bytes a block); each launch loads its W_hh rows into shared memory once for every batch entry (204800 of 232448 bytes), products on tensor cores in TF32; input projection on wgmma in TF32, 128 x 128 tiles"}
// SMALL-LABEL: func.func @wide
// SMALL: units 8 weights_on_chip false per_step true wgmma_projection false allow_tf32 true {policy = "{{.*}}; W_hh rows read from L2 each pass of 8 entries; {{.*}}"}
// DECOMPOSE-LABEL: func.func @wide
// DECOMPOSE: rudnn.rnn_projection %{{.*}} weights(%{{.*}}, %{{.*}}) biases(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) h0 %{{.*}} c0 %{{.*}} layer 0 hidden 1024 batch_first wgmma tf32
// DECOMPOSE-SAME: -> (tensor<2x?x?x4096xf32>, tensor<2x3x?x1024xf32>)
// DECOMPOSE: rudnn.rnn_recurrence {{.*}} layer 0 units 8 weights_on_chip true per_step batch_first tf32
// DECOMPOSE-SAME: -> (tensor<?x?x2048xf32>, tensor<2x?x1024xf32>, tensor<2x?x1024xf32>)
// PLAN-LABEL: rudnn.plan @wide
// PLAN: rudnn.kernel @[[STEP:lstm_recurrence_f32_h1024_d2_u8_step_onchip_tf32]] threads 256 shared_bytes 204800 memory_bytes <constant = 40960, params = ["B"], divisor = 1>
// PLAN-SAME: step_bytes <constant = 4352, params = ["B"], divisor = 1> step_flops <constant = 65536, params = ["B"], divisor = 1> step_fixed_bytes <constant = 131072, params = [], divisor = 1> tf32
// PLAN-NOT: cooperative
// PLAN: rudnn.launch @[[STEP]] grid [#rudnn.size<constant = 256, params = [], divisor = 1>
// PLAN-SAME: {repeat = "T"}
func.func @wide(%x: tensor<?x?x80xf32>, %h0: tensor<2x?x1024xf32>,
                %c0: tensor<2x?x1024xf32>,
                %wi: tensor<4096x80xf32>, %wh: tensor<4096x1024xf32>,
                %bi: tensor<4096xf32>, %bh: tensor<4096xf32>,
                %wir: tensor<4096x80xf32>, %whr: tensor<4096x1024xf32>,
                %bir: tensor<4096xf32>, %bhr: tensor<4096xf32>)
    -> (tensor<?x?x2048xf32>, tensor<2x?x1024xf32>, tensor<2x?x1024xf32>) {
  %out, %h_n, %c_n = rudnn.lstm %x h0 %h0 c0 %c0
      weights(%wi, %wh, %bi, %bh, %wir, %whr, %bir, %bhr) layers 1
      bidirectional batch_first
      : (tensor<?x?x80xf32>, tensor<2x?x1024xf32>, tensor<2x?x1024xf32>,
         tensor<4096x80xf32>, tensor<4096x1024xf32>, tensor<4096xf32>,
         tensor<4096xf32>, tensor<4096x80xf32>, tensor<4096x1024xf32>,
         tensor<4096xf32>, tensor<4096xf32>)
      -> (tensor<?x?x2048xf32>, tensor<2x?x1024xf32>, tensor<2x?x1024xf32>)
  return %out, %h_n, %c_n
      : tensor<?x?x2048xf32>, tensor<2x?x1024xf32>, tensor<2x?x1024xf32>
}

// -----

// Asked for, the persistent recurrence reads W_hh from L2 instead: 128
// blocks of 16 units, one an SM. Asked for too, exact fp32 products: on
// FMA (the rows on chip would take fp32's plain rows, not TF32's tiles).
// SPECIALIZE-LABEL: func.func @streamed
// SPECIALIZE: units 16 weights_on_chip false per_step false wgmma_projection false allow_tf32 false {policy = "2 x 1024 hidden units over 128 blocks of 16 (one an SM, 132 SMs); W_hh rows read from L2 each step (on chip they would take 296960 of 232448 bytes); input projection on FMA, 64 x 64 tiles"}
// SMALL-LABEL: func.func @streamed
// DECOMPOSE-LABEL: func.func @streamed
// PLAN-LABEL: rudnn.plan @streamed
// PLAN: rudnn.kernel @lstm_recurrence_f32_h1024_d2_u16_streamed threads 256 shared_bytes 34816 cooperative
func.func @streamed(%x: tensor<?x?x8xf32>, %wi: tensor<4096x8xf32>,
                    %wh: tensor<4096x1024xf32>, %wir: tensor<4096x8xf32>,
                    %whr: tensor<4096x1024xf32>)
    -> tensor<?x?x2048xf32> {
  %out, %h_n, %c_n = rudnn.lstm %x weights(%wi, %wh, %wir, %whr) layers 1
      bidirectional weights_on_chip false allow_tf32 false
      : (tensor<?x?x8xf32>, tensor<4096x8xf32>, tensor<4096x1024xf32>,
         tensor<4096x8xf32>, tensor<4096x1024xf32>)
      -> (tensor<?x?x2048xf32>, tensor<2x?x1024xf32>, tensor<2x?x1024xf32>)
  return %out : tensor<?x?x2048xf32>
}
