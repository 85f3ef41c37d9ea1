// The mean and population variance of each row of 777 features, f32, any
// number of rows (Welford's update and Chan's merge).
func.func @moments(%x: tensor<?x777xf32>) -> (tensor<?xf32>, tensor<?xf32>) {
  %mean, %var = rudnn.moments %x
      : (tensor<?x777xf32>) -> (tensor<?xf32>, tensor<?xf32>)
  return %mean, %var : tensor<?xf32>, tensor<?xf32>
}
