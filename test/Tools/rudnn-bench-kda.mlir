// rudnn-bench-kda on the emulation backend: a small shape runs, reports
// its forward and training-step medians and each kernel of the step, and
// writes the same as JSON; GPU-sized shapes and bad options are refused.
// (No input is read: this file holds only the commands.)

// REQUIRES: benchmarks
// RUN: rudnn-bench-kda --backend emulation --shapes "1,33,2,16" --repeats 2 --warmup 1 --json %t.json | FileCheck %s
// RUN: %python -c "import json, sys; r = json.load(open(sys.argv[1])); x = r['results'][0]; assert (r['timing'], r['warmup'], r['repeats']) == ('host clock', 1, 2), r; assert (x['B'], x['T'], x['H'], x['K'], x['V']) == (1, 33, 2, 16, 16), x; assert x['ms'] > 0 and x['fwd_bwd_ms'] > 0 and len(x['step_kernels_ms']) == 5, x" %t.json
// RUN: not rudnn-bench-kda --backend emulation --shapes "1,32768,16,128" 2>&1 | FileCheck %s --check-prefix=LARGE
// RUN: not rudnn-bench-kda --repeats 0 2>&1 | FileCheck %s --check-prefix=USAGE

// CHECK: device: CPU emulation
// CHECK-NEXT: B,T,H,K=V fwd ms TFLOP/s fwd+bwd ms
// CHECK-NEXT: 1,33,2,16 {{[0-9.]+}} {{[0-9.]+}} {{[0-9.]+}}
// Contiguous rows of 16 bf16 are 16-byte aligned: the aligned kernels run.
// The step's forward saves its tiles, keeping the backward's too, so the
// backward prepares nothing again: five kernels, one prepare, no restore.
// CHECK-DAG: kda_bwd_prepare_bf16_f32_bf16_k16_v16_c64_a16 1 x {{[0-9.]+}} ms
// CHECK-DAG: kda_fwd_propagate_bf16_bf16_bf16_k16_v16_c64 1 x {{[0-9.]+}} ms
// CHECK-DAG: kda_fwd_output_bf16_f32_bf16_k16_v16_c64_a16 1 x {{[0-9.]+}} ms
// CHECK-DAG: kda_bwd_state_gradient_bf16_bf16_bf16_k16_v16_c64_a16 1 x {{[0-9.]+}} ms
// CHECK-DAG: kda_bwd_gradients_bf16_f32_bf16_k16_v16_c64_a16 1 x {{[0-9.]+}} ms
// CHECK-NOT: restore
// CHECK-NOT: {{^ +kda_}}

// LARGE: rudnn-bench-kda: shape 1,32768,16,128 is GPU-sized and the backend is emulation (no GPU): pass --allow-large to run it anyway, or smaller --shapes

// USAGE: rudnn-bench-kda: --repeats must be at least 1, --warmup at least 0
// USAGE-NEXT: usage: rudnn-bench-kda [options]:
