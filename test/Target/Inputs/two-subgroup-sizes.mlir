// Two kernel modules marked as built for different subgroup sizes (as if
// from two convert-attn-to-gpu runs): one module cannot lower both.
module attributes {gpu.container_module} {
  gpu.module @narrow attributes {attn.subgroup_size = 16 : i64} {
    gpu.func @a() kernel attributes {known_block_size = array<i32: 16, 1, 1>} {
      gpu.return
    }
  }
  gpu.module @wide attributes {attn.subgroup_size = 32 : i64} {
    gpu.func @b() kernel attributes {known_block_size = array<i32: 32, 1, 1>} {
      gpu.return
    }
  }
}
