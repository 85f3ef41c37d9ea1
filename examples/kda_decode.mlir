// One decoding step of Kimi Delta Attention over a serving engine's state
// pool, bf16 with K = V = 64: entry b's new token starts from
// state_pool[slots[b]] and leaves its state there, in place. Entries,
// heads and the pool's size are dynamic; an entry whose slot is outside
// the pool or shared with another entry is refused (status 1).
//
//   rudnn-run examples/kda_decode.mlir --random 1 --dims B=5,H=2,P=8 --check

func.func @main(%q: tensor<?x1x?x64xbf16> {rudnn.name = "q"},
                %k: tensor<?x1x?x64xbf16> {rudnn.name = "k"},
                %v: tensor<?x1x?x64xbf16> {rudnn.name = "v"},
                %g: tensor<?x1x?x64xf32> {rudnn.name = "g"},
                %beta: tensor<?x1x?xbf16> {rudnn.name = "beta"},
                %pool: tensor<?x?x64x64xbf16> {rudnn.name = "state_pool"},
                %slots: tensor<?xi32> {rudnn.name = "slots"})
    -> (tensor<?x1x?x64xbf16> {rudnn.name = "o"},
        tensor<?x?x64x64xbf16> {rudnn.name = "state_pool"},
        tensor<?xi32> {rudnn.name = "status"}) {
  %o, %pool_out, %status = rudnn.kda_decode %q, %k, %v, %g, %beta
      pool(%pool, %slots)
      : (tensor<?x1x?x64xbf16>, tensor<?x1x?x64xbf16>, tensor<?x1x?x64xbf16>,
         tensor<?x1x?x64xf32>, tensor<?x1x?xbf16>, tensor<?x?x64x64xbf16>,
         tensor<?xi32>)
      -> (tensor<?x1x?x64xbf16>, tensor<?x?x64x64xbf16>, tensor<?xi32>)
  return %o, %pool_out, %status
      : tensor<?x1x?x64xbf16>, tensor<?x?x64x64xbf16>, tensor<?xi32>
}
