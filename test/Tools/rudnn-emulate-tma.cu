// rudnn-emulate passes tensor maps: tmap:FILE.npy:box=...:swizzle=... copies
// the array to device memory and passes a TMA tensor map over it, dims and
// strides from the array, innermost first. The kernel loads a 32 x 16 box of
// a 20 x 32 f32 matrix from row 8, adds one to each element in shared
// memory and stores the box back through a second map: rows 8-19 change,
// the box's rows past the matrix are dropped, rows 0-7 keep their values.
// RUN: rm -rf %t && mkdir -p %t
// RUN: %python %S/Inputs/npy.py write-matrix %t/in.npy f4 20 32 0
// RUN: %python %S/Inputs/npy.py write-matrix %t/out.npy f4 20 32 -1000
// RUN: rudnn-emulate %s --arch sm_90a --entry add_one --grid 1 --block 128 --shared 3080 --check --outputs %t/o tmap:%t/in.npy:box=32x16:swizzle=128 tmap:%t/out.npy:box=32x16:swizzle=128 i32=8
// RUN: %python %S/Inputs/npy.py print %t/o/out.npy | sed -n '1p;256p;257p;640p' | FileCheck %s
// CHECK:      -1000.0
// CHECK-NEXT: -745.0
// CHECK-NEXT: 257.0
// CHECK-NEXT: 640.0
// The same under the schedules that land boxes late or in a drawn order.
// RUN: rudnn-emulate %s --arch sm_90a --entry add_one --grid 1 --block 128 --shared 3080 --check --schedule reverse --outputs %t/r tmap:%t/in.npy:box=32x16:swizzle=128 tmap:%t/out.npy:box=32x16:swizzle=128 i32=8
// RUN: cmp %t/o/out.npy %t/r/out.npy
// RUN: rudnn-emulate %s --arch sm_90a --entry add_one --grid 1 --block 128 --shared 3080 --check --schedule random:3 --outputs %t/x tmap:%t/in.npy:box=32x16:swizzle=128 tmap:%t/out.npy:box=32x16:swizzle=128 i32=8
// RUN: cmp %t/o/out.npy %t/x/out.npy
//
// Without the proxy fence the store reads the threads' writes unordered.
// RUN: sed 's/fence_proxy_async_shared();//' %s > %t/nofence.cu
// RUN: not rudnn-emulate %t/nofence.cu --entry add_one --grid 1 --block 128 --shared 3080 --check tmap:%t/in.npy:box=32x16:swizzle=128 tmap:%t/out.npy:box=32x16:swizzle=128 i32=8 2>&1 | FileCheck %s --check-prefix=FENCE
// FENCE: has executed no fence.proxy.async since
// A malformed map, and one the hardware cannot build, are refused.
// RUN: not rudnn-emulate %s --entry add_one --grid 1 --block 128 tmap:%t/in.npy:box=32:swizzle=128 tmap:%t/out.npy:box=32x16:swizzle=128 i32=8 2>&1 | FileCheck %s --check-prefix=FORM
// FORM: argument 'tmap:{{.*}}in.npy:box=32:swizzle=128': not a tensor map
// RUN: not rudnn-emulate %s --entry add_one --grid 1 --block 128 --shared 3080 tmap:%t/in.npy:box=32x300:swizzle=128 tmap:%t/out.npy:box=32x16:swizzle=128 i32=8 2>&1 | FileCheck %s --check-prefix=RULE
// RULE: cannot build a TMA tensor map: box dim 1 is 300 (1 to 256)
// An array where the kernel takes a map does not fit its parameter.
// RUN: not rudnn-emulate %s --entry add_one --grid 1 --block 128 %t/in.npy tmap:%t/out.npy:box=32x16:swizzle=128 i32=8 2>&1 | FileCheck %s --check-prefix=FIT
// FIT: argument 1 '{{.*}}in.npy' does not fit parameter 1 of 'add_one', .b1024

#include "rudnn/core.cuh"
using namespace rudnn::arch;

extern "C" __global__ void add_one(const __grid_constant__ TensorMap in,
                                   const __grid_constant__ TensorMap out,
                                   int row0) {
  RUDNN_DYNAMIC_SHARED(unsigned char, raw);
  float *tile = swizzle_aligned<float>(raw);
  unsigned long long *full = (unsigned long long *)(tile + 16 * 32);
  if (threadIdx.x == 0)
    mbarrier_init(full, 1);
  __syncthreads();
  const int at[3] = {0, row0, 0};
  if (threadIdx.x == 0) {
    mbarrier_arrive_expect_tx(full, 16 * 32 * sizeof(float));
    tma_load<3>(tile, in, at, full);
  }
  mbarrier_wait(full, 0);
  for (int i = threadIdx.x; i < 16 * 32; i += blockDim.x)
    tile[i] += 1.0f; // elementwise: the swizzle does not matter
  fence_proxy_async_shared();
  __syncthreads();
  if (threadIdx.x == 0) {
    tma_store<3>(out, at, tile);
    tma_store_commit();
    tma_store_wait<0>();
  }
}
