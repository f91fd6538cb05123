// Gemma-2-9B local-attention layer: 16 query heads, 8 kv heads, head size
// 256, bf16, logit soft cap 50 and a 4096-token sliding window (the query
// sees itself and the 4095 keys before it: window_left = 4095).
// 1/sqrt(256) = 0.0625 (Gemma-2-9B's query_pre_attn_scalar is the head size).

func.func @paged_attention(%query: tensor<?x16x256xbf16>,
                           %kv_cache: tensor<?x2x16x8x256xbf16>,
                           %block_table: tensor<?x?xi32>,
                           %seq_lens: tensor<?xi32>,
                           %query_start_loc: tensor<?xi32>)
    -> (tensor<?x16x256xbf16>, tensor<?x16xf32>) {
  %c0 = arith.constant 0 : index
  %tokens = tensor.dim %query, %c0 : tensor<?x16x256xbf16>
  %out0 = tensor.empty(%tokens) : tensor<?x16x256xbf16>
  %lse0 = tensor.empty(%tokens) : tensor<?x16xf32>
  %md = attn.metadata query_start_loc(%query_start_loc) seq_lens(%seq_lens)
      block_table(%block_table) : tensor<?xi32>, tensor<?xi32>, tensor<?x?xi32>
  %out, %lse = attn.paged_attention %query, %kv_cache, %md outs(%out0, %lse0)
      layout(nhd) scale(0.0625) window_left(4095) soft_cap(50.0)
      : tensor<?x16x256xbf16>, tensor<?x2x16x8x256xbf16>,
        tensor<?x16x256xbf16>, tensor<?x16xf32>
      -> tensor<?x16x256xbf16>, tensor<?x16xf32>
  return %out, %lse : tensor<?x16x256xbf16>, tensor<?x16xf32>
}

func.func @reshape_and_cache(%key: tensor<?x8x256xbf16>,
                             %value: tensor<?x8x256xbf16>,
                             %kv_cache: tensor<?x2x16x8x256xbf16>,
                             %slot_mapping: tensor<?xi64>)
    -> tensor<?x2x16x8x256xbf16> {
  %new = attn.reshape_and_cache %key, %value, %slot_mapping outs(%kv_cache)
      layout(nhd)
      : tensor<?x8x256xbf16>, tensor<?x8x256xbf16>, tensor<?xi64>,
        tensor<?x2x16x8x256xbf16> -> tensor<?x2x16x8x256xbf16>
  return %new : tensor<?x2x16x8x256xbf16>
}
