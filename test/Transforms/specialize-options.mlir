// RUN: rudnn-opt %s -rudnn-specialize="arch=sm_80 smem-per-block=166912 sm-count=108" | FileCheck %s --check-prefix=A100
// RUN: rudnn-opt %s -rudnn-specialize="set=chunk=16" | FileCheck %s --check-prefix=CHUNK
// RUN: rudnn-opt %s -rudnn-specialize="smem-per-block=48000" | FileCheck %s --check-prefix=SMALL

// Explicit target options reach the module; the chunk is still chosen.
// A100: module attributes {rudnn.target = #rudnn.target<arch = "sm_80", lanes = 32, smem_per_block = 166912, sm_count = 108>}
// A100-LABEL: func.func @features_64
// A100: rudnn.kda {{.*}} chunk 64 scale
// A100-LABEL: func.func @features_128
// A100: rudnn.kda {{.*}} chunk 64 scale
// A100-LABEL: func.func @fixed_chunk
// A100: rudnn.kda {{.*}} chunk 32 scale

// A forced attribute fills every open chunk; a chunk on the op wins.
// CHUNK-LABEL: func.func @features_64
// CHUNK: rudnn.kda {{.*}} chunk 16 scale
// CHUNK-LABEL: func.func @features_128
// CHUNK: rudnn.kda {{.*}} chunk 16 scale
// CHUNK-LABEL: func.func @fixed_chunk
// CHUNK: rudnn.kda {{.*}} chunk 32 scale

// About 47 KiB of shared memory (the backward's gradients block must fit):
// K = V = 64 drops to chunk 32, K = V = 128 to 16.
// SMALL: smem_per_block = 48000
// SMALL-LABEL: func.func @features_64
// SMALL: rudnn.kda {{.*}} chunk 32 scale
// SMALL-LABEL: func.func @features_128
// SMALL: rudnn.kda {{.*}} chunk 16 scale
// SMALL-LABEL: func.func @fixed_chunk
// SMALL: rudnn.kda {{.*}} chunk 32 scale

func.func @features_64(%q: tensor<?x?x?x64xf16>, %g: tensor<?x?x?x64xf32>,
                       %beta: tensor<?x?x?xf16>) -> tensor<?x?x?x64xf16> {
  %o, %s = rudnn.kda %q, %q, %q, %g, %beta
      : (tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>,
         tensor<?x?x?x64xf32>, tensor<?x?x?xf16>)
      -> (tensor<?x?x?x64xf16>, tensor<?x?x64x64xf32>)
  return %o : tensor<?x?x?x64xf16>
}

func.func @features_128(%q: tensor<?x?x?x128xf16>, %g: tensor<?x?x?x128xf32>,
                        %beta: tensor<?x?x?xf16>) -> tensor<?x?x?x128xf16> {
  %o, %s = rudnn.kda %q, %q, %q, %g, %beta
      : (tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>,
         tensor<?x?x?x128xf32>, tensor<?x?x?xf16>)
      -> (tensor<?x?x?x128xf16>, tensor<?x?x128x128xf32>)
  return %o : tensor<?x?x?x128xf16>
}

func.func @fixed_chunk(%q: tensor<?x?x?x64xf16>, %g: tensor<?x?x?x64xf32>,
                       %beta: tensor<?x?x?xf16>) -> tensor<?x?x?x64xf16> {
  %o, %s = rudnn.kda %q, %q, %q, %g, %beta chunk 32
      : (tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>,
         tensor<?x?x?x64xf32>, tensor<?x?x?xf16>)
      -> (tensor<?x?x?x64xf16>, tensor<?x?x64x64xf32>)
  return %o : tensor<?x?x?x64xf16>
}
