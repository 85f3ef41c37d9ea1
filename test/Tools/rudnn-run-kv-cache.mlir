// The K/V-cache examples run and check against the float64 reference: the
// output, and the caches (returned under their own names, the arguments'
// memory updated in place) element for element. The lengths are drawn to
// leave room for the new tokens; the paged table gives each entry its own
// pages in shuffled order. (No input is read: this file holds only the
// commands.)
//
// RUN: rm -rf %t.kernels
// RUN: rudnn-run %rudnn_src_root/examples/kv_cache.mlir --backend emulation --random 0 --dims B=3,T=2,S=100,H=8,G=2 --check --cache-dir %t.kernels | FileCheck %s --check-prefix=CONTIGUOUS
// CONTIGUOUS: result o: f32[3, 2, 8, 64]
// CONTIGUOUS-NEXT: result k_cache: f32[3, 100, 2, 64]
// CONTIGUOUS-NEXT: result v_cache: f32[3, 100, 2, 64]
// CONTIGUOUS: check o: relative error {{.*}} ok
// CONTIGUOUS-NEXT: check k_cache: relative error 0.000e+00 {{.*}} ok
// CONTIGUOUS-NEXT: check v_cache: relative error 0.000e+00 {{.*}} ok
// CONTIGUOUS: compiles: 2
//
// RUN: rudnn-run %rudnn_src_root/examples/kv_cache_paged.mlir --backend emulation --random 0 --dims B=3,T=2,P=24,M=8,H=8,G=2 --check --cache-dir %t.kernels | FileCheck %s --check-prefix=PAGED
// PAGED: result o: f32[3, 2, 8, 64]
// PAGED-NEXT: result k_pages: f32[24, 16, 2, 64]
// PAGED: check o: relative error {{.*}} ok
// PAGED-NEXT: check k_pages: relative error 0.000e+00 {{.*}} ok
// PAGED-NEXT: check v_pages: relative error 0.000e+00 {{.*}} ok
//
// An append past the capacity (S = 10: 9 cached + 2 new) is refused on the
// device and, in a checked run, reported as an error naming the entry.
// RUN: rm -rf %t && rudnn-run %rudnn_src_root/examples/kv_cache.mlir --backend emulation --random 0 --dims B=2,T=2,S=10,H=2,G=1 --save-inputs %t --cache-dir %t.kernels > /dev/null
// RUN: %python %S/Inputs/npy.py write %t/cache_lengths.npy i4 3 9
// RUN: not rudnn-run %rudnn_src_root/examples/kv_cache.mlir --backend emulation --inputs %t --check --cache-dir %t.kernels 2>&1 | FileCheck %s --check-prefix=REFUSED
// REFUSED: rudnn-run: InvalidArgument: rudnn.kv_cache_attention refuses entries 1 of these inputs (its 'status' says so, per entry: 0: appended and attended; 1: refused (a negative length, an append past the cache or the rotary positions, a page out of range, a left padding past the length, a cache row out of range or shared)
//
// An attend-only call over pages (no k, v) with ALiBi slopes, a window, a
// softcap and non-causal queries checks against the reference too.
// RUN: rudnn-run %S/Inputs/kv_cache_attend.mlir --backend emulation --random 2 --dims B=3,T=2,P=24,M=8,H=4,G=2 --check --cache-dir %t.kernels | FileCheck %s --check-prefix=ATTEND
// ATTEND: result o: f32[3, 2, 4, 24]
// ATTEND: check o: relative error {{.*}} ok
// ATTEND-NEXT: check lse: relative error {{.*}} ok
//
// Entries picking rows of a pool of six (the sampler draws distinct rows)
// and the rotary embedding turning the new keys and the queries: the
// caches, turned keys appended, check against the reference too.
// RUN: rudnn-run %S/Inputs/kv_cache_rotary.mlir --backend emulation --random 4 --dims B=3,T=2,S=30,N=6,H=4,G=2,R=30 --check --cache-dir %t.kernels | FileCheck %s --check-prefix=ROTARY
// ROTARY: result k_cache: f32[6, 30, 2, 40]
// ROTARY: check o: relative error {{.*}} ok
// ROTARY-NEXT: check k_cache: relative error {{.*}} ok
// ROTARY-NEXT: check v_cache: relative error 0.000e+00 {{.*}} ok
