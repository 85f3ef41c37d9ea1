// Bad files, shapes and options get a clear message and a non-zero exit.
//
// RUN: rm -rf %t && mkdir -p %t/bad
// RUN: rm -rf %t.kernels
// RUN: rudnn-run %s --backend emulation --random 1 --dims B=1,T=3,H=1 --save-inputs %t/in --cache-dir %t.kernels
// RUN: cp %t/in/*.npy %t/bad/ && cp %t/in/beta.npy %t/bad/q.npy
// RUN: not rudnn-run %s --backend emulation --inputs %t/bad --cache-dir %t.kernels 2>&1 | FileCheck %s --check-prefix=RANK
// RUN: cp %t/in/q.npy %t/bad/q.npy && rm %t/bad/v.npy
// RUN: not rudnn-run %s --backend emulation --inputs %t/bad --cache-dir %t.kernels 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not rudnn-run %t/nonexistent.mlir --random 0 2>&1 | FileCheck %s --check-prefix=NOFILE
// RUN: not rudnn-run %s --random 0 --inputs %t/in 2>&1 | FileCheck %s --check-prefix=BOTH
// RUN: not rudnn-run %s --random 0 --dims B=1 2>&1 | FileCheck %s --check-prefix=DIMS
// RUN: not rudnn-run %s --random 0 --backend tpu 2>&1 | FileCheck %s --check-prefix=BACKEND

// RANK: rudnn-run: InvalidArgument: {{.*}}q.npy: rank 3, but 'q' has rank 4
// MISSING: rudnn-run: InvalidArgument: {{.*}}v.npy
// NOFILE: rudnn-run: InvalidArgument: module '{{.*}}nonexistent.mlir': cannot read it: No such file
// BOTH: give exactly one of --inputs DIR and --random SEED
// DIMS: 'q' dim 1 (T) is dynamic: give its size with --dims
// BACKEND: backend must be auto, cuda or emulation, got 'tpu'

func.func @main(%q: tensor<?x?x?x8xf32> {rudnn.name = "q"},
                %k: tensor<?x?x?x8xf32> {rudnn.name = "k"},
                %v: tensor<?x?x?x8xf32> {rudnn.name = "v"},
                %g: tensor<?x?x?x8xf32> {rudnn.name = "g"},
                %beta: tensor<?x?x?xf32> {rudnn.name = "beta"})
    -> (tensor<?x?x?x8xf32> {rudnn.name = "o"}) {
  %o, %s = rudnn.kda %q, %k, %v, %g, %beta
      : (tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>, tensor<?x?x?x8xf32>,
         tensor<?x?x?x8xf32>, tensor<?x?x?xf32>)
      -> (tensor<?x?x?x8xf32>, tensor<?x?x8x8xf32>)
  return %o : tensor<?x?x?x8xf32>
}
