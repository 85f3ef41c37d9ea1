// The gradients of causal attention in bf16 over a packed batch of
// sequences of their own lengths (examples/attention_varlen.mlir's
// forward): its q, k, v and offsets, its results o [T, H, 64] and lse
// [H, T], and the gradient of the loss with respect to o. With --random the
// o and lse given are the float64 forward's on the drawn inputs.
//
//   rudnn-run examples/attention_varlen_backward.mlir --random 0 --dims T=300,S=260,C=6,H=4,G=2 --check

func.func @main(%q: tensor<?x?x64xbf16> {rudnn.name = "q"},
                %k: tensor<?x?x64xbf16> {rudnn.name = "k"},
                %v: tensor<?x?x64xbf16> {rudnn.name = "v"},
                %cu_seqlens_q: tensor<?xi32> {rudnn.name = "cu_seqlens_q"},
                %cu_seqlens_k: tensor<?xi32> {rudnn.name = "cu_seqlens_k"},
                %o: tensor<?x?x64xbf16> {rudnn.name = "o"},
                %lse: tensor<?x?xf32> {rudnn.name = "lse"},
                %d_output: tensor<?x?x64xbf16> {rudnn.name = "d_output"})
    -> (tensor<?x?x64xbf16> {rudnn.name = "dq"},
        tensor<?x?x64xbf16> {rudnn.name = "dk"},
        tensor<?x?x64xbf16> {rudnn.name = "dv"}) {
  %dq, %dk, %dv = rudnn.attention_varlen_backward %q, %k, %v
      cu_seqlens(%cu_seqlens_q, %cu_seqlens_k) output(%o, %lse)
      gradient %d_output causal
      : (tensor<?x?x64xbf16>, tensor<?x?x64xbf16>, tensor<?x?x64xbf16>,
         tensor<?xi32>, tensor<?xi32>, tensor<?x?x64xbf16>, tensor<?x?xf32>,
         tensor<?x?x64xbf16>)
      -> (tensor<?x?x64xbf16>, tensor<?x?x64xbf16>, tensor<?x?x64xbf16>)
  return %dq, %dk, %dv
      : tensor<?x?x64xbf16>, tensor<?x?x64xbf16>, tensor<?x?x64xbf16>
}
