// Mistral-7B-v0.1: 32 query heads, 8 kv heads, head size 128, f16, a 4096-token
// sliding window (window_left = 4095), and the HND cache layout
// ([num_blocks, 2, kv_heads, block, head]) with 32-token blocks.

func.func @paged_attention(%query: tensor<?x32x128xf16>,
                           %kv_cache: tensor<?x2x8x32x128xf16>,
                           %block_table: tensor<?x?xi32>,
                           %seq_lens: tensor<?xi32>,
                           %query_start_loc: tensor<?xi32>)
    -> (tensor<?x32x128xf16>, tensor<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %tokens = tensor.dim %query, %c0 : tensor<?x32x128xf16>
  %out0 = tensor.empty(%tokens) : tensor<?x32x128xf16>
  %lse0 = tensor.empty(%tokens) : tensor<?x32xf32>
  %md = attn.metadata query_start_loc(%query_start_loc) seq_lens(%seq_lens)
      block_table(%block_table) : tensor<?xi32>, tensor<?xi32>, tensor<?x?xi32>
  %out, %lse = attn.paged_attention %query, %kv_cache, %md outs(%out0, %lse0)
      layout(hnd) scale(0.0883883461) window_left(4095)
      : tensor<?x32x128xf16>, tensor<?x2x8x32x128xf16>,
        tensor<?x32x128xf16>, tensor<?x32xf32>
      -> tensor<?x32x128xf16>, tensor<?x32xf32>
  return %out, %lse : tensor<?x32x128xf16>, tensor<?x32xf32>
}

func.func @reshape_and_cache(%key: tensor<?x8x128xf16>,
                             %value: tensor<?x8x128xf16>,
                             %kv_cache: tensor<?x2x8x32x128xf16>,
                             %slot_mapping: tensor<?xi64>)
    -> tensor<?x2x8x32x128xf16> {
  %new = attn.reshape_and_cache %key, %value, %slot_mapping outs(%kv_cache)
      layout(hnd)
      : tensor<?x8x128xf16>, tensor<?x8x128xf16>, tensor<?xi64>,
        tensor<?x2x8x32x128xf16> -> tensor<?x2x8x32x128xf16>
  return %new : tensor<?x2x8x32x128xf16>
}
