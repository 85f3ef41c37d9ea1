// An attend-only decoding step over pages (nothing appended): ALiBi slopes,
// a window, a softcap and every query seeing every key to the last.
func.func @main(%q: tensor<?x?x?x40xf32> {rudnn.name = "q"},
                %k_pages: tensor<?x4x?x40xf32> {rudnn.name = "k_pages"},
                %v_pages: tensor<?x4x?x24xf32> {rudnn.name = "v_pages"},
                %table: tensor<?x?xi32> {rudnn.name = "block_table"},
                %lengths: tensor<?xi32> {rudnn.name = "cache_lengths"},
                %slopes: tensor<?x?xf32> {rudnn.name = "alibi_slopes"})
    -> (tensor<?x?x?x24xf32> {rudnn.name = "o"},
        tensor<?x?x?xf32> {rudnn.name = "lse"}) {
  %o, %kp, %vp, %lse, %status = rudnn.kv_cache_attention_paged %q
      pages(%k_pages, %v_pages) block_table %table lengths %lengths
      alibi %slopes non_causal window (9, 2) softcap 5.0 splits 2
      : (tensor<?x?x?x40xf32>, tensor<?x4x?x40xf32>, tensor<?x4x?x24xf32>,
         tensor<?x?xi32>, tensor<?xi32>, tensor<?x?xf32>)
      -> (tensor<?x?x?x24xf32>, tensor<?x4x?x40xf32>, tensor<?x4x?x24xf32>,
          tensor<?x?x?xf32>, tensor<?xi32>)
  return %o, %lse : tensor<?x?x?x24xf32>, tensor<?x?x?xf32>
}
