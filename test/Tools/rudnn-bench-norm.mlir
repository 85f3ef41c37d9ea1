// rudnn-bench-norm on the emulation backend: small shapes of LayerNorm and
// RMSNorm, forward and backward, f32 and bf16, run and report their
// medians and bandwidths, and write the same as JSON; GPU-sized shapes and
// bad shapes are refused. (No input is read: this file holds only the
// commands.)

// REQUIRES: benchmarks
// RUN: rudnn-bench-norm --backend emulation --shapes "12,100,32,layer,fwd;5,300,16,rms,bwd" --repeats 2 --warmup 1 --json %t.json | FileCheck %s
// RUN: %python -c "import json, sys; r = json.load(open(sys.argv[1])); assert (r['op'], r['timing'], r['warmup'], r['repeats']) == ('norm', 'host clock', 1, 2), r; x, y = r['results']; assert (x['rows'], x['C'], x['bits'], x['op'], x['pass']) == (12, 100, 32, 'layer', 'fwd'), x; assert (y['op'], y['pass'], y['bytes']) == ('rms', 'bwd', 3 * 5 * 300 * 2) and min(x['ms'], y['ms']) > 0, r" %t.json
// RUN: not rudnn-bench-norm --backend emulation --shapes "65536,16384,16,layer,fwd" 2>&1 | FileCheck %s --check-prefix=LARGE
// RUN: not rudnn-bench-norm --backend emulation --shapes "64,100,8,layer,fwd" 2>&1 | FileCheck %s --check-prefix=SHAPES

// CHECK: device: CPU emulation
// CHECK-NEXT: rows,C,bits,op,pass ms GB/s
// CHECK-NEXT: 12,100,32,layer,fwd {{[0-9.]+}} {{[0-9.]+}}
// CHECK-NEXT: 5,300,16,rms,bwd {{[0-9.]+}} {{[0-9.]+}}

// LARGE: rudnn-bench-norm: shape 65536,16384 is GPU-sized and the backend is emulation (no GPU): pass --allow-large to run it anyway, or smaller --shapes
// SHAPES: rudnn-bench-norm: --shapes wants rows,C,bits,op,pass (bits 16 or 32, op layer or rms, pass fwd or bwd);..., got '64,100,8,layer,fwd'
