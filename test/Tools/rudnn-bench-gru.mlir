// rudnn-bench-gru on the emulation backend: small shapes in f32 and bf16,
// one and two layers and directions, run and report their medians (the
// forward, and a training step: the saving forward and the backward) and
// write the same as JSON. (No input is read: this file holds only the
// commands.)

// REQUIRES: benchmarks
// RUN: rudnn-bench-gru --backend emulation --shapes "12,3,4,2,2,32;8,2,3,1,1,16" --repeats 2 --warmup 1 --json %t.json | FileCheck %s
// RUN: %python -c "import json, sys; r = json.load(open(sys.argv[1])); assert (r['op'], r['warmup'], r['repeats']) == ('gru', 1, 2), r; x, y = r['results']; assert (x['H'], x['B'], x['T'], x['L'], x['D'], x['bits']) == (12, 3, 4, 2, 2, 32), x; assert y['bits'] == 16 and min(x['ms'], y['ms'], x['train_ms'], y['train_ms'], x['strict_f32']['ms'], x['strict_f32']['train_ms']) > 0, r; assert x['tf32'] and not y['tf32'], r" %t.json

// CHECK: device: CPU emulation
// CHECK-NEXT: H,B,T,L,D,bits ms train ms
// CHECK-NEXT: 12,3,4,2,2,32 tf32 {{[0-9.]+}} {{[0-9.]+}}
// CHECK-NEXT: 12,3,4,2,2,32 f32 {{[0-9.]+}} {{[0-9.]+}}
// CHECK-NEXT: 8,2,3,1,1,16 {{[0-9.]+}} {{[0-9.]+}}
