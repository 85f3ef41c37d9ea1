// LayerNorm over rows of 1000 features, f32, any number of rows:
// y = (x − mean) / sqrt(var + 1e-5) · gamma + beta, with each row's mean
// and rstd (what the backward reads).
func.func @main(%x: tensor<?x1000xf32> {rudnn.name = "x"},
                %gamma: tensor<1000xf32> {rudnn.name = "gamma"},
                %beta: tensor<1000xf32> {rudnn.name = "beta"})
    -> (tensor<?x1000xf32> {rudnn.name = "y"},
        tensor<?xf32> {rudnn.name = "mean"},
        tensor<?xf32> {rudnn.name = "rstd"}) {
  %y, %mean, %rstd, %h = rudnn.layer_norm %x gamma %gamma beta %beta
      eps 1.0e-05
      : (tensor<?x1000xf32>, tensor<1000xf32>, tensor<1000xf32>)
      -> (tensor<?x1000xf32>, tensor<?xf32>, tensor<?xf32>,
          tensor<?x1000xf32>)
  return %y, %mean, %rstd : tensor<?x1000xf32>, tensor<?xf32>, tensor<?xf32>
}
