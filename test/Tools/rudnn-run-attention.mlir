// The attention examples run and check against the float64 reference:
// causal self-attention over per-entry key lengths (GQA, T ≠ S, tails of
// every tile) and cross attention under a key mask with E ≠ D. (No input is
// read: this file holds only the commands.)
//
// RUN: rm -rf %t.kernels
// RUN: rudnn-run %rudnn_src_root/examples/attention.mlir --backend emulation --random 0 --dims B=3,T=100,S=120,H=4,G=2 --check --cache-dir %t.kernels | FileCheck %s --check-prefix=SELF
// SELF: result o: f32[3, 100, 4, 64]
// SELF-NEXT: result lse: f32[3, 4, 100]
// SELF: check o: relative error {{.*}} ok
// SELF: check lse: relative error {{.*}} ok
// SELF: compiles: 1
//
// RUN: rudnn-run %rudnn_src_root/examples/cross_attention.mlir --backend emulation --random 1 --dims B=2,T=40,S=77,H=4,G=4 --check --cache-dir %t.kernels | FileCheck %s --check-prefix=CROSS
// CROSS: result o: f32[2, 40, 4, 32]
// CROSS: check o: relative error {{.*}} ok
// CROSS: check lse: relative error {{.*}} ok
//
// With T = 3 queries over at most S = 2 keys, causal, the first query of
// every entry sees no key (and entries of length 0 none at all): those rows
// are 0 and −inf, which the check matches exactly.
// RUN: rudnn-run %rudnn_src_root/examples/attention.mlir --backend emulation --random 0 --dims B=6,T=3,S=2,H=1,G=1 --check --cache-dir %t.kernels --outputs %t | FileCheck %s --check-prefix=EMPTY
// RUN: %python -c "import math, struct, sys; b = open(sys.argv[1], 'rb').read(); n = struct.unpack('<H', b[8:10])[0]; d = b[10 + n:]; v = struct.unpack('<%%df' %% (len(d) // 4), d); assert any(x == -math.inf for x in v) and any(math.isfinite(x) for x in v), v" %t/lse.npy
// EMPTY: check o: relative error {{.*}} ok
// EMPTY: check lse: relative error {{.*}} ok
//
// Packed variable-length batches: the offsets are drawn sorted from 0 to
// the totals (some entries empty), each entry checked against the float64
// reference of it alone.
// RUN: rudnn-run %rudnn_src_root/examples/attention_varlen.mlir --backend emulation --random 0 --dims T=300,S=260,C=6,H=4,G=2 --check --cache-dir %t.kernels | FileCheck %s --check-prefix=PACKED
// PACKED: result o: bf16[300, 4, 64]
// PACKED-NEXT: result lse: f32[4, 300]
// PACKED: check o: relative error {{.*}} ok
// PACKED: check lse: relative error {{.*}} ok
//
// Query heads that the key heads do not divide are refused by the call's
// contract check before anything runs (dynamic heads: the verifier cannot).
// RUN: not rudnn-run %rudnn_src_root/examples/attention.mlir --backend emulation --random 0 --dims B=1,T=4,S=4,H=3,G=2 --cache-dir %t.kernels 2>&1 | FileCheck %s --check-prefix=HEADS
// HEADS: rudnn-run: InvalidArgument: query heads H = 3 must be a multiple of the key heads G = 2
