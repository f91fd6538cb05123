// RUN: attn-opt %s -split-input-file -verify-diagnostics --attn-spirv-vector-loads

// A load the pass cannot express in words is an error, not a silent pointer
// cast: not aligned to its size,
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%a: memref<?xf32>) kernel {
      %t = gpu.thread_id x
      // expected-error @below {{reads a kernel argument in a way attn-spirv-vector-loads cannot express in SPIR-V (expects 4, 8, 16 or 32 aligned bytes of 8-, 16- or 32-bit elements, used by static extracts and bitcasts to i32 words)}}
      %v = vector.load %a[%t] : memref<?xf32>, vector<4xf32>
      %e = vector.extract %v[0] : f32 from vector<4xf32>
      memref.store %e, %a[%t] : memref<?xf32>
      gpu.return
    }
  }
}

// -----

// or used as a whole vector.
module attributes {gpu.container_module} {
  gpu.module @kernels {
    gpu.func @k(%a: memref<?xf32>, %b: memref<?xvector<4xf32>>) kernel {
      %t = gpu.thread_id x
      // expected-error @below {{reads a kernel argument in a way attn-spirv-vector-loads cannot express in SPIR-V}}
      %v = vector.load %a[%t] {alignment = 16 : i64} : memref<?xf32>, vector<4xf32>
      memref.store %v, %b[%t] : memref<?xvector<4xf32>>
      gpu.return
    }
  }
}
