// RMSNorm over rows of 4096 features, f32, any number of rows:
// y = x / sqrt(mean(x²) + 1e-6) · gamma, with each row's rstd.
func.func @main(%x: tensor<?x4096xf32> {rudnn.name = "x"},
                %gamma: tensor<4096xf32> {rudnn.name = "gamma"})
    -> (tensor<?x4096xf32> {rudnn.name = "y"},
        tensor<?xf32> {rudnn.name = "rstd"}) {
  %y, %rstd, %h = rudnn.rms_norm %x gamma %gamma eps 1.0e-06
      : (tensor<?x4096xf32>, tensor<4096xf32>)
      -> (tensor<?x4096xf32>, tensor<?xf32>, tensor<?x4096xf32>)
  return %y, %rstd : tensor<?x4096xf32>, tensor<?xf32>
}
