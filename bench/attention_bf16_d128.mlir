// The benchmarked attention forward: bf16 q, k, v, D = E = 128, self
// attention (S = T, G = H), not causal (@main) and causal (@causal), as
// bench/sdpa_attention.py calls PyTorch; rows 16-byte aligned, as the API
// finds torch's tensors (so sm_90 runs the Hopper kernel). GPU checks print
// the kernel report of both at each benchmarked shape:
//
//   rudnn-run bench/attention_bf16_d128.mlir --random 0 --dims B=8,T=2048,S=2048,H=16,G=16 --report

func.func @main(%q: tensor<?x?x?x128xbf16> {rudnn.name = "q", rudnn.align = 16 : i64},
                %k: tensor<?x?x?x128xbf16> {rudnn.name = "k", rudnn.align = 16 : i64},
                %v: tensor<?x?x?x128xbf16> {rudnn.name = "v", rudnn.align = 16 : i64})
    -> (tensor<?x?x?x128xbf16> {rudnn.name = "o"},
        tensor<?x?x?xf32> {rudnn.name = "lse"}) {
  %o, %lse = rudnn.attention %q, %k, %v
      : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
         tensor<?x?x?x128xbf16>)
      -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
}

func.func @causal(%q: tensor<?x?x?x128xbf16> {rudnn.name = "q", rudnn.align = 16 : i64},
                  %k: tensor<?x?x?x128xbf16> {rudnn.name = "k", rudnn.align = 16 : i64},
                  %v: tensor<?x?x?x128xbf16> {rudnn.name = "v", rudnn.align = 16 : i64})
    -> (tensor<?x?x?x128xbf16> {rudnn.name = "o"},
        tensor<?x?x?xf32> {rudnn.name = "lse"}) {
  %o, %lse = rudnn.attention %q, %k, %v causal
      : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
         tensor<?x?x?x128xbf16>)
      -> (tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>
}
