// Every tool says which rudnn it is.
// RUN: rudnn-opt --version | FileCheck %s
// RUN: rudnn-translate --version | FileCheck %s
// RUN: rudnn-run --version | FileCheck %s
// RUN: rudnn-emulate --version | FileCheck %s
// CHECK: rudnn{{:?}} {{[0-9]+\.[0-9]+\.[0-9]+}}
