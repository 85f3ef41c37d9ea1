// A decoding step on raw inputs as a model's projections give them: q and k
// normalised, beta from logits and Kimi Linear's gate from a_log and
// dt_bias, each a pass before the pool step, checked against the float64
// reference with the same transforms.
//
// RUN: rudnn-run %s --backend emulation --random 4 --dims B=3,T=2,H=2,P=5 --check --cache-dir "" | FileCheck %s
// CHECK: check o: relative error {{.*}} ok
// CHECK: check state_pool: relative error {{.*}} ok
// CHECK: check status: relative error 0.000e+00 {{.*}} ok
//
// RUN: rudnn-opt %s -rudnn-specialize -rudnn-decompose | FileCheck %s --check-prefix=IR
// IR-LABEL: func.func @main
// IR-DAG: %[[Q:[0-9]+]] = rudnn.l2_normalize %arg0
// IR-DAG: %[[K:[0-9]+]] = rudnn.l2_normalize %arg1
// IR-DAG: %[[G:[0-9]+]] = rudnn.kda_gate %arg3 a_log %arg7 bias %arg8
// IR-DAG: %[[BETA:[0-9]+]] = rudnn.sigmoid %arg4
// IR: rudnn.kda_pool_step %[[Q]], %[[K]], %arg2, %[[G]], %[[BETA]] pool(%arg5, %arg6)

func.func @main(%q: tensor<?x?x?x32xf32> {rudnn.name = "q"},
                %k: tensor<?x?x?x32xf32> {rudnn.name = "k"},
                %v: tensor<?x?x?x16xf32> {rudnn.name = "v"},
                %g: tensor<?x?x?x32xf32> {rudnn.name = "g"},
                %beta: tensor<?x?x?xf32> {rudnn.name = "beta"},
                %pool: tensor<?x?x32x16xf32> {rudnn.name = "state_pool"},
                %slots: tensor<?xi32> {rudnn.name = "slots"},
                %a_log: tensor<?xf32> {rudnn.name = "a_log"},
                %dt_bias: tensor<?x32xf32> {rudnn.name = "dt_bias"})
    -> (tensor<?x?x?x16xf32> {rudnn.name = "o"},
        tensor<?x?x32x16xf32> {rudnn.name = "state_pool"},
        tensor<?xi32> {rudnn.name = "status"}) {
  %o, %pool_out, %status = rudnn.kda_decode %q, %k, %v, %g, %beta
      pool(%pool, %slots) a_log %a_log dt_bias %dt_bias qk_l2norm beta_logits
      : (tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>, tensor<?x?x?x16xf32>,
         tensor<?x?x?x32xf32>, tensor<?x?x?xf32>, tensor<?x?x32x16xf32>,
         tensor<?xi32>, tensor<?xf32>, tensor<?x32xf32>)
      -> (tensor<?x?x?x16xf32>, tensor<?x?x32x16xf32>, tensor<?xi32>)
  return %o, %pool_out, %status
      : tensor<?x?x?x16xf32>, tensor<?x?x32x16xf32>, tensor<?xi32>
}
