// rudnn-bench-kda on the emulation backend: a small shape runs, reports
// its forward and training-step medians and each kernel of the step, and
// writes the same as JSON; GPU-sized shapes and bad options are refused.
// (No input is read: this file holds only the commands.)

// REQUIRES: benchmarks
// RUN: rudnn-bench-kda --backend emulation --shapes "1,33,2,16" --repeats 2 --warmup 1 --json %t.json | FileCheck %s
// RUN: %python -c "import json, sys; r = json.load(open(sys.argv[1])); x = r['results'][0]; assert (r['timing'], r['warmup'], r['repeats']) == ('host clock', 1, 2), r; assert (x['B'], x['T'], x['H'], x['K'], x['V']) == (1, 33, 2, 16, 16), x; assert x['ms'] > 0 and x['fwd_bwd_ms'] > 0 and len(x['step_kernels_ms']) == 4, x" %t.json
// RUN: not rudnn-bench-kda --backend emulation --shapes "1,32768,16,128" 2>&1 | FileCheck %s --check-prefix=LARGE
//
// Packed sequences of mixed lengths and grouped value heads, the other two
// kinds of case; their backward computes the forward's tiles again.
// RUN: rudnn-bench-kda --backend emulation --shapes "varlen:5+40+1,2,16;gva:1,20,1,2,16" --repeats 1 --warmup 1 --json %t.cases.json | FileCheck %s --check-prefix=CASES
// RUN: %python -c "import json, sys; r = json.load(open(sys.argv[1]))['results']; assert [x['case'] for x in r] == ['varlen:5+40+1,2,16', 'gva:1,20,1,2,16'], r; assert r[0]['lengths'] == [5, 40, 1] and (r[0]['B'], r[0]['T']) == (1, 46), r; assert (r[1]['Q'], r[1]['H']) == (1, 2), r" %t.cases.json
// RUN: not rudnn-bench-kda --backend emulation --shapes "gva:1,20,2,3,16" 2>&1 | FileCheck %s --check-prefix=BADCASE
// CASES: varlen:5+40+1,2,16 {{[0-9.]+}} {{[0-9.]+}} {{[0-9.]+}}
// CASES: kda_bwd_prepare_bf16_f32_bf16_k16_v16_c64_a16_packed 1 x
// CASES: gva:1,20,1,2,16 {{[0-9.]+}} {{[0-9.]+}} {{[0-9.]+}}
// CASES: kda_head_group_sum_bf16_d16 2 x
// BADCASE: --shapes wants B,T,H,K, varlen:L1+L2+...,H,K or gva:B,T,Q,H,K;..., got 'gva:1,20,2,3,16'
// RUN: not rudnn-bench-kda --repeats 0 2>&1 | FileCheck %s --check-prefix=USAGE

// CHECK: device: CPU emulation
// CHECK-NEXT: shape (V = K) fwd ms TFLOP/s fwd+bwd ms
// CHECK-NEXT: 1,33,2,16 {{[0-9.]+}} {{[0-9.]+}} {{[0-9.]+}}
// Contiguous rows of 16 bf16 are 16-byte aligned: the aligned kernels run.
// The step's forward saves its tiles, keeping the backward's too, so the
// backward prepares nothing again: four kernels (the forward's walk on
// wgmma forms its outputs too, the backward's keeps dS in wgmma
// accumulators), one prepare, no restore.
// CHECK-DAG: kda_bwd_prepare_bf16_f32_bf16_k16_v16_c64_a16 1 x {{[0-9.]+}} ms
// CHECK-DAG: kda_fwd_propagate_output_bf16_bf16_bf16_k16_v16_c64_wgmma 1 x {{[0-9.]+}} ms
// CHECK-DAG: kda_bwd_state_gradient_bf16_bf16_bf16_k16_v16_c64_a16_wgmma 1 x {{[0-9.]+}} ms
// CHECK-DAG: kda_bwd_gradients_bf16_f32_bf16_k16_v16_c64_a16 1 x {{[0-9.]+}} ms
// CHECK-NOT: restore
// CHECK-NOT: {{^ +kda_}}

// LARGE: rudnn-bench-kda: shape 1,32768,16,128 is GPU-sized and the backend is emulation (no GPU): pass --allow-large to run it anyway, or smaller --shapes

// USAGE: rudnn-bench-kda: --repeats must be at least 1, --warmup at least 0
// USAGE-NEXT: usage: rudnn-bench-kda [options]:
