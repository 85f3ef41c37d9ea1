// One decoding step over a paged K/V cache in f32 with D = Dv = 64 and
// pages of 16 tokens: entry b's token t lives on page block_table[b, t / 16],
// row t % 16. The new tokens go to the pages in place (returned under their
// own names). Batch, new tokens, page count, table width and head counts are
// dynamic.
//
//   rudnn-run examples/kv_cache_paged.mlir --random 0 --dims B=3,T=2,P=24,M=8,H=8,G=2 --check

func.func @main(%q: tensor<?x?x?x64xf32> {rudnn.name = "q"},
                %k: tensor<?x?x?x64xf32> {rudnn.name = "k"},
                %v: tensor<?x?x?x64xf32> {rudnn.name = "v"},
                %k_pages: tensor<?x16x?x64xf32> {rudnn.name = "k_pages"},
                %v_pages: tensor<?x16x?x64xf32> {rudnn.name = "v_pages"},
                %block_table: tensor<?x?xi32> {rudnn.name = "block_table"},
                %cache_lengths: tensor<?xi32> {rudnn.name = "cache_lengths"})
    -> (tensor<?x?x?x64xf32> {rudnn.name = "o"},
        tensor<?x16x?x64xf32> {rudnn.name = "k_pages"},
        tensor<?x16x?x64xf32> {rudnn.name = "v_pages"}) {
  %o, %k_pages_out, %v_pages_out, %lse, %status =
      rudnn.kv_cache_attention_paged %q, %k, %v pages(%k_pages, %v_pages)
      block_table %block_table lengths %cache_lengths
      : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>,
         tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>, tensor<?x?xi32>,
         tensor<?xi32>)
      -> (tensor<?x?x?x64xf32>, tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>,
          tensor<?x?x?xf32>, tensor<?xi32>)
  return %o, %k_pages_out, %v_pages_out
      : tensor<?x?x?x64xf32>, tensor<?x16x?x64xf32>, tensor<?x16x?x64xf32>
}
