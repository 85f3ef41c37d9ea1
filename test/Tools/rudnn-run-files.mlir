// Names become file names only when they are plain (letters, digits, _ . -,
// no leading dot); results are written together or not at all; a failure
// names its real cause.
//
// RUN: rm -rf %t && mkdir -p %t/in %t/out
// RUN: rm -rf %t.kernels
// RUN: not rudnn-run %s --backend emulation --random 1 --dims B=1,T=3,H=1 --cache-dir %t.kernels --outputs %t/out 2>&1 | FileCheck %s --check-prefix=ESCAPE
// RUN: not ls %t/x.npy %t/out/o.npy
// RUN: sed -e 's|"../x"|"/tmp/rudnn-absolute-name"|' %s > %t/absolute.mlir
// RUN: not rudnn-run %t/absolute.mlir --backend emulation --random 1 --dims B=1,T=3,H=1 --cache-dir %t.kernels --outputs %t/out 2>&1 | FileCheck %s --check-prefix=ABSOLUTE
// RUN: not ls /tmp/rudnn-absolute-name.npy
// RUN: sed -e 's|"q"|"../q"|' %s > %t/input.mlir
// RUN: not rudnn-run %t/input.mlir --backend emulation --inputs %t/in --cache-dir %t.kernels 2>&1 | FileCheck %s --check-prefix=INPUT
// ESCAPE: rudnn-run: InvalidArgument: '../x.npy' cannot name a file
// ABSOLUTE: rudnn-run: InvalidArgument: '/tmp/rudnn-absolute-name.npy' cannot name a file
// INPUT: rudnn-run: InvalidArgument: '../q.npy' cannot name a file

// Two results: when the second cannot be written, neither lands.
// RUN: sed -e 's|"../x"|"state"|' %s > %t/two.mlir
// RUN: mkdir -p %t/partial/state.npy
// RUN: not rudnn-run %t/two.mlir --backend emulation --random 1 --dims B=1,T=3,H=1 --cache-dir %t.kernels --outputs %t/partial 2>&1 | FileCheck %s --check-prefix=PARTIAL
// RUN: ls %t/partial | FileCheck %s --check-prefix=LEFT
// PARTIAL: cannot write '{{.*}}state.npy': something other than a file is there
// LEFT-NOT: o.npy
// LEFT-NOT: tmp

// A folder that cannot be made is reported with the reason.
// RUN: touch %t/plainfile
// RUN: not rudnn-run %t/two.mlir --backend emulation --random 1 --dims B=1,T=3,H=1 --cache-dir %t.kernels --outputs %t/plainfile/sub 2>&1 | FileCheck %s --check-prefix=NOTDIR
// NOTDIR: cannot create the folder '{{.*}}plainfile/sub': Not a directory

// --dims letters must be dynamic dims of the program; sizes must fit.
// RUN: not rudnn-run %s --random 1 --dims B=1,T=3,H=1,Z=2 --cache-dir %t.kernels 2>&1 | FileCheck %s --check-prefix=LETTER
// RUN: not rudnn-run %s --random 1 --dims B=1,T=99999999999,H=1 --cache-dir %t.kernels 2>&1 | FileCheck %s --check-prefix=HUGE
// RUN: not rudnn-run %s --random 1 --dims B=2147483647,T=2147483647,H=2147483647 --cache-dir %t.kernels 2>&1 | FileCheck %s --check-prefix=OVERFLOW
// RUN: not rudnn-run %s --random 1 --dims B=100000,T=100000,H=1000 --cache-dir %t.kernels 2>&1 | FileCheck %s --check-prefix=MEMORY
// LETTER: --dims: no argument has a dynamic dim 'Z' (its dynamic dims: B, T, H)
// HUGE: --dims: 'T=99999999999' needs a size from 1 to 2147483647
// OVERFLOW: 'q' of shape [2147483647, 2147483647, 2147483647, 8] has too many elements
// MEMORY: 'q' of shape [100000, 100000, 1000, 8] needs {{[0-9]+}} GB of host memory; this machine has {{[0-9]+}} GB

func.func @main(%q: tensor<?x?x?x8xf32> {rudnn.name = "q"},
                %k: tensor<?x?x?x8xf32> {rudnn.name = "k"},
                %v: tensor<?x?x?x8xf32> {rudnn.name = "v"},
                %g: tensor<?x?x?x8xf32> {rudnn.name = "g"},
                %beta: tensor<?x?x?xf32> {rudnn.name = "beta"})
    -> (tensor<?x?x?x8xf32> {rudnn.name = "o"},
        tensor<?x?x8x8xf32> {rudnn.name = "../x"}) {
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta
      : (tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>,
         tensor<?x?x?x8xf32>, tensor<?x?x?xf32>)
      -> (tensor<?x?x?x8xf32>, tensor<?x?x8x8xf32>)
  return %o, %s : tensor<?x?x?x8xf32>, tensor<?x?x8x8xf32>
}
