// The mean and population variance of each row of 777 features, f32, any
// number of rows, in one pass (Welford's update, Chan's merge).
func.func @main(%x: tensor<?x777xf32> {rudnn.name = "x"})
    -> (tensor<?xf32> {rudnn.name = "mean"},
        tensor<?xf32> {rudnn.name = "var"}) {
  %mean, %var = rudnn.moments %x
      : (tensor<?x777xf32>) -> (tensor<?xf32>, tensor<?xf32>)
  return %mean, %var : tensor<?xf32>, tensor<?xf32>
}
