// The Hopper attention forward's two blocks at D = E = 64, bf16, self
// attention, rows 16-byte aligned: three consumer warpgroups against 64 keys
// a tile (@three, what rudnn-specialize chooses for padded batches) and two
// against 128 keys (@two), not causal and causal. GPU checks time each at
// one shape, so the first GPU run says which block the policy should take:
//
//   rudnn-run bench/attention_bf16_d64_blocks.mlir --entry three --random 0 --dims B=4,T=4096,S=4096,H=16,G=16 --bench 20

func.func @three(%q: tensor<?x?x?x64xbf16> {rudnn.name = "q", rudnn.align = 16 : i64},
                 %k: tensor<?x?x?x64xbf16> {rudnn.name = "k", rudnn.align = 16 : i64},
                 %v: tensor<?x?x?x64xbf16> {rudnn.name = "v", rudnn.align = 16 : i64})
    -> (tensor<?x?x?x64xbf16> {rudnn.name = "o", rudnn.align = 16 : i64},
        tensor<?x?x?xf32> {rudnn.name = "lse"}) {
  %o, %lse = rudnn.attention %q, %k, %v block_q 192 block_k 64 wgmma
      : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>,
         tensor<?x?x?x64xbf16>)
      -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
}

func.func @two(%q: tensor<?x?x?x64xbf16> {rudnn.name = "q", rudnn.align = 16 : i64},
               %k: tensor<?x?x?x64xbf16> {rudnn.name = "k", rudnn.align = 16 : i64},
               %v: tensor<?x?x?x64xbf16> {rudnn.name = "v", rudnn.align = 16 : i64})
    -> (tensor<?x?x?x64xbf16> {rudnn.name = "o", rudnn.align = 16 : i64},
        tensor<?x?x?xf32> {rudnn.name = "lse"}) {
  %o, %lse = rudnn.attention %q, %k, %v block_q 128 block_k 128 wgmma
      : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>,
         tensor<?x?x?x64xbf16>)
      -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
}

func.func @three_causal(%q: tensor<?x?x?x64xbf16> {rudnn.name = "q", rudnn.align = 16 : i64},
                        %k: tensor<?x?x?x64xbf16> {rudnn.name = "k", rudnn.align = 16 : i64},
                        %v: tensor<?x?x?x64xbf16> {rudnn.name = "v", rudnn.align = 16 : i64})
    -> (tensor<?x?x?x64xbf16> {rudnn.name = "o", rudnn.align = 16 : i64},
        tensor<?x?x?xf32> {rudnn.name = "lse"}) {
  %o, %lse = rudnn.attention %q, %k, %v causal block_q 192 block_k 64 wgmma
      : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>,
         tensor<?x?x?x64xbf16>)
      -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
}

func.func @two_causal(%q: tensor<?x?x?x64xbf16> {rudnn.name = "q", rudnn.align = 16 : i64},
                      %k: tensor<?x?x?x64xbf16> {rudnn.name = "k", rudnn.align = 16 : i64},
                      %v: tensor<?x?x?x64xbf16> {rudnn.name = "v", rudnn.align = 16 : i64})
    -> (tensor<?x?x?x64xbf16> {rudnn.name = "o", rudnn.align = 16 : i64},
        tensor<?x?x?xf32> {rudnn.name = "lse"}) {
  %o, %lse = rudnn.attention %q, %k, %v causal block_q 128 block_k 128 wgmma
      : (tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>,
         tensor<?x?x?x64xbf16>)
      -> (tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>)
  return %o, %lse : tensor<?x?x?x64xbf16>, tensor<?x?x?xf32>
}
