// rudnn-bench-decode on the emulation backend: small shapes, contiguous and
// paged, run and report their medians and bandwidths, and write the same as
// JSON; GPU-sized shapes and bad shapes are refused. (No input is read:
// this file holds only the commands.)

// REQUIRES: benchmarks
// RUN: rudnn-bench-decode --backend emulation --shapes "2,40,0;1,70,16" --repeats 2 --warmup 1 --json %t.json | FileCheck %s
// RUN: %python -c "import json, sys; r = json.load(open(sys.argv[1])); assert (r['op'], r['timing'], r['warmup'], r['repeats']) == ('decode', 'host clock', 1, 2), r; x, y = r['results']; assert (x['B'], x['L'], x['page']) == (2, 40, 0), x; assert y['page'] == 16 and y['bytes'] == 71 * 8 * 256 * 2 and min(x['ms'], y['ms']) > 0, r" %t.json
// RUN: not rudnn-bench-decode --backend emulation --shapes "64,65536,0" 2>&1 | FileCheck %s --check-prefix=LARGE
// RUN: not rudnn-bench-decode --backend emulation --shapes "1,64,300" 2>&1 | FileCheck %s --check-prefix=SHAPES

// CHECK: device: CPU emulation
// CHECK-NEXT: B,L,page ms GB/s copies
// CHECK-NEXT: 2,40,0 {{[0-9.]+}} {{[0-9.]+}} {{[0-9]+}}
// CHECK-NEXT: 1,70,16 {{[0-9.]+}} {{[0-9.]+}} {{[0-9]+}}

// LARGE: rudnn-bench-decode: shape 64,65536 is GPU-sized and the backend is emulation (no GPU): pass --allow-large to run it anyway, or smaller --shapes
// SHAPES: rudnn-bench-decode: --shapes wants B,L,page (page 0: contiguous, else 1 to 256);..., got '1,64,300'
