// KDA with its inputs as models produce them, transformed inside: q and k
// L2-normalised, beta from logits, the gate from raw projections with
// a_log and dt_bias (Kimi Linear's softplus form, then the bounded form).
// The forward and every gradient, a_log's and dt_bias's included, checked
// against the float64 reference.
//
// RUN: rm -rf %t.kernels
// RUN: rudnn-run %s --entry forward --backend emulation --random 11 --dims B=2,T=70,H=3 --check --cache-dir %t.kernels | FileCheck %s --check-prefix=FWD
// FWD: check o: relative error {{.*}} ok
// FWD: check final_state: relative error {{.*}} ok
//
// RUN: rudnn-run %s --entry backward --backend emulation --random 12 --dims B=2,T=70,H=3 --check --cache-dir %t.kernels | FileCheck %s --check-prefix=BWD
// BWD-DAG: check dq: relative error {{.*}} ok
// BWD-DAG: check dk: relative error {{.*}} ok
// BWD-DAG: check dv: relative error {{.*}} ok
// BWD-DAG: check dg: relative error {{.*}} ok
// BWD-DAG: check dbeta: relative error {{.*}} ok
// BWD-DAG: check d_a_log: relative error {{.*}} ok
// BWD-DAG: check d_dt_bias: relative error {{.*}} ok
//
// RUN: rudnn-run %s --entry bounded_backward --backend emulation --random 13 --dims B=1,T=40,H=2 --check --cache-dir %t.kernels | FileCheck %s --check-prefix=BOUNDED
// BOUNDED-DAG: check dg: relative error {{.*}} ok
// BOUNDED-DAG: check d_a_log: relative error {{.*}} ok
//
// The decomposition: the transforms before the recurrence, their
// gradients after it.
// RUN: rudnn-opt %s -rudnn-specialize -rudnn-decompose | FileCheck %s --check-prefix=IR
// IR-LABEL: func.func @forward
// IR-DAG: rudnn.l2_normalize %arg0
// IR-DAG: rudnn.l2_normalize %arg1
// IR-DAG: rudnn.kda_gate %arg3 a_log %arg5 bias %arg6
// IR-DAG: rudnn.sigmoid %arg4
// IR-LABEL: func.func @backward
// IR: rudnn.chunk_gradients
// IR-DAG: rudnn.l2_normalize_backward %arg0
// IR-DAG: rudnn.sigmoid_backward %arg4
// IR-DAG: %[[DG:.*]], %[[PARTS:.*]] = rudnn.kda_gate_backward %arg3
// IR-DAG: rudnn.kda_gate_sums %[[PARTS]]

func.func @forward(%q: tensor<?x?x?x32xf32> {rudnn.name = "q"},
                   %k: tensor<?x?x?x32xf32> {rudnn.name = "k"},
                   %v: tensor<?x?x?x16xf32> {rudnn.name = "v"},
                   %g: tensor<?x?x?x32xf32> {rudnn.name = "g"},
                   %beta: tensor<?x?x?xf32> {rudnn.name = "beta"},
                   %a_log: tensor<?xf32> {rudnn.name = "a_log"},
                   %dt_bias: tensor<?x32xf32> {rudnn.name = "dt_bias"})
    -> (tensor<?x?x?x16xf32> {rudnn.name = "o"},
        tensor<?x?x32x16xf32> {rudnn.name = "final_state"}) {
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta a_log %a_log dt_bias %dt_bias
      qk_l2norm beta_logits
      : (tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>, tensor<?x?x?x16xf32>,
         tensor<?x?x?x32xf32>, tensor<?x?x?xf32>, tensor<?xf32>,
         tensor<?x32xf32>)
      -> (tensor<?x?x?x16xf32>, tensor<?x?x32x16xf32>)
  return %o, %s : tensor<?x?x?x16xf32>, tensor<?x?x32x16xf32>
}

