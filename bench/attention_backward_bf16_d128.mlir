// The attention backward at D = E = 128, bf16, self attention, rows
// 16-byte aligned, in its two modes on Hopper: dq summed with atomics
// (@atomic) and in key-tile order (@deterministic), not causal and causal.
// GPU checks time each at one shape, so the first GPU run gives the cost of
// the deterministic mode:
//
//   rudnn-run bench/attention_backward_bf16_d128.mlir --entry atomic --random 0 --dims B=4,T=4096,S=4096,H=16,G=16 --bench 20

func.func @atomic(%q: tensor<?x?x?x128xbf16> {rudnn.name = "q", rudnn.align = 16 : i64},
    %k: tensor<?x?x?x128xbf16> {rudnn.name = "k", rudnn.align = 16 : i64},
    %v: tensor<?x?x?x128xbf16> {rudnn.name = "v", rudnn.align = 16 : i64},
    %o: tensor<?x?x?x128xbf16> {rudnn.name = "o", rudnn.align = 16 : i64},
    %lse: tensor<?x?x?xf32> {rudnn.name = "lse"},
    %do: tensor<?x?x?x128xbf16> {rudnn.name = "d_output", rudnn.align = 16 : i64})
    -> (tensor<?x?x?x128xbf16> {rudnn.name = "dq", rudnn.align = 16 : i64},
        tensor<?x?x?x128xbf16> {rudnn.name = "dk", rudnn.align = 16 : i64},
        tensor<?x?x?x128xbf16> {rudnn.name = "dv", rudnn.align = 16 : i64}) {
  %dq, %dk, %dv = rudnn.attention_backward %q, %k, %v output(%o, %lse)
      gradient %do
      : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
         tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>,
         tensor<?x?x?x128xbf16>)
      -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
          tensor<?x?x?x128xbf16>)
  return %dq, %dk, %dv
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
}

func.func @deterministic(%q: tensor<?x?x?x128xbf16> {rudnn.name = "q", rudnn.align = 16 : i64},
    %k: tensor<?x?x?x128xbf16> {rudnn.name = "k", rudnn.align = 16 : i64},
    %v: tensor<?x?x?x128xbf16> {rudnn.name = "v", rudnn.align = 16 : i64},
    %o: tensor<?x?x?x128xbf16> {rudnn.name = "o", rudnn.align = 16 : i64},
    %lse: tensor<?x?x?xf32> {rudnn.name = "lse"},
    %do: tensor<?x?x?x128xbf16> {rudnn.name = "d_output", rudnn.align = 16 : i64})
    -> (tensor<?x?x?x128xbf16> {rudnn.name = "dq", rudnn.align = 16 : i64},
        tensor<?x?x?x128xbf16> {rudnn.name = "dk", rudnn.align = 16 : i64},
        tensor<?x?x?x128xbf16> {rudnn.name = "dv", rudnn.align = 16 : i64}) {
  %dq, %dk, %dv = rudnn.attention_backward %q, %k, %v output(%o, %lse)
      gradient %do deterministic
      : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
         tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>,
         tensor<?x?x?x128xbf16>)
      -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
          tensor<?x?x?x128xbf16>)
  return %dq, %dk, %dv
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
}

func.func @atomic_causal(%q: tensor<?x?x?x128xbf16> {rudnn.name = "q", rudnn.align = 16 : i64},
    %k: tensor<?x?x?x128xbf16> {rudnn.name = "k", rudnn.align = 16 : i64},
    %v: tensor<?x?x?x128xbf16> {rudnn.name = "v", rudnn.align = 16 : i64},
    %o: tensor<?x?x?x128xbf16> {rudnn.name = "o", rudnn.align = 16 : i64},
    %lse: tensor<?x?x?xf32> {rudnn.name = "lse"},
    %do: tensor<?x?x?x128xbf16> {rudnn.name = "d_output", rudnn.align = 16 : i64})
    -> (tensor<?x?x?x128xbf16> {rudnn.name = "dq", rudnn.align = 16 : i64},
        tensor<?x?x?x128xbf16> {rudnn.name = "dk", rudnn.align = 16 : i64},
        tensor<?x?x?x128xbf16> {rudnn.name = "dv", rudnn.align = 16 : i64}) {
  %dq, %dk, %dv = rudnn.attention_backward %q, %k, %v output(%o, %lse)
      gradient %do causal
      : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
         tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>,
         tensor<?x?x?x128xbf16>)
      -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
          tensor<?x?x?x128xbf16>)
  return %dq, %dk, %dv
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
}

func.func @deterministic_causal(%q: tensor<?x?x?x128xbf16> {rudnn.name = "q", rudnn.align = 16 : i64},
    %k: tensor<?x?x?x128xbf16> {rudnn.name = "k", rudnn.align = 16 : i64},
    %v: tensor<?x?x?x128xbf16> {rudnn.name = "v", rudnn.align = 16 : i64},
    %o: tensor<?x?x?x128xbf16> {rudnn.name = "o", rudnn.align = 16 : i64},
    %lse: tensor<?x?x?xf32> {rudnn.name = "lse"},
    %do: tensor<?x?x?x128xbf16> {rudnn.name = "d_output", rudnn.align = 16 : i64})
    -> (tensor<?x?x?x128xbf16> {rudnn.name = "dq", rudnn.align = 16 : i64},
        tensor<?x?x?x128xbf16> {rudnn.name = "dk", rudnn.align = 16 : i64},
        tensor<?x?x?x128xbf16> {rudnn.name = "dv", rudnn.align = 16 : i64}) {
  %dq, %dk, %dv = rudnn.attention_backward %q, %k, %v output(%o, %lse)
      gradient %do causal deterministic
      : (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
         tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?xf32>,
         tensor<?x?x?x128xbf16>)
      -> (tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>,
          tensor<?x?x?x128xbf16>)
  return %dq, %dk, %dv
      : tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>, tensor<?x?x?x128xbf16>
}
