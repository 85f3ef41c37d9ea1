// Kimi Delta Attention forward in f32 with K = V = 64. Batch, sequence length
// and heads are dynamic: one compiled plan serves every size.
//
//   rudnn-opt examples/kda.mlir -rudnn-specialize

func.func @main(%q: tensor<?x?x?x64xf32> {rudnn.name = "q"},
                %k: tensor<?x?x?x64xf32> {rudnn.name = "k"},
                %v: tensor<?x?x?x64xf32> {rudnn.name = "v"},
                %g: tensor<?x?x?x64xf32> {rudnn.name = "g"},
                %beta: tensor<?x?x?xf32> {rudnn.name = "beta"},
                %initial_state: tensor<?x?x64x64xf32> {rudnn.name = "initial_state"})
    -> (tensor<?x?x?x64xf32> {rudnn.name = "o"},
        tensor<?x?x64x64xf32> {rudnn.name = "final_state"}) {
  %o, %final_state = rudnn.kda %q, %k, %v, %g, %beta
      initial_state %initial_state
      : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>,
         tensor<?x?x?x64xf32>, tensor<?x?x?xf32>, tensor<?x?x64x64xf32>)
      -> (tensor<?x?x?x64xf32>, tensor<?x?x64x64xf32>)
  return %o, %final_state : tensor<?x?x?x64xf32>, tensor<?x?x64x64xf32>
}
