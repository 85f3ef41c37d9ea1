// --check compares each result with its float64 reference relative to the
// result, or to its sensitivity where cancellation leaves the result smaller
// than the rounding of the terms it is made of: here a bf16 final state of
// norm 0.1 left by terms of size 1 (which a plain relative error of 2.7e-2
// failed), and says which basis it used.
//
// RUN: rudnn-run %s --backend emulation --random 27 --dims B=1,T=40,H=1 --check --cache-dir "" | FileCheck %s
// CHECK: check o: relative error {{.*}} (tolerance 1e-02) ok
// CHECK: check final_state: relative error {{[0-9.e-]+}} (tolerance 1e-02) ok (relative to the result's sensitivity {{.*}}, above its norm 1.035e-01)

func.func @main(%q: tensor<?x?x?x1xbf16> {rudnn.name = "q"},
                %k: tensor<?x?x?x1xbf16> {rudnn.name = "k"},
                %v: tensor<?x?x?x1xbf16> {rudnn.name = "v"},
                %g: tensor<?x?x?x1xf32> {rudnn.name = "g"},
                %beta: tensor<?x?x?xbf16> {rudnn.name = "beta"},
                %initial_state: tensor<?x?x1x1xf32> {rudnn.name = "initial_state"})
    -> (tensor<?x?x?x1xbf16> {rudnn.name = "o"},
        tensor<?x?x1x1xf32> {rudnn.name = "final_state"}) {
  %o, %final_state = rudnn.kda %q, %k, %v, %g, %beta
      initial_state %initial_state
      : (tensor<?x?x?x1xbf16>, tensor<?x?x?x1xbf16>, tensor<?x?x?x1xbf16>,
         tensor<?x?x?x1xf32>, tensor<?x?x?xbf16>, tensor<?x?x1x1xf32>)
      -> (tensor<?x?x?x1xbf16>, tensor<?x?x1x1xf32>)
  return %o, %final_state : tensor<?x?x?x1xbf16>, tensor<?x?x1x1xf32>
}
