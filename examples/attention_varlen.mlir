// Causal attention in bf16 over a packed batch of sequences of their own
// lengths, as flash_attn_varlen_func takes them: every entry's queries,
// keys and values one after the other, cu_seqlens_q and cu_seqlens_k
// [B + 1] marking where each entry starts. D = E = 64, GQA.
//
//   rudnn-run examples/attention_varlen.mlir --random 0 --dims T=300,S=260,C=6,H=4,G=2 --check

func.func @main(%q: tensor<?x?x64xbf16> {rudnn.name = "q"},
                %k: tensor<?x?x64xbf16> {rudnn.name = "k"},
                %v: tensor<?x?x64xbf16> {rudnn.name = "v"},
                %cu_seqlens_q: tensor<?xi32> {rudnn.name = "cu_seqlens_q"},
                %cu_seqlens_k: tensor<?xi32> {rudnn.name = "cu_seqlens_k"})
    -> (tensor<?x?x64xbf16> {rudnn.name = "o"},
        tensor<?x?xf32> {rudnn.name = "lse"}) {
  %o, %lse = rudnn.attention_varlen %q, %k, %v
      cu_seqlens(%cu_seqlens_q, %cu_seqlens_k) causal
      : (tensor<?x?x64xbf16>, tensor<?x?x64xbf16>, tensor<?x?x64xbf16>,
         tensor<?xi32>, tensor<?xi32>)
      -> (tensor<?x?x64xbf16>, tensor<?x?xf32>)
  return %o, %lse : tensor<?x?x64xbf16>, tensor<?x?xf32>
}
