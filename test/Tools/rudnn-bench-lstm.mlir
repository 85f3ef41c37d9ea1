// rudnn-bench-lstm on the emulation backend: small shapes in f32 and bf16,
// one and two layers and directions, run and report their medians (the
// forward, and a training step: the saving forward and the backward; f32
// twice, products in TF32 as PyTorch's default and exact), and write the
// same as JSON; GPU-sized shapes and bad shapes are refused. (No
// input is read: this file holds only the commands.)

// REQUIRES: benchmarks
// RUN: rudnn-bench-lstm --backend emulation --shapes "12,3,4,2,2,32;8,2,3,1,1,16" --repeats 2 --warmup 1 --json %t.json | FileCheck %s
// RUN: %python -c "import json, sys; r = json.load(open(sys.argv[1])); assert (r['op'], r['timing'], r['warmup'], r['repeats']) == ('lstm', 'host clock', 1, 2), r; x, y = r['results']; assert (x['H'], x['B'], x['T'], x['L'], x['D'], x['bits']) == (12, 3, 4, 2, 2, 32), x; assert y['bits'] == 16 and min(x['ms'], y['ms'], x['train_ms'], y['train_ms'], x['strict_f32']['ms'], x['strict_f32']['train_ms']) > 0, r; assert x['tf32'] and not y['tf32'], r" %t.json
// RUN: not rudnn-bench-lstm --backend emulation --shapes "1024,64,512,1,1,16" 2>&1 | FileCheck %s --check-prefix=LARGE
// RUN: not rudnn-bench-lstm --backend emulation --shapes "64,1,8,1,3,16" 2>&1 | FileCheck %s --check-prefix=SHAPES

// CHECK: device: CPU emulation
// CHECK-NEXT: H,B,T,L,D,bits ms train ms
// CHECK-NEXT: 12,3,4,2,2,32 tf32 {{[0-9.]+}} {{[0-9.]+}}
// CHECK-NEXT: 12,3,4,2,2,32 f32 {{[0-9.]+}} {{[0-9.]+}}
// CHECK-NEXT: 8,2,3,1,1,16 {{[0-9.]+}} {{[0-9.]+}}

// LARGE: rudnn-bench-lstm: shape 1024,64,512 is GPU-sized and the backend is emulation (no GPU): pass --allow-large to run it anyway, or smaller --shapes
// SHAPES: rudnn-bench-lstm: --shapes wants H,B,T,L,D,bits (H 1 to 4096, D 1 or 2, bits 16 or 32);..., got '64,1,8,1,3,16'
