// rudnn-run --version: the version and what this machine offers, each piece
// named (NVRTC is found without a GPU; the driver line says why it is
// missing where there is none).
// RUN: rudnn-run --version | FileCheck %s
// CHECK: rudnn: {{[0-9]+\.[0-9]+\.[0-9]+}}
// CHECK-NEXT: nvrtc: nvrtc {{1[2-9]\.[0-9]+}} ({{.*}}libnvrtc.so.1{{[0-9]}})
// CHECK-NEXT: cuda headers: {{/.+}}
// CHECK-NEXT: ptxas: {{/.+}}/ptxas
// CHECK-NEXT: cuda driver: {{CUDA [0-9]+\.[0-9]+|unavailable: .+}}
