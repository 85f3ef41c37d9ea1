// RMSNorm over rows of 4096 features, f32, any number of rows:
// y = x / sqrt(mean(x²) + 1e-6) · gamma, with each row's rstd.
func.func @rms_norm(%x: tensor<?x4096xf32>, %gamma: tensor<4096xf32>)
    -> (tensor<?x4096xf32>, tensor<?xf32>) {
  %y, %rstd, %h = rudnn.rms_norm %x gamma %gamma eps 1.0e-06
      : (tensor<?x4096xf32>, tensor<4096xf32>)
      -> (tensor<?x4096xf32>, tensor<?xf32>, tensor<?x4096xf32>)
  return %y, %rstd : tensor<?x4096xf32>, tensor<?xf32>
}
