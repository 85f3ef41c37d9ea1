// RUN: rudnn-opt %s -split-input-file -verify-diagnostics

// Sizes name parameters of the plan.
rudnn.plan @p params ["B"] {
  // expected-error @+1 {{'bytes' refers to "T", which is not a parameter of the plan}}
  rudnn.buffer @w "workspace" bytes #rudnn.size<constant = 4, params = ["T"], divisor = 1>
}

// -----

// Buffer accesses are in, out, inout or workspace.
rudnn.plan @p params [] {
  // expected-error @+1 {{access must be in, out, inout or workspace, got 'scratch'}}
  rudnn.buffer @w "scratch"
}

// -----

// A workspace buffer has a size.
rudnn.plan @p params [] {
  // expected-error @+1 {{a workspace buffer needs 'bytes'}}
  rudnn.buffer @w "workspace"
}

// -----

// Only workspace is zeroed at each call: the caller's tensors are its own.
rudnn.plan @p params [] {
  // expected-error @+1 {{only a workspace buffer is 'zeroed'}}
  rudnn.buffer @o "out" zeroed
}

// -----

// Launches name kernels of the plan.
rudnn.plan @p params [] {
  // expected-error @+1 {{launches @missing, which is not a rudnn.kernel of the plan}}
  rudnn.launch @missing grid [#rudnn.size<constant = 1, params = [], divisor = 1>, #rudnn.size<constant = 1, params = [], divisor = 1>, #rudnn.size<constant = 1, params = [], divisor = 1>] args []
}

// -----

// Launch arguments bind buffers of the plan.
rudnn.plan @p params [] {
  rudnn.kernel @k threads 32 {
    rudnn.yield
  }
  // expected-error @+1 {{argument #0 binds @nowhere, which is not a buffer}}
  rudnn.launch @k grid [#rudnn.size<constant = 1, params = [], divisor = 1>, #rudnn.size<constant = 1, params = [], divisor = 1>, #rudnn.size<constant = 1, params = [], divisor = 1>] args [@nowhere]
}

// -----

// Integer arguments stand for null pointers.
rudnn.plan @p params [] {
  rudnn.kernel @k threads 32 {
    rudnn.yield
  }
  // expected-error @+1 {{argument #0: integers stand for null pointers and must be 0}}
  rudnn.launch @k grid [#rudnn.size<constant = 1, params = [], divisor = 1>, #rudnn.size<constant = 1, params = [], divisor = 1>, #rudnn.size<constant = 1, params = [], divisor = 1>] args [7 : i64]
}

// -----

// A guard needs its range.
rudnn.plan @p params ["T"] {
  rudnn.kernel @k threads 32 {
    rudnn.yield
  }
  // expected-error @+1 {{'guard', 'guard_min' and 'guard_max' go together}}
  rudnn.launch @k grid [#rudnn.size<constant = 1, params = [], divisor = 1>, #rudnn.size<constant = 1, params = [], divisor = 1>, #rudnn.size<constant = 1, params = [], divisor = 1>] args [] {guard = "T"}
}

// -----

// A kernel holds primitives only.
rudnn.plan @p params [] {
  rudnn.kernel @k threads 32 {
  ^bb0(%n: index):
    // expected-error @+1 {{'tensor.empty' op is not a primitive: a rudnn.kernel holds primitives only}}
    %t = tensor.empty(%n) : tensor<?xf32>
    rudnn.yield
  }
}

// -----

// A kernel's region ends with what it yields.
rudnn.plan @p params [] {
  // expected-error @+1 {{body must end with rudnn.yield}}
  rudnn.kernel @k threads 32 {
  ^bb0(%g: tensor<?x?x?x16xf32>):
    %gamma = rudnn.chunk_decay %g chunk 16 : tensor<?x?x?x16xf32> -> tensor<?x?x?x16x16xf32>
  }
}

// -----

// Size divisors are positive.
rudnn.plan @p params [] {
  // expected-error @+1 {{size divisor must be positive, got 0}}
  rudnn.buffer @w "workspace" bytes #rudnn.size<constant = 4, params = [], divisor = 0>
}

// -----

// A grid is three sizes, whatever else its entries are.
rudnn.plan @p params [] {
  rudnn.kernel @k threads 32 {
    rudnn.yield
  }
  // expected-error @+1 {{grid must be three #rudnn.size}}
  rudnn.launch @k grid [1, 2, 3] args []
}

// -----

// A launch without its kernel is the launch verifier's error, reported
// before the plan looks the kernel up.
rudnn.plan @p params [] {
  // expected-error @+1 {{'rudnn.launch' op requires attribute 'kernel'}}
  "rudnn.launch"() {grid = [#rudnn.size<constant = 1, params = [], divisor = 1>, #rudnn.size<constant = 1, params = [], divisor = 1>, #rudnn.size<constant = 1, params = [], divisor = 1>], args = []} : () -> ()
}

// -----

// One source per parameter.
// expected-error @+1 {{has 1 sources for 2 parameters}}
rudnn.plan @p params ["B", "T"] sources [#rudnn.dim<buffer = "x", index = 0, divisor = 1>] {
  rudnn.buffer @x "in"
}

// -----

// Sources read argument or result buffers, not the workspace.
// expected-error @+1 {{source #0 reads 'w', which is not an argument or result buffer of the plan}}
rudnn.plan @p params ["B"] sources [#rudnn.stride<buffer = "w", index = 0>] {
  rudnn.buffer @w "workspace" bytes #rudnn.size<constant = 4, params = [], divisor = 1>
}

// -----

// A source is a dim, a stride or a size of the parameters before it.
// expected-error @+1 {{source #0 must be a #rudnn.dim, #rudnn.stride, #rudnn.size, #rudnn.split or #rudnn.sum, got 3 : i64}}
rudnn.plan @p params ["B"] sources [3] {
  rudnn.buffer @x "in"
}

// -----

// Divisors are positive.
// expected-error @+1 {{#rudnn.dim needs a buffer, a dim index >= 0 and a divisor >= 1, got buffer "x", index 1, divisor 0}}
func.func private @f() attributes {s = #rudnn.dim<buffer = "x", index = 1, divisor = 0>}

// -----

// Only an output may alias, and only an input.
rudnn.plan @p params [] {
  rudnn.buffer @x "in"
  // expected-error @+1 {{only an 'out' buffer may alias another}}
  rudnn.buffer @y "inout" aliases @x
}

// -----

rudnn.plan @p params [] {
  rudnn.buffer @x "out"
  // expected-error @+1 {{aliases @x, which is not an 'in' buffer of the plan}}
  rudnn.buffer @y "out" aliases @x
}

// -----

// A launch repeats over a parameter of the plan.
rudnn.plan @p params ["B"] {
  rudnn.kernel @k threads 32 {
    rudnn.yield
  }
  // expected-error @+1 {{repeats over 'T', which is not a parameter of the plan}}
  rudnn.launch @k grid [#rudnn.size<constant = 1, params = [], divisor = 1>, #rudnn.size<constant = 1, params = [], divisor = 1>, #rudnn.size<constant = 1, params = [], divisor = 1>] args [] {repeat = "T"}
}

// -----

// Dynamic shared memory stays within what a block can opt in to.
rudnn.plan @p params [] {
  // expected-error @+1 {{shared_bytes must be in [0, 232448], got 300000}}
  rudnn.kernel @k threads 32 shared_bytes 300000 {
    rudnn.yield
  }
}

// -----

// The kernel report divides a launch's FLOPs by the model's rates.
rudnn.plan @p params [] {
  // expected-error @+1 {{flops_per_shared_byte must be positive, got 0}}
  rudnn.kernel @k threads 32 flops_per_shared_byte 0 {
    rudnn.yield
  }
}

// -----

// Nor by a zero rate of bytes added in L2.
rudnn.plan @p params [] {
  // expected-error @+1 {{flops_per_reduced_byte must be positive, got 0}}
  rudnn.kernel @k threads 32 flops_per_reduced_byte 0 {
    rudnn.yield
  }
}
