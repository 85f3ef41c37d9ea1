// Cross attention in f32: queries of D = 64 against keys of their own
// length with values of Dv = 32, a boolean mask over the keys of each batch
// entry, not causal.
//
//   rudnn-run examples/cross_attention.mlir --random 0 --dims B=2,T=40,S=77,H=4,G=4 --check

func.func @main(%q: tensor<?x?x?x64xf32> {rudnn.name = "q"},
                %k: tensor<?x?x?x64xf32> {rudnn.name = "k"},
                %v: tensor<?x?x?x32xf32> {rudnn.name = "v"},
                %key_mask: tensor<?x?xi1> {rudnn.name = "key_mask"})
    -> (tensor<?x?x?x32xf32> {rudnn.name = "o"},
        tensor<?x?x?xf32> {rudnn.name = "lse"}) {
  %o, %lse = rudnn.attention %q, %k, %v key_mask %key_mask
      : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x32xf32>,
         tensor<?x?xi1>)
      -> (tensor<?x?x?x32xf32>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x32xf32>, tensor<?x?x?xf32>
}
