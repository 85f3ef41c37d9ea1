// The benchmarked KDA training step as one plan: bf16 q, k, v, beta and
// d_output, fp32 g and states, K = V = 128, the forward saving its
// boundaries and tiles and the backward taking both (as rudnn-bench-kda's
// step runs them). Its workspace is what a training step holds at its peak;
// GPU checks print its kernel report at each benchmarked shape:
//
//   rudnn-run bench/kda_training_bf16_k128.mlir --random 0 --dims B=1,T=32768,H=16 --report

func.func @main(%q: tensor<?x?x?x128xbf16> {rudnn.name = "q", rudnn.align = 16 : i64},
                %k: tensor<?x?x?x128xbf16> {rudnn.name = "k", rudnn.align = 16 : i64},
                %v: tensor<?x?x?x128xbf16> {rudnn.name = "v", rudnn.align = 16 : i64},
                %g: tensor<?x?x?x128xf32> {rudnn.name = "g"},
                %beta: tensor<?x?x?xbf16> {rudnn.name = "beta"},
                %initial_state: tensor<?x?x128x128xf32> {rudnn.name = "initial_state"},
                %do: tensor<?x?x?x128xbf16> {rudnn.name = "do", rudnn.align = 16 : i64})
    -> (tensor<?x?x?x128xbf16> {rudnn.name = "o"},
        tensor<?x?x128x128xf32> {rudnn.name = "final_state"},
        tensor<?x?x?x128xbf16> {rudnn.name = "dq"},
        tensor<?x?x?x128xbf16> {rudnn.name = "dk"},
        tensor<?x?x?x128xbf16> {rudnn.name = "dv"},
        tensor<?x?x?x128xf32> {rudnn.name = "dg"},
        tensor<?x?x?xbf16> {rudnn.name = "dbeta"},
        tensor<?x?x128x128xf32> {rudnn.name = "d_initial_state"}) {
  %o, %final_state, %boundaries, %tiles = rudnn.kda %q, %k, %v, %g, %beta
      initial_state %initial_state chunk 64 save_boundaries save_tiles
      : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
         tensor<?x?x?x128xf32>, tensor<?x?x?xbf16>, tensor<?x?x128x128xf32>)
      -> (tensor<?x?x?x128xbf16>, tensor<?x?x128x128xf32>,
          tensor<?x?x?x128x128xbf16>, tensor<?x?x?x20608xf32>)
  %dq, %dk, %dv, %dg, %dbeta, %ds0 = rudnn.kda_backward %q, %k, %v, %g, %beta
      initial_state %initial_state boundaries %boundaries tiles %tiles
      d_output %do chunk 64
      : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
         tensor<?x?x?x128xbf16>, tensor<?x?x?x128xf32>, tensor<?x?x?xbf16>,
         tensor<?x?x128x128xf32>, tensor<?x?x?x128x128xbf16>,
         tensor<?x?x?x20608xf32>, tensor<?x?x?x128xbf16>)
      -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
          tensor<?x?x?x128xbf16>, tensor<?x?x?x128xf32>, tensor<?x?x?xbf16>,
          tensor<?x?x128x128xf32>)
  return %o, %final_state, %dq, %dk, %dv, %dg, %dbeta, %ds0
      : tensor<?x?x?x128xbf16>, tensor<?x?x128x128xf32>, tensor<?x?x?x128xbf16>,
        tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xf32>,
        tensor<?x?x?xbf16>, tensor<?x?x128x128xf32>
}
