// rudnn-bundle-run writes its results together or not at all: each to a
// temporary file in the outputs folder first, renamed into place only once
// every one is written. A failure after two results leaves neither.
//
// RUN: rm -rf %t && mkdir -p %t/in
// RUN: rudnn-run %s --backend emulation --random 1 --dims N=5 --cache-dir "" --save-inputs %t/in > /dev/null
// RUN: rudnn-translate %s --rudnn-to-bundle --rudnn-bundle-targets=emulation -o %t/three.bundle

// The third result's place holds a folder: refused before any file is
// written.
// RUN: mkdir -p %t/taken/rstd.npy
// RUN: not rudnn-bundle-run %t/three.bundle --backend emulation --inputs %t/in --outputs %t/taken 2>&1 | FileCheck %s --check-prefix=TAKEN
// RUN: ls -A %t/taken | FileCheck %s --check-prefix=TAKEN-LEFT --implicit-check-not=y.npy --implicit-check-not=mean.npy --implicit-check-not=tmp
// TAKEN: rudnn-bundle-run: InvalidArgument: cannot write '{{.*}}taken/rstd.npy': something other than a file is there
// TAKEN-LEFT: rstd.npy

// The third result's temporary file cannot be made (its name, 251
// characters, is plain, but with a temporary suffix too long for the file
// system): the two written before it are removed, nothing lands.
// RUN: %python -c 'import sys; t = open(sys.argv[1]).read(); open(sys.argv[2], "w").write(t.replace("\"rstd\"", "\"" + "r" * 251 + "\""))' %s %t/long.mlir
// RUN: rudnn-translate %t/long.mlir --rudnn-to-bundle --rudnn-bundle-targets=emulation -o %t/long.bundle
// RUN: mkdir -p %t/long
// RUN: not rudnn-bundle-run %t/long.bundle --backend emulation --inputs %t/in --outputs %t/long 2>&1 | FileCheck %s --check-prefix=LONG
// RUN: ls -A %t/long | count 0
// LONG: rudnn-bundle-run: InvalidArgument: npy: cannot write '{{.*}}/rrrrrrrr{{r+}}.npy': cannot create '{{.*}}.tmp.{{[0-9]+}}.{{[0-9]+}}': File name too long

// All three written when all can be; run again, they are replaced.
// RUN: rudnn-bundle-run %t/three.bundle --backend emulation --inputs %t/in --outputs %t/out > /dev/null
// RUN: rudnn-bundle-run %t/three.bundle --backend emulation --inputs %t/in --outputs %t/out > /dev/null
// RUN: ls -A %t/out | FileCheck %s --check-prefix=ALL --implicit-check-not=tmp
// ALL: mean.npy
// ALL-NEXT: rstd.npy
// ALL-NEXT: y.npy

func.func @main(%x: tensor<?x48xf32> {rudnn.name = "x"},
                %gamma: tensor<48xf32> {rudnn.name = "gamma"},
                %beta: tensor<48xf32> {rudnn.name = "beta"})
    -> (tensor<?x48xf32> {rudnn.name = "y"}, tensor<?xf32> {rudnn.name = "mean"},
        tensor<?xf32> {rudnn.name = "rstd"}) {
  %y, %mean, %rstd, %h = rudnn.layer_norm %x gamma %gamma beta %beta eps 1.0e-05
      : (tensor<?x48xf32>, tensor<48xf32>, tensor<48xf32>)
      -> (tensor<?x48xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?x48xf32>)
  return %y, %mean, %rstd : tensor<?x48xf32>, tensor<?xf32>, tensor<?xf32>
}
