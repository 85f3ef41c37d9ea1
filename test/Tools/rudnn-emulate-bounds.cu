// rudnn-emulate --check traps a global access outside the .npy argument it
// falls near: status 1, the kernel, block, thread, address and how far
// from the argument, which is named; nothing is written.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/npy.py write %t/x.npy f4 0 1 2 3 4 5 6 7 8 9
// RUN: %python %S/Inputs/npy.py write %t/y.npy f4 0 1 2 3 4 5 6 7 8 9
// RUN: %python %S/Inputs/npy.py write %t/c.npy i4 0 0 0 0 0 0 0 0 0 0

// One element past the end: 4 bytes.
// RUN: %python %S/Inputs/status.py 1 rudnn-emulate %s --entry write_past --grid 2 --block 8 --check --outputs %t/past %t/x.npy i32=10 2>&1 | FileCheck %s --check-prefix=PAST
// PAST: rudnn-emulate: emulated kernel 'write_past' failed: launch failed (block (1,0,0): thread (2,0,0): out-of-bounds global memory write of 4 bytes at 0x{{[0-9a-f]+}}: offset 40 of the nearest allocation (40 bytes at [[X:0x[0-9a-f]+]]): 4 bytes past its end)
// PAST-NEXT: rudnn-emulate: the allocation at [[X]] is argument 1, {{.*}}x.npy
// RUN: test ! -e %t/past/x.npy

extern "C" __global__ void write_past(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i <= n)
    x[i] = 1.0f;
}

// Far past the end (4 MiB, where the heap would be corrupted): reported,
// and the process ends normally with status 1 whatever the schedule.
// RUN: %python %S/Inputs/status.py 1 rudnn-emulate %s --entry write_far --grid 2 --block 8 --check %t/y.npy %t/x.npy 2>&1 | FileCheck %s --check-prefix=FAR --implicit-check-not=corrupted
// RUN: %python %S/Inputs/status.py 1 rudnn-emulate %s --entry write_far --grid 2 --block 8 --check --schedule random:5 %t/y.npy %t/x.npy 2>&1 | FileCheck %s --check-prefix=FAR --implicit-check-not=corrupted
// FAR: emulated kernel 'write_far' failed: launch failed (block (0,0,0): thread (3,0,0): out-of-bounds global memory write of 4 bytes at 0x{{[0-9a-f]+}}: offset 4194304 of the nearest allocation (40 bytes at [[X:0x[0-9a-f]+]]): 4194268 bytes past its end)
// FAR-NEXT: rudnn-emulate: the allocation at [[X]] is argument 2, {{.*}}x.npy

extern "C" __global__ void write_far(float *unused, float *x) {
  if (blockIdx.x == 0 && threadIdx.x == 3)
    x[1 << 20] = 1.0f;
}

// Reads: one past the end of the second argument, one before the start.
// RUN: %python %S/Inputs/status.py 1 rudnn-emulate %s --entry read_past --grid 2 --block 8 --check --schedule reverse %t/y.npy %t/x.npy i32=10 2>&1 | FileCheck %s --check-prefix=READ
// READ: (block (1,0,0): thread (1,0,0): out-of-bounds global memory read of 4 bytes at 0x{{[0-9a-f]+}}: offset 40 of the nearest allocation (40 bytes at [[X:0x[0-9a-f]+]]): 4 bytes past its end)
// READ-NEXT: the allocation at [[X]] is argument 2, {{.*}}x.npy
// RUN: %python %S/Inputs/status.py 1 rudnn-emulate %s --entry read_before --grid 2 --block 8 --check %t/x.npy i32=10 2>&1 | FileCheck %s --check-prefix=BEFORE
// BEFORE: (block (0,0,0): thread (0,0,0): out-of-bounds global memory read of 4 bytes at 0x{{[0-9a-f]+}}: offset -4 of the nearest allocation (40 bytes at 0x{{[0-9a-f]+}}): 4 bytes before its start)

extern "C" __global__ void read_past(float *out, const float *in, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    out[i] = in[i + 1];
}

extern "C" __global__ void read_before(float *x, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] += x[i - 1];
}

