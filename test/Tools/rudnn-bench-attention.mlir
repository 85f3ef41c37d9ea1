// rudnn-bench-attention on the emulation backend: small shapes run, report
// the medians and rates of the forward and of a forward and backward, and
// write the same as JSON; GPU-sized shapes and
// bad options are refused. (No input is read: this file holds only the
// commands.)

// REQUIRES: benchmarks
// RUN: rudnn-bench-attention --backend emulation --shapes "1,70,2,64,1;2,33,2,16,0" --repeats 2 --warmup 1 --json %t.json | FileCheck %s
// RUN: %python -c "import json, sys; r = json.load(open(sys.argv[1])); assert (r['op'], r['timing'], r['warmup'], r['repeats']) == ('attention', 'host clock', 1, 2), r; x, y = r['results']; assert (x['B'], x['T'], x['H'], x['D'], x['causal']) == (1, 70, 2, 64, True), x; assert y['causal'] is False and min(x['ms'], y['ms'], x['fwd_bwd_ms'], y['fwd_bwd_ms']) > 0, r" %t.json
// RUN: not rudnn-bench-attention --backend emulation --shapes "4,4096,16,128,1" 2>&1 | FileCheck %s --check-prefix=LARGE
// RUN: not rudnn-bench-attention --backend emulation --shapes "1,64,2,64" 2>&1 | FileCheck %s --check-prefix=SHAPES
// RUN: not rudnn-bench-attention --repeats 0 2>&1 | FileCheck %s --check-prefix=USAGE

// CHECK: device: CPU emulation
// CHECK-NEXT: B,T,H,D,causal fwd ms TFLOP/s fwd+bwd ms TFLOP/s
// CHECK-NEXT: 1,70,2,64,1 {{[0-9.]+}} {{[0-9.]+}} {{[0-9.]+}} {{[0-9.]+}}
// CHECK-NEXT: 2,33,2,16,0 {{[0-9.]+}} {{[0-9.]+}} {{[0-9.]+}} {{[0-9.]+}}

// LARGE: rudnn-bench-attention: shape 4,4096,16,128 is GPU-sized and the backend is emulation (no GPU): pass --allow-large to run it anyway, or smaller --shapes
// SHAPES: rudnn-bench-attention: --shapes wants B,T,H,D,causal(0|1);..., got '1,64,2,64'
// USAGE: rudnn-bench-attention: --repeats must be at least 1, --warmup at least 0
// USAGE-NEXT: usage: rudnn-bench-attention [options]:
