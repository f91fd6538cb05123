// Llama-3-8B attention with an fp8 KV cache (vLLM's kv_cache_dtype=fp8,
// e4m3): 32 query heads, 8 kv heads, head size 128, bf16 activations, an NHD
// paged cache of f8E4M3FN with 16-token blocks and per-layer scales. The
// cache is half the bytes of the bf16 one in ../llama3_8b.mlir.
//
// @reshape_and_cache stores fp8(key / k_scale) and fp8(value / v_scale),
// rounded to nearest even and saturated at 448; @paged_attention reads
// k_scale * key and v_scale * value. The functions are in the form
// `attn-compile --emit=mlir --variant ...,kv_cache_dtype=fp8` gives them
// (scales last), so the runtime can call them.
//
// This folder is apart from the other examples because tt cannot compile
// it (TT-Metalium has no fp8 format); every GPU target can.

func.func @paged_attention(%query: tensor<?x32x128xbf16>,
                           %kv_cache: tensor<?x2x16x8x128xf8E4M3FN>,
                           %block_table: tensor<?x?xi32>,
                           %seq_lens: tensor<?xi32>,
                           %query_start_loc: tensor<?xi32>,
                           %k_scale: tensor<1xf32>, %v_scale: tensor<1xf32>)
    -> (tensor<?x32x128xbf16>, tensor<?x32xf32>) {
  %c0 = arith.constant 0 : index
  %tokens = tensor.dim %query, %c0 : tensor<?x32x128xbf16>
  %out0 = tensor.empty(%tokens) : tensor<?x32x128xbf16>
  %lse0 = tensor.empty(%tokens) : tensor<?x32xf32>
  %md = attn.metadata query_start_loc(%query_start_loc) seq_lens(%seq_lens)
      block_table(%block_table) : tensor<?xi32>, tensor<?xi32>, tensor<?x?xi32>
  // scale = 1 / sqrt(128)
  %out, %lse = attn.paged_attention %query, %kv_cache, %md
      k_scale(%k_scale : tensor<1xf32>) v_scale(%v_scale : tensor<1xf32>)
      outs(%out0, %lse0) layout(nhd) scale(0.0883883461)
      backend(#attn.backend<name = "FLASH_ATTN", cudagraph = always,
                            reorder_batch_threshold = 1, layout = nhd,
                            block_size_multiple = 16,
                            head_sizes = [64, 128, 256]>)
      : tensor<?x32x128xbf16>, tensor<?x2x16x8x128xf8E4M3FN>,
        tensor<?x32x128xbf16>, tensor<?x32xf32>
      -> tensor<?x32x128xbf16>, tensor<?x32xf32>
  return %out, %lse : tensor<?x32x128xbf16>, tensor<?x32xf32>
}

func.func @reshape_and_cache(%key: tensor<?x8x128xbf16>,
                             %value: tensor<?x8x128xbf16>,
                             %kv_cache: tensor<?x2x16x8x128xf8E4M3FN>,
                             %slot_mapping: tensor<?xi64>,
                             %k_scale: tensor<1xf32>, %v_scale: tensor<1xf32>)
    -> tensor<?x2x16x8x128xf8E4M3FN> {
  %new = attn.reshape_and_cache %key, %value, %slot_mapping
      k_scale(%k_scale : tensor<1xf32>) v_scale(%v_scale : tensor<1xf32>)
      outs(%kv_cache) layout(nhd)
      : tensor<?x8x128xbf16>, tensor<?x8x128xbf16>, tensor<?xi64>,
        tensor<?x2x16x8x128xf8E4M3FN> -> tensor<?x2x16x8x128xf8E4M3FN>
  return %new : tensor<?x2x16x8x128xf8E4M3FN>
}
