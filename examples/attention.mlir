// Causal attention in f32 with D = Dv = 64 over keys of per-entry lengths
// (bottom-right aligned: the last query sees every key of its entry). Batch,
// query and key lengths and both head counts are dynamic: one compiled plan
// serves every size, MHA and GQA alike.
//
//   rudnn-run examples/attention.mlir --random 0 --dims B=2,T=100,S=120,H=4,G=2 --check

func.func @main(%q: tensor<?x?x?x64xf32> {rudnn.name = "q"},
                %k: tensor<?x?x?x64xf32> {rudnn.name = "k"},
                %v: tensor<?x?x?x64xf32> {rudnn.name = "v"},
                %key_lengths: tensor<?xi32> {rudnn.name = "key_lengths"})
    -> (tensor<?x?x?x64xf32> {rudnn.name = "o"},
        tensor<?x?x?xf32> {rudnn.name = "lse"}) {
  %o, %lse = rudnn.attention %q, %k, %v key_lengths %key_lengths causal
      : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>,
         tensor<?xi32>)
      -> (tensor<?x?x?x64xf32>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x64xf32>, tensor<?x?x?xf32>
}
