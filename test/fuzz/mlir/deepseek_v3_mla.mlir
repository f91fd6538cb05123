// DeepSeek-V3 multi-head latent attention decode (and, below, its cache
// write): 128 query heads over one latent kv head; each cache row is the
// 512-value compressed latent (kv_lora_rank) followed by the 64-value rotary
// key part; 64-token blocks; bf16.
//
// scale = mscale^2 / sqrt(192), with qk head dim 128 + 64 = 192 and YaRN's
// mscale = 0.1 * ln(40) + 1 for DeepSeek-V3's rope scaling factor 40.
// Split-KV over 4 chunks of each request's keys; the result does not depend
// on the split count beyond rounding.

func.func @mla_decode(%q: tensor<?x128x576xbf16>,
                      %kv_cache: tensor<?x64x576xbf16>,
                      %block_table: tensor<?x?xi32>,
                      %seq_lens: tensor<?xi32>)
    -> (tensor<?x128x512xbf16>, tensor<?x128xf32>) {
  %c0 = arith.constant 0 : index
  %reqs = tensor.dim %q, %c0 : tensor<?x128x576xbf16>
  %out0 = tensor.empty(%reqs) : tensor<?x128x512xbf16>
  %lse0 = tensor.empty(%reqs) : tensor<?x128xf32>
  %out, %lse = attn.mla_decode %q, %kv_cache, %block_table, %seq_lens
      outs(%out0, %lse0) kv_lora_rank(512) scale(0.13523378)
      num_kv_splits(4)
      backend(#attn.backend<name = "TRITON_MLA",
                            cudagraph = uniform_single_token_decode,
                            reorder_batch_threshold = 1, layout = nhd,
                            block_size_multiple = 16>)
      : tensor<?x128x576xbf16>, tensor<?x64x576xbf16>, tensor<?x?xi32>,
        tensor<?xi32>, tensor<?x128x512xbf16>, tensor<?x128xf32>
      -> tensor<?x128x512xbf16>, tensor<?x128xf32>
  return %out, %lse : tensor<?x128x512xbf16>, tensor<?x128xf32>
}

// The cache write of the same model (vLLM's concat_and_cache_mla): each new
// token's 512-value compressed latent kv_c and 64-value rotary key part k_pe
// become one 576-value row of the latent cache at its slot; slot -1 is a
// padding token.
func.func @reshape_and_cache(%kv_c: tensor<?x512xbf16>,
                             %k_pe: tensor<?x64xbf16>,
                             %kv_cache: tensor<?x64x576xbf16>,
                             %slot_mapping: tensor<?xi64>)
    -> tensor<?x64x576xbf16> {
  %new = attn.reshape_and_cache %kv_c, %k_pe, %slot_mapping outs(%kv_cache)
      backend(#attn.backend<name = "TRITON_MLA",
                            cudagraph = uniform_single_token_decode,
                            reorder_batch_threshold = 1, layout = nhd,
                            block_size_multiple = 16>)
      : tensor<?x512xbf16>, tensor<?x64xbf16>, tensor<?xi64>,
        tensor<?x64x576xbf16> -> tensor<?x64x576xbf16>
  return %new : tensor<?x64x576xbf16>
}
