// A bundle's calls check the values of packed sequences' offsets as the
// JIT's do (on the emulation backend, whose memory is the host's): the
// contracts a bundle keeps say which operands are offsets and what they end
// at. Bad offsets are refused before a kernel runs; nothing is written.
// (No input is read: this file holds only the commands.)
//
// RUN: rm -rf %t && mkdir -p %t
// RUN: rudnn-run %rudnn_src_root/examples/kda_varlen.mlir --backend emulation --random 3 --dims T=20,H=1,S=2 --cache-dir "" --save-inputs %t/in > /dev/null
// RUN: rudnn-translate %rudnn_src_root/examples/kda_varlen.mlir --rudnn-to-bundle --rudnn-bundle-targets=emulation -o %t/kda.bundle
// RUN: %python %S/Inputs/npy.py write %t/in/cu_seqlens.npy i4 0 7 21
// RUN: not rudnn-bundle-run %t/kda.bundle --backend emulation --inputs %t/in --outputs %t/out 2>&1 | FileCheck %s --check-prefix=PAST
// RUN: not ls %t/out
// PAST: rudnn-bundle-run: InvalidArgument: 'cu_seqlens' must start at 0, never decrease and end at T = 20: entry 2 is 21, past T
//
// RUN: %python %S/Inputs/npy.py write %t/in/cu_seqlens.npy i4 0 9 5
// RUN: not rudnn-bundle-run %t/kda.bundle --backend emulation --inputs %t/in --outputs %t/out 2>&1 | FileCheck %s --check-prefix=DOWN
// RUN: not ls %t/out
// DOWN: entry 2 is 5, less than entry 1
//
// Offsets that keep the contract run.
// RUN: %python %S/Inputs/npy.py write %t/in/cu_seqlens.npy i4 0 7 20
// RUN: rudnn-bundle-run %t/kda.bundle --backend emulation --inputs %t/in --outputs %t/out | FileCheck %s --check-prefix=GOOD
// GOOD: result o: f32[1, 20, 1, 64]