func.func @backward(%q: tensor<?x?x?x32xf32> {rudnn.name = "q"},
                    %k: tensor<?x?x?x32xf32> {rudnn.name = "k"},
                    %v: tensor<?x?x?x16xf32> {rudnn.name = "v"},
                    %g: tensor<?x?x?x32xf32> {rudnn.name = "g"},
                    %beta: tensor<?x?x?xf32> {rudnn.name = "beta"},
                    %a_log: tensor<?xf32> {rudnn.name = "a_log"},
                    %dt_bias: tensor<?x32xf32> {rudnn.name = "dt_bias"},
                    %do: tensor<?x?x?x16xf32> {rudnn.name = "d_output"})
    -> (tensor<?x?x?x32xf32> {rudnn.name = "dq"},
        tensor<?x?x?x32xf32> {rudnn.name = "dk"},
        tensor<?x?x?x16xf32> {rudnn.name = "dv"},
        tensor<?x?x?x32xf32> {rudnn.name = "dg"},
        tensor<?x?x?xf32> {rudnn.name = "dbeta"},
        tensor<?xf32> {rudnn.name = "d_a_log"},
        tensor<?x32xf32> {rudnn.name = "d_dt_bias"}) {
  %dq, %dk, %dv, %dg, %dbeta, %da, %ddt = rudnn.kda_backward %q, %k, %v, %g,
      %beta d_output %do a_log %a_log dt_bias %dt_bias qk_l2norm beta_logits
      : (tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>, tensor<?x?x?x16xf32>,
         tensor<?x?x?x32xf32>, tensor<?x?x?xf32>, tensor<?x?x?x16xf32>,
         tensor<?xf32>, tensor<?x32xf32>)
      -> (tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>, tensor<?x?x?x16xf32>,
          tensor<?x?x?x32xf32>, tensor<?x?x?xf32>, tensor<?xf32>,
          tensor<?x32xf32>)
  return %dq, %dk, %dv, %dg, %dbeta, %da, %ddt
      : tensor<?x?x?x32xf32>, tensor<?x?x?x32xf32>, tensor<?x?x?x16xf32>,
        tensor<?x?x?x32xf32>, tensor<?x?x?xf32>, tensor<?xf32>,
        tensor<?x32xf32>
}

func.func @bounded_backward(%q: tensor<?x?x?x16xf32> {rudnn.name = "q"},
                            %k: tensor<?x?x?x16xf32> {rudnn.name = "k"},
                            %v: tensor<?x?x?x16xf32> {rudnn.name = "v"},
                            %g: tensor<?x?x?x16xf32> {rudnn.name = "g"},
                            %beta: tensor<?x?x?xf32> {rudnn.name = "beta"},
                            %a_log: tensor<?xf32> {rudnn.name = "a_log"},
                            %do: tensor<?x?x?x16xf32> {rudnn.name = "d_output"})
    -> (tensor<?x?x?x16xf32> {rudnn.name = "dq"},
        tensor<?x?x?x16xf32> {rudnn.name = "dk"},
        tensor<?x?x?x16xf32> {rudnn.name = "dv"},
        tensor<?x?x?x16xf32> {rudnn.name = "dg"},
        tensor<?x?x?xf32> {rudnn.name = "dbeta"},
        tensor<?xf32> {rudnn.name = "d_a_log"}) {
  %dq, %dk, %dv, %dg, %dbeta, %da = rudnn.kda_backward %q, %k, %v, %g, %beta
      d_output %do a_log %a_log gate_lower_bound -5.0
      : (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>,
         tensor<?x?x?x16xf32>, tensor<?x?x?xf32>, tensor<?x?x?x16xf32>,
         tensor<?xf32>)
      -> (tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>,
          tensor<?x?x?x16xf32>, tensor<?x?x?xf32>, tensor<?xf32>)
  return %dq, %dk, %dv, %dg, %dbeta, %da
      : tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>, tensor<?x?x?x16xf32>,
        tensor<?x?x?x16xf32>, tensor<?x?x?xf32>, tensor<?xf32>
}
