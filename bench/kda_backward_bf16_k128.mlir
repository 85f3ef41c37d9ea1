// The benchmarked KDA backward: bf16 q, k, v, beta and d_output, fp32 g,
// K = V = 128, from the boundaries the forward saved (as rudnn-bench-kda's
// training step runs it). GPU checks print its kernel report at each
// benchmarked shape:
//
//   rudnn-run bench/kda_backward_bf16_k128.mlir --random 0 --dims B=1,T=32768,H=16 --report

func.func @main(%q: tensor<?x?x?x128xbf16> {rudnn.name = "q", rudnn.align = 16 : i64},
                %k: tensor<?x?x?x128xbf16> {rudnn.name = "k", rudnn.align = 16 : i64},
                %v: tensor<?x?x?x128xbf16> {rudnn.name = "v", rudnn.align = 16 : i64},
                %g: tensor<?x?x?x128xf32> {rudnn.name = "g"},
                %beta: tensor<?x?x?xbf16> {rudnn.name = "beta"},
                %boundaries: tensor<?x?x?x128x128xbf16> {rudnn.name = "boundaries"},
                %do: tensor<?x?x?x128xbf16> {rudnn.name = "do", rudnn.align = 16 : i64})
    -> (tensor<?x?x?x128xbf16> {rudnn.name = "dq"},
        tensor<?x?x?x128xbf16> {rudnn.name = "dk"},
        tensor<?x?x?x128xbf16> {rudnn.name = "dv"},
        tensor<?x?x?x128xf32> {rudnn.name = "dg"},
        tensor<?x?x?xbf16> {rudnn.name = "dbeta"}) {
  %dq, %dk, %dv, %dg, %dbeta = rudnn.kda_backward %q, %k, %v, %g, %beta
      boundaries %boundaries d_output %do chunk 64
      : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
         tensor<?x?x?x128xbf16>, tensor<?x?x?x128xf32>, tensor<?x?x?xbf16>,
         tensor<?x?x?x128x128xbf16>, tensor<?x?x?x128xbf16>)
      -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
          tensor<?x?x?x128xbf16>, tensor<?x?x?x128xf32>, tensor<?x?x?xbf16>)
  return %dq, %dk, %dv, %dg, %dbeta
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
        tensor<?x?x?x128xf32>, tensor<?x?x?xbf16>
}
