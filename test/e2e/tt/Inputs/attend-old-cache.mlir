// Attends over the cache as it was before the write: the write cannot be in
// place, which is all a TT plan does.
func.func @attend_old_cache(%query: tensor<?x8x64xbf16>,
                             %key: tensor<?x2x64xbf16>,
                             %value: tensor<?x2x64xbf16>,
                             %kv_cache: tensor<?x2x16x2x64xbf16>,
                             %slot_mapping: tensor<?xi64>,
                             %block_table: tensor<?x?xi32>,
                             %seq_lens: tensor<?xi32>,
                             %query_start_loc: tensor<?xi32>)
    -> (tensor<?x8x64xbf16>, tensor<?x8xf32>) {
  %c0 = arith.constant 0 : index
  %tokens = tensor.dim %query, %c0 : tensor<?x8x64xbf16>
  %out0 = tensor.empty(%tokens) : tensor<?x8x64xbf16>
  %lse0 = tensor.empty(%tokens) : tensor<?x8xf32>
  %cache = attn.reshape_and_cache %key, %value, %slot_mapping outs(%kv_cache)
      layout(nhd)
      : tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?xi64>,
        tensor<?x2x16x2x64xbf16> -> tensor<?x2x16x2x64xbf16>
  %md = attn.metadata query_start_loc(%query_start_loc) seq_lens(%seq_lens)
      block_table(%block_table) : tensor<?xi32>, tensor<?xi32>, tensor<?x?xi32>
  %out, %lse = attn.paged_attention %query, %kv_cache, %md outs(%out0, %lse0)
      layout(nhd) scale(0.125)
      : tensor<?x8x64xbf16>, tensor<?x2x16x2x64xbf16>,
        tensor<?x8x64xbf16>, tensor<?x8xf32>
      -> tensor<?x8x64xbf16>, tensor<?x8xf32>
  return %out, %lse : tensor<?x8x64xbf16>, tensor<?x8xf32>
}
