// The gradients of causal attention in f32, D = Dv = 64, over keys of
// per-entry lengths: the forward's q, k, v and key_lengths, its results o
// and lse, and the gradient of the loss with respect to o. Batch, query and
// key lengths and both head counts are dynamic. With --random the o and lse
// given are the float64 forward's on the drawn inputs.
//
//   rudnn-run examples/attention_backward.mlir --random 0 --dims B=2,T=100,S=120,H=4,G=2 --check

func.func @main(%q: tensor<?x?x?x64xf32> {rudnn.name = "q"},
                %k: tensor<?x?x?x64xf32> {rudnn.name = "k"},
                %v: tensor<?x?x?x64xf32> {rudnn.name = "v"},
                %key_lengths: tensor<?xi32> {rudnn.name = "key_lengths"},
                %o: tensor<?x?x?x64xf32> {rudnn.name = "o"},
                %lse: tensor<?x?x?xf32> {rudnn.name = "lse"},
                %d_output: tensor<?x?x?x64xf32> {rudnn.name = "d_output"})
    -> (tensor<?x?x?x64xf32> {rudnn.name = "dq"},
        tensor<?x?x?x64xf32> {rudnn.name = "dk"},
        tensor<?x?x?x64xf32> {rudnn.name = "dv"}) {
  %dq, %dk, %dv = rudnn.attention_backward %q, %k, %v key_lengths %key_lengths
      output(%o, %lse) gradient %d_output causal
      : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>,
         tensor<?xi32>, tensor<?x?x?x64xf32>, tensor<?x?x?xf32>,
         tensor<?x?x?x64xf32>)
      -> (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>)
  return %dq, %dk, %dv
      : tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>
}
