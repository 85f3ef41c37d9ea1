// Every tool opens only regular files: /dev/zero, a FIFO and a directory are
// refused at once with the reason, never read to the end of memory or waited
// on. (`timeout` turns a hang into a failure.)
//
// RUN: rm -rf %t && mkdir -p %t/dir %t/in && mkfifo %t/fifo
// RUN: not timeout 20 rudnn-opt /dev/zero 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not timeout 20 rudnn-opt %t/fifo 2>&1 | FileCheck %s --check-prefix=FIFO
// RUN: not timeout 20 rudnn-opt %t/dir 2>&1 | FileCheck %s --check-prefix=DIR
// RUN: not timeout 20 rudnn-opt < /dev/zero 2>&1 | FileCheck %s --check-prefix=STDIN
// RUN: not timeout 20 rudnn-translate --rudnn-to-cuda /dev/zero 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not timeout 20 rudnn-translate --rudnn-to-cuda %t/fifo -o %t/out.cu 2>&1 | FileCheck %s --check-prefix=FIFO
// RUN: rm -rf %t.kernels
// RUN: not timeout 20 rudnn-run /dev/zero --backend emulation --random 1 --cache-dir %t.kernels 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not timeout 20 rudnn-run %t/fifo --backend emulation --random 1 --cache-dir %t.kernels 2>&1 | FileCheck %s --check-prefix=FIFO
// RUN: not timeout 20 rudnn-bundle-run /dev/zero --backend emulation --inputs %t/in 2>&1 | FileCheck %s --check-prefix=ZERO
// RUN: not timeout 20 rudnn-bundle-run %t/dir --backend emulation --inputs %t/in 2>&1 | FileCheck %s --check-prefix=DIR
// RUN: not timeout 20 rudnn-emulate /dev/zero --entry k --grid 1 --block 1 2>&1 | FileCheck %s --check-prefix=ZERO
// ZERO: '/dev/zero': not a regular file (a character device)
// FIFO: fifo': not a regular file (a FIFO)
// DIR: dir': not a regular file (a directory)
// STDIN: standard input: not a file or a pipe
//
// A tensor file that is a FIFO is refused as well.
// RUN: mkfifo %t/in/x.npy
// RUN: not timeout 20 rudnn-run %s --backend emulation --inputs %t/in --cache-dir %t.kernels 2>&1 | FileCheck %s --check-prefix=NPY
// NPY: x.npy': not a regular file (a FIFO)

func.func @main(%x: tensor<?x32xf32> {rudnn.name = "x"})
    -> (tensor<?xf32> {rudnn.name = "mean"}, tensor<?xf32> {rudnn.name = "var"}) {
  %mean, %var = rudnn.moments %x : (tensor<?x32xf32>) -> (tensor<?xf32>, tensor<?xf32>)
  return %mean, %var : tensor<?xf32>, tensor<?xf32>
}
