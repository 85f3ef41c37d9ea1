// Packed sequences' offsets must start at 0, never decrease and end at the
// packed length T, and lengths lie in 0 to the dim they count: anything
// else is refused before a kernel runs (the emulation backend reads them on
// the host), naming the entry, never a crash of the float64 check and never
// tokens left unwritten.
// (No input is read: this file holds only the commands.)
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: rm -rf %t.kernels
// RUN: rudnn-run %rudnn_src_root/examples/kda_varlen.mlir --backend emulation --random 3 --dims T=20,H=1,S=2 --cache-dir %t.kernels --save-inputs %t/in > /dev/null
// RUN: %python %S/Inputs/npy.py write %t/in/cu_seqlens.npy i4 0 7 21
// RUN: not rudnn-run %rudnn_src_root/examples/kda_varlen.mlir --backend emulation --inputs %t/in --check --cache-dir %t.kernels --outputs %t/out 2>&1 | FileCheck %s --check-prefix=PAST
// RUN: not ls %t/out
// PAST: 'cu_seqlens' must start at 0, never decrease and end at T = 20: entry 2 is 21, past T
//
// RUN: %python %S/Inputs/npy.py write %t/in/cu_seqlens.npy i4 0 9 5
// RUN: not rudnn-run %rudnn_src_root/examples/kda_varlen.mlir --backend emulation --inputs %t/in --check --cache-dir %t.kernels 2>&1 | FileCheck %s --check-prefix=DOWN
// DOWN: entry 2 is 5, less than entry 1
//
// RUN: %python %S/Inputs/npy.py write %t/in/cu_seqlens.npy i4 0 -4 20
// RUN: not rudnn-run %rudnn_src_root/examples/kda_varlen.mlir --backend emulation --inputs %t/in --check --cache-dir %t.kernels 2>&1 | FileCheck %s --check-prefix=NEGATIVE
// NEGATIVE: entry 1 is -4, less than entry 0
//
// RUN: %python %S/Inputs/npy.py write %t/in/cu_seqlens.npy i4 0 7 13
// RUN: not rudnn-run %rudnn_src_root/examples/kda_varlen.mlir --backend emulation --inputs %t/in --check --cache-dir %t.kernels 2>&1 | FileCheck %s --check-prefix=SHORT
// SHORT: entry 2 is 13, not T: the tokens after it belong to no sequence
//
// RUN: %python %S/Inputs/npy.py write %t/in/cu_seqlens.npy i4 3 7 20
// RUN: not rudnn-run %rudnn_src_root/examples/kda_varlen.mlir --backend emulation --inputs %t/in --check --cache-dir %t.kernels 2>&1 | FileCheck %s --check-prefix=START
// START: entry 0 is 3, not 0
//
// Attention's packed batches: the key offsets end at S.
// RUN: rudnn-run %rudnn_src_root/examples/attention_varlen.mlir --backend emulation --random 0 --dims T=30,S=26,C=3,H=2,G=1 --cache-dir %t.kernels --save-inputs %t/att > /dev/null
// RUN: %python %S/Inputs/npy.py write %t/att/cu_seqlens_k.npy i4 0 13 27
// RUN: not rudnn-run %rudnn_src_root/examples/attention_varlen.mlir --backend emulation --inputs %t/att --check --cache-dir %t.kernels 2>&1 | FileCheck %s --check-prefix=KEYS
// KEYS: 'cu_seqlens_k' must start at 0, never decrease and end at S = 26: entry 2 is 27, past S
//
// Lengths run from 0 to the dim they count.
// RUN: rudnn-run %rudnn_src_root/examples/attention.mlir --backend emulation --random 0 --dims B=2,T=5,S=7,H=2,G=1 --cache-dir %t.kernels --save-inputs %t/pad > /dev/null
// RUN: %python %S/Inputs/npy.py write %t/pad/key_lengths.npy i4 3 8
// RUN: not rudnn-run %rudnn_src_root/examples/attention.mlir --backend emulation --inputs %t/pad --check --cache-dir %t.kernels 2>&1 | FileCheck %s --check-prefix=LENGTHS
// LENGTHS: 'key_lengths' entry 1 is 8, outside 0 to S = 7
// RUN: %python %S/Inputs/npy.py write %t/pad/key_lengths.npy i4 -1 7
// RUN: not rudnn-run %rudnn_src_root/examples/attention.mlir --backend emulation --inputs %t/pad --check --cache-dir %t.kernels 2>&1 | FileCheck %s --check-prefix=NEGATIVE-LENGTH
// NEGATIVE-LENGTH: 'key_lengths' entry 0 is -1, outside 0 to S = 7
//
// Offsets that keep the contract run and check.
// RUN: %python %S/Inputs/npy.py write %t/in/cu_seqlens.npy i4 0 0 20
// RUN: rudnn-run %rudnn_src_root/examples/kda_varlen.mlir --backend emulation --inputs %t/in --check --cache-dir %t.kernels | FileCheck %s --check-prefix=GOOD
// GOOD: check o: relative error {{.*}} ok
