// RUN: rudnn-opt %s -split-input-file -verify-diagnostics

// One case per region.
func.func @count(%q: tensor<?x?xf32>) {
  // expected-error @+1 {{needs one case per region, got 2 cases and 1 regions}}
  %r = rudnn.dim_switch %q[1] cases [1, 2] : tensor<?x?xf32> -> tensor<?x?xf32> {
    rudnn.yield %q : tensor<?x?xf32>
  }
  return
}

// -----

// Cases are the ranges' lower bounds, ascending.
func.func @order(%q: tensor<?x?xf32>) {
  // expected-error @+1 {{cases must be ascending lower bounds from 0 up}}
  %r = rudnn.dim_switch %q[1] cases [2, 2] : tensor<?x?xf32> -> tensor<?x?xf32> {
    rudnn.yield %q : tensor<?x?xf32>
  }, {
    rudnn.yield %q : tensor<?x?xf32>
  }
  return
}

// -----

// The dim exists.
func.func @rank(%q: tensor<?x?xf32>) {
  // expected-error @+1 {{switches on dim 2 of a rank-2 tensor}}
  %r = rudnn.dim_switch %q[2] cases [0] : tensor<?x?xf32> -> tensor<?x?xf32> {
    rudnn.yield %q : tensor<?x?xf32>
  }
  return
}

// -----

// Every case yields the switch's results.
func.func @yield(%q: tensor<?x?xf32>) -> tensor<?x?xf32> {
  %r = rudnn.dim_switch %q[1] cases [0] : tensor<?x?xf32> -> tensor<?x?xf32> {
    // expected-error @+1 {{yields types that are not the rudnn.dim_switch's results}}
    rudnn.yield
  }
  return %r : tensor<?x?xf32>
}
