// A bundle's names become file names only when they are plain (letters,
// digits, _ . -, no leading dot): any other name is refused before an input
// is read or an output written, so a bundle cannot reach outside --inputs
// or --outputs.
//
// RUN: rm -rf %t && mkdir -p %t/in %t/secret %t/a/b/out
// RUN: rudnn-run %s --backend emulation --random 1 --dims N=5 --cache-dir "" --save-inputs %t/in > /dev/null
// RUN: cp %t/in/x.npy %t/secret/x.npy

// A result named "../../escaped" would land in %t/a.
// RUN: sed -e 's|"mean"|"../../escaped"|' %s > %t/escape.mlir
// RUN: rudnn-translate %t/escape.mlir --rudnn-to-bundle --rudnn-bundle-targets=emulation -o %t/escape.bundle
// RUN: not rudnn-bundle-run %t/escape.bundle --backend emulation --inputs %t/in --outputs %t/a/b/out 2>&1 | FileCheck %s --check-prefix=ESCAPE
// RUN: not ls %t/a/escaped.npy
// RUN: ls -A %t/a/b/out | count 0
// ESCAPE: rudnn-bundle-run: InvalidArgument: result '../../escaped' cannot name a file: names used as file names are letters, digits, '_', '.' and '-', not starting with '.'

// An absolute result name anywhere.
// RUN: sed -e 's|"mean"|"%t/absolute"|' %s > %t/absolute.mlir
// RUN: rudnn-translate %t/absolute.mlir --rudnn-to-bundle --rudnn-bundle-targets=emulation -o %t/absolute.bundle
// RUN: not rudnn-bundle-run %t/absolute.bundle --backend emulation --inputs %t/in --outputs %t/a/b/out 2>&1 | FileCheck %s --check-prefix=ABSOLUTE
// RUN: not ls %t/absolute.npy
// RUN: ls -A %t/a/b/out | count 0
// ABSOLUTE: rudnn-bundle-run: InvalidArgument: result '{{.*}}/absolute' cannot name a file

// An argument named "../secret/x" would be read from %t/secret (a valid
// file is there): refused before it is read.
// RUN: sed -e 's|"x"|"../secret/x"|' %s > %t/reach.mlir
// RUN: rudnn-translate %t/reach.mlir --rudnn-to-bundle --rudnn-bundle-targets=emulation -o %t/reach.bundle
// RUN: not rudnn-bundle-run %t/reach.bundle --backend emulation --inputs %t/in --outputs %t/a/b/out 2>&1 | FileCheck %s --check-prefix=REACH
// RUN: ls -A %t/a/b/out | count 0
// REACH: rudnn-bundle-run: InvalidArgument: argument '../secret/x' cannot name a file

// A hidden name is refused too; without --outputs a result's name names no
// file, and the run goes on.
// RUN: sed -e 's|"mean"|".hidden"|' %s > %t/hidden.mlir
// RUN: rudnn-translate %t/hidden.mlir --rudnn-to-bundle --rudnn-bundle-targets=emulation -o %t/hidden.bundle
// RUN: not rudnn-bundle-run %t/hidden.bundle --backend emulation --inputs %t/in --outputs %t/a/b/out 2>&1 | FileCheck %s --check-prefix=HIDDEN
// RUN: rudnn-bundle-run %t/hidden.bundle --backend emulation --inputs %t/in | FileCheck %s --check-prefix=PRINTED
// RUN: ls -A %t/a/b/out | count 0
// HIDDEN: rudnn-bundle-run: InvalidArgument: result '.hidden' cannot name a file
// PRINTED: result .hidden: f32[5]

func.func @main(%x: tensor<?x48xf32> {rudnn.name = "x"},
                %gamma: tensor<48xf32> {rudnn.name = "gamma"},
                %beta: tensor<48xf32> {rudnn.name = "beta"})
    -> (tensor<?x48xf32> {rudnn.name = "y"}, tensor<?xf32> {rudnn.name = "mean"}) {
  %y, %mean, %rstd, %h = rudnn.layer_norm %x gamma %gamma beta %beta eps 1.0e-05
      : (tensor<?x48xf32>, tensor<48xf32>, tensor<48xf32>)
      -> (tensor<?x48xf32>, tensor<?xf32>, tensor<?xf32>, tensor<?x48xf32>)
  return %y, %mean : tensor<?x48xf32>, tensor<?xf32>
}
