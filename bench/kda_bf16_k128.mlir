// The benchmarked KDA forward: bf16 q, k, v and beta, fp32 g and states,
// K = V = 128, as bench/fla_kda.py calls flash-linear-attention. GPU checks
// print its kernel report at each benchmarked shape:
//
//   rudnn-run bench/kda_bf16_k128.mlir --random 0 --dims B=1,T=32768,H=16 --report

func.func @main(%q: tensor<?x?x?x128xbf16> {rudnn.name = "q", rudnn.align = 16 : i64},
                %k: tensor<?x?x?x128xbf16> {rudnn.name = "k", rudnn.align = 16 : i64},
                %v: tensor<?x?x?x128xbf16> {rudnn.name = "v", rudnn.align = 16 : i64},
                %g: tensor<?x?x?x128xf32> {rudnn.name = "g"},
                %beta: tensor<?x?x?xbf16> {rudnn.name = "beta"},
                %initial_state: tensor<?x?x128x128xf32> {rudnn.name = "initial_state"})
    -> (tensor<?x?x?x128xbf16> {rudnn.name = "o"},
        tensor<?x?x128x128xf32> {rudnn.name = "final_state"}) {
  %o, %final_state = rudnn.kda %q, %k, %v, %g, %beta
      initial_state %initial_state
      : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
         tensor<?x?x?x128xf32>, tensor<?x?x?xbf16>, tensor<?x?x128x128xf32>)
      -> (tensor<?x?x?x128xbf16>, tensor<?x?x128x128xf32>)
  return %o, %final_state : tensor<?x?x?x128xbf16>, tensor<?x?x128x128xf32>
}
