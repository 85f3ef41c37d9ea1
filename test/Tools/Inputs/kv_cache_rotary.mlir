// A decoding step whose entries pick rows of a cache pool and whose new
// keys and queries turn by the rotary embedding (GPT-NeoX pairs over part
// of the features) before the keys are appended.
func.func @main(%q: tensor<?x?x?x40xf32> {rudnn.name = "q"},
                %k: tensor<?x?x?x40xf32> {rudnn.name = "k"},
                %v: tensor<?x?x?x24xf32> {rudnn.name = "v"},
                %k_cache: tensor<?x?x?x40xf32> {rudnn.name = "k_cache"},
                %v_cache: tensor<?x?x?x24xf32> {rudnn.name = "v_cache"},
                %lengths: tensor<?xi32> {rudnn.name = "cache_lengths"},
                %rows: tensor<?xi32> {rudnn.name = "cache_batch_idx"},
                %cos: tensor<?x12xf32> {rudnn.name = "rotary_cos"},
                %sin: tensor<?x12xf32> {rudnn.name = "rotary_sin"})
    -> (tensor<?x?x?x24xf32> {rudnn.name = "o"},
        tensor<?x?x?x40xf32> {rudnn.name = "k_cache"},
        tensor<?x?x?x24xf32> {rudnn.name = "v_cache"}) {
  %o, %kc, %vc, %lse, %status = rudnn.kv_cache_attention %q, %k, %v
      cache(%k_cache, %v_cache) lengths %lengths batch_index %rows
      rotary(%cos, %sin)
      : (tensor<?x?x?x40xf32>, tensor<?x?x?x40xf32>, tensor<?x?x?x24xf32>,
         tensor<?x?x?x40xf32>, tensor<?x?x?x24xf32>, tensor<?xi32>,
         tensor<?xi32>, tensor<?x12xf32>, tensor<?x12xf32>)
      -> (tensor<?x?x?x24xf32>, tensor<?x?x?x40xf32>, tensor<?x?x?x24xf32>,
          tensor<?x?x?xf32>, tensor<?xi32>)
  return %o, %kc, %vc
      : tensor<?x?x?x24xf32>, tensor<?x?x?x40xf32>, tensor<?x?x?x24xf32>
}
