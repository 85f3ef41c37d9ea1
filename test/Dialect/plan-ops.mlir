// RUN: rudnn-opt %s | rudnn-opt | FileCheck %s
// RUN: rudnn-opt %s -mlir-print-op-generic | rudnn-opt | FileCheck %s

// A plan with every access of buffer (an output aliasing an input, an
// in-place one, a workspace zeroed at each call), parameters read from a bound view, derived from others or
// chosen at the call (a split count),
// an outlined kernel and a guarded launch binding buffers, a null pointer,
// parameters and a constant.
// CHECK-LABEL: rudnn.plan @axpy params ["N", "N4", "S"] sources [#rudnn.dim<buffer = "x", index = 0, divisor = 1>, #rudnn.size<constant = 4, params = ["N"], divisor = 1>, #rudnn.split<blocks = <constant = 1, params = ["N"], divisor = 64>, target = 264, max = <constant = 1, params = ["N"], divisor = 256>>] {
// CHECK: rudnn.buffer @x "in"
// CHECK: rudnn.buffer @y "out"
// CHECK: rudnn.buffer @z "out" aliases @x
// CHECK: rudnn.buffer @cache "inout"
// CHECK: rudnn.buffer @scratch "workspace" bytes <constant = 4, params = ["N"], divisor = 1>
// CHECK: rudnn.buffer @counter "workspace" zeroed bytes <constant = 4, params = [], divisor = 1>
// CHECK: rudnn.kernel @k threads 128 shared_bytes 65536 cooperative {
// CHECK-NEXT: ^bb0(%[[G:.*]]: tensor<?x?x?x16xf32>):
// CHECK-NEXT: %[[GAMMA:.*]] = rudnn.chunk_decay %[[G]] chunk 16
// CHECK-NEXT: rudnn.yield %[[GAMMA]] : tensor<?x?x?x16x16xf32>
// CHECK: rudnn.launch @k grid [#rudnn.size<constant = 1, params = ["N"], divisor = 64>, #rudnn.size<constant = 1, params = [], divisor = 1>, #rudnn.size<constant = 1, params = [], divisor = 1>] args [@x, @y, 0, #rudnn.param<name = "N", bits = 32>, 2.500000e-01 : f32] {guard = "N", guard_max = 100 : i64, guard_min = 2 : i64}
// CHECK: rudnn.launch @k grid {{.*}} args [@x, @y, #rudnn.param<name = "N", bits = 32>] {repeat = "N"}
rudnn.plan @axpy params ["N", "N4", "S"] sources [#rudnn.dim<buffer = "x", index = 0, divisor = 1>, #rudnn.size<constant = 4, params = ["N"], divisor = 1>, #rudnn.split<blocks = #rudnn.size<constant = 1, params = ["N"], divisor = 64>, target = 264, max = #rudnn.size<constant = 1, params = ["N"], divisor = 256>>] {
  rudnn.buffer @x "in"
  rudnn.buffer @y "out"
  rudnn.buffer @z "out" aliases @x
  rudnn.buffer @cache "inout"
  rudnn.buffer @scratch "workspace" bytes #rudnn.size<constant = 4, params = ["N"], divisor = 1>
  rudnn.buffer @counter "workspace" zeroed bytes #rudnn.size<constant = 4, params = [], divisor = 1>
  rudnn.kernel @k threads 128 shared_bytes 65536 cooperative {
  ^bb0(%g: tensor<?x?x?x16xf32>):
    %gamma = rudnn.chunk_decay %g chunk 16 : tensor<?x?x?x16xf32> -> tensor<?x?x?x16x16xf32>
    rudnn.yield %gamma : tensor<?x?x?x16x16xf32>
  }
  rudnn.launch @k grid [#rudnn.size<constant = 1, params = ["N"], divisor = 64>, #rudnn.size<constant = 1, params = [], divisor = 1>, #rudnn.size<constant = 1, params = [], divisor = 1>] args [@x, @y, 0 : i64, #rudnn.param<name = "N", bits = 32>, 0.25 : f32] {guard = "N", guard_min = 2 : i64, guard_max = 100 : i64}
  rudnn.launch @k grid [#rudnn.size<constant = 1, params = [], divisor = 1>, #rudnn.size<constant = 1, params = [], divisor = 1>, #rudnn.size<constant = 1, params = [], divisor = 1>] args [@x, @y, #rudnn.param<name = "N", bits = 32>] {repeat = "N"}
}