// An 8-byte access straddling the end, and an atomic past it.
// RUN: %python %S/Inputs/npy.py write %t/three.npy f4 1 2 3
// RUN: %python %S/Inputs/status.py 1 rudnn-emulate %s --entry straddle --grid 1 --block 1 --check %t/three.npy 2>&1 | FileCheck %s --check-prefix=STRADDLE
// STRADDLE: thread (0,0,0): out-of-bounds global memory read of 8 bytes at 0x{{[0-9a-f]+}}: offset 8 of the nearest allocation (12 bytes at 0x{{[0-9a-f]+}}): 4 bytes past its end)
// RUN: %python %S/Inputs/status.py 1 rudnn-emulate %s --entry atomic_past --grid 1 --block 11 --check --schedule random:3 %t/c.npy 2>&1 | FileCheck %s --check-prefix=ATOMIC
// ATOMIC: thread (10,0,0): out-of-bounds global memory atomic of 4 bytes at 0x{{[0-9a-f]+}}: offset 40 of the nearest allocation (40 bytes at 0x{{[0-9a-f]+}}): 4 bytes past its end)

extern "C" __global__ void straddle(float *x) {
  // Elements 2 and 3 of three, as one aligned 8-byte load.
  unsigned long long pair = *reinterpret_cast<unsigned long long *>(x + 2);
  x[0] = static_cast<float>(pair);
}

extern "C" __global__ void atomic_past(int *counts) {
  atomicAdd(&counts[threadIdx.x], 1);
}

// A memcpy of variable length is a library call check mode's hooks do not
// see: caught once it reaches the guard page after the argument (here 256
// bytes long, so ending at that page), with the same report, then the
// process dies of the fault (a sanitizer's handler exits with 1 instead).
// RUN: %python %S/Inputs/npy.py write %t/in64.npy f4 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46 47 48 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63
// RUN: %python %S/Inputs/fails.py rudnn-emulate %s --entry copy_past --grid 1 --block 1 --check %t/y.npy %t/in64.npy i32=80 2>&1 | FileCheck %s --check-prefix=MEMCPY
// MEMCPY: rudnn: emulated kernel 'copy_past', block (0,0,0), thread (0,0,0): out-of-bounds global memory access at 0x{{[0-9a-f]+}}, unseen by check mode's hooks, reached a guard page: offset {{[0-9]+}} of the nearest allocation (256 bytes at 0x{{[0-9a-f]+}}): {{[0-9]+ bytes?}} past its end

extern "C" __global__ void copy_past(float *out, const float *in, int n) {
  float local[128];
  memcpy(local, in, n * sizeof(float));
  out[0] = local[n - 1];
}

// In-bounds neighbours, the last element and atomics pass under --check in
// every order, with the same result.
// RUN: %python %S/Inputs/npy.py write %t/h.npy i4 0 0 0 0
// RUN: rudnn-emulate %s --entry stencil --grid 3 --block 4 --check --schedule forward --outputs %t/forward %t/y.npy %t/x.npy %t/h.npy i32=10
// RUN: rudnn-emulate %s --entry stencil --grid 3 --block 4 --check --schedule reverse --outputs %t/reverse %t/y.npy %t/x.npy %t/h.npy i32=10
// RUN: rudnn-emulate %s --entry stencil --grid 3 --block 4 --check --schedule random:1 --outputs %t/random1 %t/y.npy %t/x.npy %t/h.npy i32=10
// RUN: rudnn-emulate %s --entry stencil --grid 3 --block 4 --check --schedule random:2026 --outputs %t/random2026 %t/y.npy %t/x.npy %t/h.npy i32=10
// RUN: %python %S/Inputs/npy.py print %t/forward/y.npy | tr '\n' ' ' | FileCheck %s --check-prefix=STENCIL
// RUN: %python %S/Inputs/npy.py print %t/reverse/y.npy | tr '\n' ' ' | FileCheck %s --check-prefix=STENCIL
// RUN: %python %S/Inputs/npy.py print %t/random1/y.npy | tr '\n' ' ' | FileCheck %s --check-prefix=STENCIL
// RUN: %python %S/Inputs/npy.py print %t/random2026/y.npy | tr '\n' ' ' | FileCheck %s --check-prefix=STENCIL
// STENCIL: 1.0 3.0 6.0 9.0 12.0 15.0 18.0 21.0 24.0 17.0
// RUN: %python %S/Inputs/npy.py print %t/random2026/h.npy | tr '\n' ' ' | FileCheck %s --check-prefix=HITS
// HITS: 3 3 2 2

extern "C" __global__ void stencil(float *out, const float *in, int *hits,
                                   int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n)
    return;
  out[i] = in[i] + (i > 0 ? in[i - 1] : 0.0f) + (i + 1 < n ? in[i + 1] : 0.0f);
  atomicAdd(&hits[i % 4], 1);
}
