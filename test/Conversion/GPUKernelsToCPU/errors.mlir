// RUN: attn-opt %s --split-input-file --convert-gpu-kernels-to-cpu -verify-diagnostics

// expected-error @below {{gpu.module @k holds kernels built for subgroup size 8; the cpu target runs kernels of subgroup size 1}}
gpu.module @k attributes {attn.kernels, attn.subgroup_size = 8 : i64} {
  gpu.func @k() kernel attributes {known_block_size = array<i32: 8, 1, 1>} {
    gpu.return
  }
}

// -----

gpu.module @k attributes {attn.kernels, attn.subgroup_size = 1 : i64} {
  // expected-error @below {{kernel @k needs one invocation per workgroup (known_block_size 1, 1, 1) for the cpu target}}
  gpu.func @k() kernel attributes {known_block_size = array<i32: 2, 1, 1>} {
    gpu.return
  }
}

// -----

gpu.module @k attributes {attn.kernels, attn.subgroup_size = 1 : i64} {
  gpu.func @k(%v: f32) kernel attributes {known_block_size = array<i32: 1, 1, 1>} {
    %c1 = arith.constant 1 : i32
    %c2 = arith.constant 2 : i32
    // expected-error @below {{gpu.shuffle has no single-invocation form for the cpu target}}
    %s, %ok = gpu.shuffle xor %v, %c1, %c2 : f32
    gpu.return
  }
}

// -----

module attributes {gpu.container_module} {
  func.func @host(%a: memref<?xf32>) {
    %c1 = arith.constant 1 : index
    // expected-error @below {{gpu.launch_func in the input: convert-gpu-kernels-to-cpu takes a module of kernels only}}
    gpu.launch_func @k::@k blocks in (%c1, %c1, %c1) threads in (%c1, %c1, %c1) args(%a : memref<?xf32>)
    return
  }
  gpu.module @k attributes {attn.kernels, attn.subgroup_size = 1 : i64} {
    gpu.func @k(%a: memref<?xf32>) kernel attributes {known_block_size = array<i32: 1, 1, 1>} {
      gpu.return
    }
  }
}
