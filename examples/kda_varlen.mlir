// Kimi Delta Attention forward over packed sequences of their own lengths, in
// f32 with K = V = 64, as flash-linear-attention's chunk_kda takes them with
// cu_seqlens: every sequence's tokens in turn along T of one batch entry,
// sequence n the tokens cu_seqlens[n] to cu_seqlens[n + 1], each with its
// own initial and final state. Tokens, heads and sequences are dynamic, and
// changing the lengths never recompiles.
//
//   rudnn-run examples/kda_varlen.mlir --random --dims T=300,H=2,S=5 --check

func.func @main(%q: tensor<1x?x?x64xf32> {rudnn.name = "q"},
                %k: tensor<1x?x?x64xf32> {rudnn.name = "k"},
                %v: tensor<1x?x?x64xf32> {rudnn.name = "v"},
                %g: tensor<1x?x?x64xf32> {rudnn.name = "g"},
                %beta: tensor<1x?x?xf32> {rudnn.name = "beta"},
                %cu_seqlens: tensor<?xi32> {rudnn.name = "cu_seqlens"},
                %initial_state: tensor<?x?x64x64xf32> {rudnn.name = "initial_state"})
    -> (tensor<1x?x?x64xf32> {rudnn.name = "o"},
        tensor<?x?x64x64xf32> {rudnn.name = "final_state"}) {
  %o, %final_state = rudnn.kda_varlen %q, %k, %v, %g, %beta
      cu_seqlens %cu_seqlens initial_state %initial_state
      : (tensor<1x?x?x64xf32>, tensor<1x?x?x64xf32>, tensor<1x?x?x64xf32>,
         tensor<1x?x?x64xf32>, tensor<1x?x?xf32>, tensor<?xi32>,
         tensor<?x?x64x64xf32>)
      -> (tensor<1x?x?x64xf32>, tensor<?x?x64x64xf32>)
  return %o, %final_state : tensor<1x?x?x64xf32>, tensor<?x?x64x64xf32>
}
