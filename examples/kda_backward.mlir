// Kimi Delta Attention backward in f32 with K = V = 64: the gradients of
// <do, o> + <dfinal_state, final_state> through the forward of kda.mlir.
// Batch, sequence length and heads are dynamic: one compiled plan serves
// every size.
//
//   rudnn-run examples/kda_backward.mlir --random 0 --check

func.func @main(%q: tensor<?x?x?x64xf32> {rudnn.name = "q"},
                %k: tensor<?x?x?x64xf32> {rudnn.name = "k"},
                %v: tensor<?x?x?x64xf32> {rudnn.name = "v"},
                %g: tensor<?x?x?x64xf32> {rudnn.name = "g"},
                %beta: tensor<?x?x?xf32> {rudnn.name = "beta"},
                %initial_state: tensor<?x?x64x64xf32> {rudnn.name = "initial_state"},
                %do: tensor<?x?x?x64xf32> {rudnn.name = "do"},
                %dfinal_state: tensor<?x?x64x64xf32> {rudnn.name = "dfinal_state"})
    -> (tensor<?x?x?x64xf32> {rudnn.name = "dq"},
        tensor<?x?x?x64xf32> {rudnn.name = "dk"},
        tensor<?x?x?x64xf32> {rudnn.name = "dv"},
        tensor<?x?x?x64xf32> {rudnn.name = "dg"},
        tensor<?x?x?xf32> {rudnn.name = "dbeta"},
        tensor<?x?x64x64xf32> {rudnn.name = "dinitial_state"}) {
  %dq, %dk, %dv, %dg, %dbeta, %dinitial_state = rudnn.kda_backward
      %q, %k, %v, %g, %beta initial_state %initial_state d_output %do
      d_final_state %dfinal_state
      : (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>,
         tensor<?x?x?x64xf32>, tensor<?x?x?xf32>, tensor<?x?x64x64xf32>,
         tensor<?x?x?x64xf32>, tensor<?x?x64x64xf32>)
      -> (tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>,
          tensor<?x?x?x64xf32>, tensor<?x?x?xf32>, tensor<?x?x64x64xf32>)
  return %dq, %dk, %dv, %dg, %dbeta, %dinitial_state
      : tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>, tensor<?x?x?x64xf32>,
        tensor<?x?x?x64xf32>, tensor<?x?x?xf32>, tensor<?x?x64x64xf32>
}
