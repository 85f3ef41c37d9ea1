// One decoding step over a K/V cache in f32 with D = Dv = 64: the new
// tokens' keys and values are appended to the caches in place (the function
// returns them under their own names) and each new token attends to the
// cache up to itself. Batch, new tokens, capacity and both head counts are
// dynamic: one compiled plan serves every size and every length.
//
//   rudnn-run examples/kv_cache.mlir --random 0 --dims B=3,T=2,S=100,H=8,G=2 --check

func.func @main(%q: tensor<?x?x?x64xf32> {rudnn.name = "q"},
                %k: tensor<?x?x?x64xf32> {rudnn.name = "k"},
                %v: tensor<?x?x?x64xf32> {rudnn.name = "v"},
                %k_cache: tensor<?x?x?x64xf32> {rudnn.name = "k_cache"},
                %v_cache: tensor<?x?x?x64xf32> {rudnn.name = "v_cache"},
                %cache_lengths: tensor<?xi32> {rudnn.name = "cache_lengths"})
    -> (tensor<?x?x?x64xf32> {rudnn.name = "o"},
        tensor<?x?x?x64xf32> {rudnn.name = "k_cache"},
        tensor<?x?x?x64xf32> {rudnn.name = "v_cache"}) {
  %o, %k_cache_out, %v_cache_out, %lse, %status = rudnn.kv_cache_attention
      %q, %k, %v cache(%k_cache, %v_cache) lengths %cache_lengths
      : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>,
         tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?xi32>)
      -> (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>,
          tensor<?x?x?xf32>, tensor<?xi32>)
  return %o, %k_cache_out, %v_cache_out
      : tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>
}
