// rudnn-emulate runs a CUDA file's kernel on the CPU: arrays and scalars in
// parameter order, arrays written back after the launch.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/npy.py write %t/x.npy f4 0 1 2 3 4 5 6 7 8 9
// RUN: rudnn-emulate %s --entry scale --grid 2 --block 4 --outputs %t/out %t/x.npy f32=2.5 i32=7
// RUN: %python %S/Inputs/npy.py print %t/out/x.npy | FileCheck %s --check-prefix=SCALED
// SCALED:      0.0
// SCALED-NEXT: 2.5
// SCALED-NEXT: 5.0
// SCALED-NEXT: 7.5
// SCALED-NEXT: 10.0
// SCALED-NEXT: 12.5
// SCALED-NEXT: 15.0
// SCALED-NEXT: 7.0
// SCALED-NEXT: 8.0
// SCALED-NEXT: 9.0
// The input file is left as it was.
// RUN: %python %S/Inputs/npy.py print %t/x.npy | FileCheck %s --check-prefix=INPUT
// INPUT: 0.0
// INPUT: 7.0
// INPUT-NEXT: 8.0

extern "C" __global__ void scale(float *x, float a, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    x[i] *= a;
}

// Dynamic shared memory as CUDA declares it, a 2-D grid and every schedule:
// each block reverses its slice of 8 through shared memory.
// RUN: %python %S/Inputs/npy.py write %t/r.npy i4 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15
// RUN: rudnn-emulate %s --entry reverse_slices --grid 1,2 --block 8 --shared 32 --schedule random:3 --check --outputs %t/rev %t/r.npy
// RUN: %python %S/Inputs/npy.py print %t/rev/r.npy | tr '\n' ' ' | FileCheck %s --check-prefix=REVERSED
// REVERSED: 7 6 5 4 3 2 1 0 15 14 13 12 11 10 9 8

extern "C" __global__ void reverse_slices(int *data) {
  extern __shared__ int slice[];
  int *mine = data + blockIdx.y * blockDim.x;
  slice[threadIdx.x] = mine[threadIdx.x];
  __syncthreads();
  mine[threadIdx.x] = slice[blockDim.x - 1 - threadIdx.x];
}

// A Fortran-ordered array reaches the kernel in C order and is written
// back in the file's own order.
// RUN: %python %S/Inputs/npy.py write-fortran %t/m.npy i4 2 3 0 1 2 3 4 5
// RUN: rudnn-emulate %s --entry add_row_index --grid 1 --block 6 --outputs %t/fortran %t/m.npy i32=3
// RUN: %python %S/Inputs/npy.py print %t/fortran/m.npy | tr '\n' ' ' | FileCheck %s --check-prefix=FORTRAN
// FORTRAN: 0 103 1 104 2 105

extern "C" __global__ void add_row_index(int *m, int cols) {
  m[threadIdx.x] += 100 * (threadIdx.x / cols);
}

// A race only check mode reports: status 1, the kernel, block, both threads
// and the place; nothing is written. Without --check it runs.
// RUN: %python %S/Inputs/status.py 1 rudnn-emulate %s --entry racy --grid 1 --block 64 --check --outputs %t/racy %t/x.npy 2>&1 | FileCheck %s --check-prefix=RACE
// RACE: rudnn-emulate: emulated kernel 'racy' failed: launch failed (block (0,0,0): data race on static shared memory at offset 0x{{[0-9a-f]+}}
// RACE-SAME: thread (0,0,0) wrote it and thread ({{[0-9]+}},0,0) read it with no barrier between)
// RUN: test ! -e %t/racy/x.npy
// RUN: rudnn-emulate %s --entry racy --grid 1 --block 64 %t/x.npy

extern "C" __global__ void racy(float *x) {
  __shared__ float first;
  if (threadIdx.x == 0)
    first = x[0];
  if (threadIdx.x == 1)
    x[1] = first;
}

// A failed device assert: status 1, with the file, line and thread.
// RUN: %python %S/Inputs/status.py 1 rudnn-emulate %s --entry checked --grid 1 --block 32 %t/x.npy 2>&1 | FileCheck %s --check-prefix=ASSERT
// ASSERT: thread (5,0,0): {{.*}}/rudnn-emulate.cu:[[@LINE+4]]: checked: Assertion `x[threadIdx.x] != 5.0f' failed.

extern "C" __global__ void checked(float *x) {
  if (threadIdx.x < 10)
    assert(x[threadIdx.x] != 5.0f);
}

// Bad usage and bad input: status 2, nothing run.
// RUN: %python %S/Inputs/status.py 2 rudnn-emulate %s --grid 1 --block 1 2>&1 | FileCheck %s --check-prefix=USAGE
// USAGE: give KERNEL.cu, --entry, --grid and --block
// RUN: %python %S/Inputs/status.py 2 rudnn-emulate %s --entry scale --grid 1 --block 1 %t/x.npy f32=1 2>&1 | FileCheck %s --check-prefix=COUNT
// COUNT: kernel 'scale' takes 3 parameters, 2 given
// RUN: %python %S/Inputs/status.py 2 rudnn-emulate %s --entry scale --grid 1 --block 1 %t/x.npy i32=1 i32=1 2>&1 | FileCheck %s --check-prefix=TYPE
// TYPE: argument 2 'i32=1' does not fit parameter 2 of 'scale', .f32
// RUN: %python %S/Inputs/status.py 2 rudnn-emulate %s --entry scale --grid 1 --block 1 %t/missing.npy f32=1 i32=1 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: missing.npy': cannot read it: No such file
// RUN: %python %S/Inputs/status.py 2 rudnn-emulate %s --entry nowhere --grid 1 --block 1 2>&1 | FileCheck %s --check-prefix=ENTRY
// ENTRY: the file has no kernel 'nowhere'
// RUN: %python %S/Inputs/status.py 2 rudnn-emulate %s --entry scale --grid 1 --block 2000 %t/x.npy f32=1 i32=1 2>&1 | FileCheck %s --check-prefix=GEOMETRY
// GEOMETRY: block (2000,1,1) is outside CUDA's limits
// RUN: %python %S/Inputs/status.py 2 rudnn-emulate %s --entry scale --grid 1 --block 1 --schedule sideways %t/x.npy f32=1 i32=1 2>&1 | FileCheck %s --check-prefix=SCHEDULE
// SCHEDULE: emulation schedule must be forward, reverse or random:SEED

// Only CUDA NVRTC accepts runs: status 3 with its log.
// RUN: %python %S/Inputs/status.py 3 rudnn-emulate %S/Inputs/broken.cu --entry broken --grid 1 --block 1 %t/x.npy 2>&1 | FileCheck %s --check-prefix=BROKEN
// BROKEN: broken.cu does not compile with NVRTC for sm_90
// BROKEN: undeclared_name
