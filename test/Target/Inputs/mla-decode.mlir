// An MLA decode on buffers: its kernel sums each score over the whole
// subgroup (gpu.subgroup_reduce), which the target pipelines expand.
func.func @mla(%q: memref<?x8x96xf32>, %c: memref<?x16x96xf32>,
               %bt: memref<?x?xi32>, %lens: memref<?xi32>,
               %o: memref<?x8x80xf32>, %l: memref<?x8xf32>) {
  attn.mla_decode %q, %c, %bt, %lens outs(%o, %l) kv_lora_rank(80)
      scale(0.1)
      : memref<?x8x96xf32>, memref<?x16x96xf32>, memref<?x?xi32>,
        memref<?xi32>, memref<?x8x80xf32>, memref<?x8xf32>
  return
}
