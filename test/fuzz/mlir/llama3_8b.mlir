// Llama-3-8B attention: 32 query heads, 8 kv heads (GQA 4:1), head size 128,
// bf16, FlashAttention's NHD paged cache with 16-token blocks.
//
// @paged_attention serves a whole step: decodes, prefills and chunked
// prefills in one varlen batch. @reshape_and_cache writes the step's new keys
// and values into the cache before attention reads them.

func.func @paged_attention(%query: tensor<?x32x128xbf16>,
                           %kv_cache: tensor<?x2x16x8x128xbf16>,
                           %block_table: tensor<?x?xi32>,
                           %seq_lens: tensor<?xi32>,
                           %query_start_loc: tensor<?xi32>)
    -> (tensor<?x32x128xbf16>, tensor<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %tokens = tensor.dim %query, %c0 : tensor<?x32x128xbf16>
  %out0 = tensor.empty(%tokens) : tensor<?x32x128xbf16>
  %lse0 = tensor.empty(%tokens) : tensor<?x32xf32>
  %md = attn.metadata query_start_loc(%query_start_loc) seq_lens(%seq_lens)
      block_table(%block_table) : tensor<?xi32>, tensor<?xi32>, tensor<?x?xi32>
  // scale = 1 / sqrt(128)
  %out, %lse = attn.paged_attention %query, %kv_cache, %md outs(%out0, %lse0)
      layout(nhd) scale(0.0883883461)
      backend(#attn.backend<name = "FLASH_ATTN", cudagraph = always,
                            reorder_batch_threshold = 1, layout = nhd,
                            block_size_multiple = 16,
                            head_sizes = [64, 128, 256]>)
      : tensor<?x32x128xbf16>, tensor<?x2x16x8x128xbf16>,
        tensor<?x32x128xbf16>, tensor<?x32xf32>
      -> tensor<?x32x128xbf16>, tensor<?x32xf32>
  return %out, %lse : tensor<?x32x128xbf16>, tensor<?x32xf32>
}

func.func @reshape_and_cache(%key: tensor<?x8x128xbf16>,
                             %value: tensor<?x8x128xbf16>,
                             %kv_cache: tensor<?x2x16x8x128xbf16>,
                             %slot_mapping: tensor<?xi64>)
    -> tensor<?x2x16x8x128xbf16> {
  %new = attn.reshape_and_cache %key, %value, %slot_mapping outs(%kv_cache)
      layout(nhd)
      : tensor<?x8x128xbf16>, tensor<?x8x128xbf16>, tensor<?xi64>,
        tensor<?x2x16x8x128xbf16> -> tensor<?x2x16x8x128xbf16>
  return %new : tensor<?x2x16x8x128xbf16>
}
