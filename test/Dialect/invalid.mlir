// One case per verifier message of the attn ops and attributes.
// RUN: attn-opt %s -split-input-file -verify-diagnostics

func.func @metadata_qsl_rank(%qsl: tensor<?x?xi32>, %lens: tensor<?xi32>, %bt: tensor<?x?xi32>) {
  // expected-error @+1 {{'attn.metadata' op expects query_start_loc to have rank 1, got 'tensor<?x?xi32>'}}
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt) : tensor<?x?xi32>, tensor<?xi32>, tensor<?x?xi32>
  return
}

// -----

func.func @metadata_seq_lens_type(%qsl: tensor<?xi32>, %lens: tensor<?xi64>, %bt: tensor<?x?xi32>) {
  // expected-error @+1 {{expects seq_lens element type to be i32, got 'i64'}}
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt) : tensor<?xi32>, tensor<?xi64>, tensor<?x?xi32>
  return
}

// -----

func.func @metadata_slot_mapping_type(%qsl: tensor<?xi32>, %lens: tensor<?xi32>, %bt: tensor<?x?xi32>, %s: tensor<?xi32>) {
  // expected-error @+1 {{expects slot_mapping element type to be i64, got 'i32'}}
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt) slot_mapping(%s : tensor<?xi32>) : tensor<?xi32>, tensor<?xi32>, tensor<?x?xi32>
  return
}

// -----

func.func @metadata_qsl_size(%qsl: tensor<4xi32>, %lens: tensor<4xi32>, %bt: tensor<?x?xi32>) {
  // expected-error @+1 {{expects query_start_loc to have one more entry than seq_lens, got 4 and 4}}
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt) : tensor<4xi32>, tensor<4xi32>, tensor<?x?xi32>
  return
}

// -----

func.func @metadata_block_table_rows(%qsl: tensor<4xi32>, %lens: tensor<3xi32>, %bt: tensor<2x8xi32>) {
  // expected-error @+1 {{expects block_table and seq_lens to agree on the number of requests, got 2 and 3}}
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt) : tensor<4xi32>, tensor<3xi32>, tensor<2x8xi32>
  return
}

// -----

func.func @metadata_mixed(%qsl: memref<?xi32>, %lens: tensor<?xi32>, %bt: tensor<?x?xi32>) {
  // expected-error @+1 {{expects operands to be all tensors or all memrefs}}
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt) : memref<?xi32>, tensor<?xi32>, tensor<?x?xi32>
  return
}

// -----

func.func @pa_query_type(%q: tensor<?x8x64xi8>, %c: tensor<?x2x16x8x64xi8>, %md: !attn.metadata, %o: tensor<?x8x64xi8>, %l: tensor<?x8xf32>) {
  // expected-error @+1 {{expects query element type to be f32, f16 or bf16, got 'i8'}}
  %0:2 = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.125) : tensor<?x8x64xi8>, tensor<?x2x16x8x64xi8>, tensor<?x8x64xi8>, tensor<?x8xf32> -> tensor<?x8x64xi8>, tensor<?x8xf32>
  return
}

// -----

func.func @pa_cache_rank(%q: tensor<?x8x64xf16>, %c: tensor<?x16x8x64xf16>, %md: !attn.metadata, %o: tensor<?x8x64xf16>, %l: tensor<?x8xf32>) {
  // expected-error @+1 {{expects kv_cache to have rank 5, got 'tensor<?x16x8x64xf16>'}}
  %0:2 = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.125) : tensor<?x8x64xf16>, tensor<?x16x8x64xf16>, tensor<?x8x64xf16>, tensor<?x8xf32> -> tensor<?x8x64xf16>, tensor<?x8xf32>
  return
}

// -----

func.func @pa_cache_dtype(%q: tensor<?x8x64xf16>, %c: tensor<?x2x16x8x64xbf16>, %md: !attn.metadata, %o: tensor<?x8x64xf16>, %l: tensor<?x8xf32>) {
  // expected-error @+1 {{expects kv_cache element type to be 'f16' (the query's) or fp8 (f8E4M3FN, f8E5M2), got 'bf16'}}
  %0:2 = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.125) : tensor<?x8x64xf16>, tensor<?x2x16x8x64xbf16>, tensor<?x8x64xf16>, tensor<?x8xf32> -> tensor<?x8x64xf16>, tensor<?x8xf32>
  return
}

// -----

func.func @pa_cache_kv_axis(%q: tensor<?x8x64xf16>, %c: tensor<?x3x16x8x64xf16>, %md: !attn.metadata, %o: tensor<?x8x64xf16>, %l: tensor<?x8xf32>) {
  // expected-error @+1 {{expects kv_cache dimension 1 to be 2 (keys, values), got 3}}
  %0:2 = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.125) : tensor<?x8x64xf16>, tensor<?x3x16x8x64xf16>, tensor<?x8x64xf16>, tensor<?x8xf32> -> tensor<?x8x64xf16>, tensor<?x8xf32>
  return
}

// -----

func.func @pa_gqa(%q: tensor<?x8x64xf16>, %c: tensor<?x2x16x3x64xf16>, %md: !attn.metadata, %o: tensor<?x8x64xf16>, %l: tensor<?x8xf32>) {
  // expected-error @+1 {{expects num_heads (8) to be a multiple of num_kv_heads (3)}}
  %0:2 = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.125) : tensor<?x8x64xf16>, tensor<?x2x16x3x64xf16>, tensor<?x8x64xf16>, tensor<?x8xf32> -> tensor<?x8x64xf16>, tensor<?x8xf32>
  return
}

// -----

// In the hnd layout, dimension 2 holds the kv heads.
func.func @pa_gqa_hnd(%q: tensor<?x8x64xf16>, %c: tensor<?x2x16x8x64xf16>, %md: !attn.metadata, %o: tensor<?x8x64xf16>, %l: tensor<?x8xf32>) {
  // expected-error @+1 {{expects num_heads (8) to be a multiple of num_kv_heads (16)}}
  %0:2 = attn.paged_attention %q, %c, %md outs(%o, %l) layout(hnd) scale(0.125) : tensor<?x8x64xf16>, tensor<?x2x16x8x64xf16>, tensor<?x8x64xf16>, tensor<?x8xf32> -> tensor<?x8x64xf16>, tensor<?x8xf32>
  return
}

// -----

func.func @pa_head_size(%q: tensor<?x8x64xf16>, %c: tensor<?x2x16x8x128xf16>, %md: !attn.metadata, %o: tensor<?x8x64xf16>, %l: tensor<?x8xf32>) {
  // expected-error @+1 {{expects kv_cache head size (128) to equal query head size (64)}}
  %0:2 = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.125) : tensor<?x8x64xf16>, tensor<?x2x16x8x128xf16>, tensor<?x8x64xf16>, tensor<?x8xf32> -> tensor<?x8x64xf16>, tensor<?x8xf32>
  return
}

// -----

func.func @pa_out_shape(%q: tensor<?x8x64xf16>, %c: tensor<?x2x16x8x64xf16>, %md: !attn.metadata, %o: tensor<?x4x64xf16>, %l: tensor<?x8xf32>) {
  // expected-error @+1 {{expects query and out_init to agree on the output shape, got 8 and 4}}
  %0:2 = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.125) : tensor<?x8x64xf16>, tensor<?x2x16x8x64xf16>, tensor<?x4x64xf16>, tensor<?x8xf32> -> tensor<?x4x64xf16>, tensor<?x8xf32>
  return
}

// -----

func.func @pa_lse_type(%q: tensor<?x8x64xf16>, %c: tensor<?x2x16x8x64xf16>, %md: !attn.metadata, %o: tensor<?x8x64xf16>, %l: tensor<?x8xf16>) {
  // expected-error @+1 {{expects lse_init element type to be 'f32' (log-sum-exp is always f32), got 'f16'}}
  %0:2 = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.125) : tensor<?x8x64xf16>, tensor<?x2x16x8x64xf16>, tensor<?x8x64xf16>, tensor<?x8xf16> -> tensor<?x8x64xf16>, tensor<?x8xf16>
  return
}

// -----

func.func @pa_lse_tokens(%q: tensor<5x8x64xf16>, %c: tensor<?x2x16x8x64xf16>, %md: !attn.metadata, %o: tensor<5x8x64xf16>, %l: tensor<6x8xf32>) {
  // expected-error @+1 {{expects query and lse_init to agree on the number of tokens, got 5 and 6}}
  %0:2 = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.125) : tensor<5x8x64xf16>, tensor<?x2x16x8x64xf16>, tensor<5x8x64xf16>, tensor<6x8xf32> -> tensor<5x8x64xf16>, tensor<6x8xf32>
  return
}

// -----

func.func @pa_alibi_shape(%q: tensor<?x8x64xf16>, %c: tensor<?x2x16x8x64xf16>, %md: !attn.metadata, %a: tensor<4xf32>, %o: tensor<?x8x64xf16>, %l: tensor<?x8xf32>) {
  // expected-error @+1 {{expects alibi_slopes and query to agree on the number of query heads, got 4 and 8}}
  %0:2 = attn.paged_attention %q, %c, %md alibi(%a : tensor<4xf32>) outs(%o, %l) layout(nhd) scale(0.125) : tensor<?x8x64xf16>, tensor<?x2x16x8x64xf16>, tensor<?x8x64xf16>, tensor<?x8xf32> -> tensor<?x8x64xf16>, tensor<?x8xf32>
  return
}

// -----

func.func @pa_sinks_type(%q: tensor<?x8x64xf16>, %c: tensor<?x2x16x8x64xf16>, %md: !attn.metadata, %s: tensor<8xf16>, %o: tensor<?x8x64xf16>, %l: tensor<?x8xf32>) {
  // expected-error @+1 {{expects sinks element type to be 'f32' (one value per query head), got 'f16'}}
  %0:2 = attn.paged_attention %q, %c, %md sinks(%s : tensor<8xf16>) outs(%o, %l) layout(nhd) scale(0.125) : tensor<?x8x64xf16>, tensor<?x2x16x8x64xf16>, tensor<?x8x64xf16>, tensor<?x8xf32> -> tensor<?x8x64xf16>, tensor<?x8xf32>
  return
}

// -----

func.func @pa_scale(%q: tensor<?x8x64xf16>, %c: tensor<?x2x16x8x64xf16>, %md: !attn.metadata, %o: tensor<?x8x64xf16>, %l: tensor<?x8xf32>) {
  // expected-error @+1 {{expects a finite scale > 0, got 0}}
  %0:2 = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.0) : tensor<?x8x64xf16>, tensor<?x2x16x8x64xf16>, tensor<?x8x64xf16>, tensor<?x8xf32> -> tensor<?x8x64xf16>, tensor<?x8xf32>
  return
}

// -----

func.func @pa_window_left(%q: tensor<?x8x64xf16>, %c: tensor<?x2x16x8x64xf16>, %md: !attn.metadata, %o: tensor<?x8x64xf16>, %l: tensor<?x8xf32>) {
  // expected-error @+1 {{expects window_left >= -1 (-1: unbounded), got -2}}
  %0:2 = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.125) window_left(-2) : tensor<?x8x64xf16>, tensor<?x2x16x8x64xf16>, tensor<?x8x64xf16>, tensor<?x8xf32> -> tensor<?x8x64xf16>, tensor<?x8xf32>
  return
}

// -----

func.func @pa_window_right(%q: tensor<?x8x64xf16>, %c: tensor<?x2x16x8x64xf16>, %md: !attn.metadata, %o: tensor<?x8x64xf16>, %l: tensor<?x8xf32>) {
  // expected-error @+1 {{expects window_right >= -1 (-1: unbounded), got -5}}
  %0:2 = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.125) window_right(-5) : tensor<?x8x64xf16>, tensor<?x2x16x8x64xf16>, tensor<?x8x64xf16>, tensor<?x8xf32> -> tensor<?x8x64xf16>, tensor<?x8xf32>
  return
}

// -----

func.func @pa_soft_cap(%q: tensor<?x8x64xf16>, %c: tensor<?x2x16x8x64xf16>, %md: !attn.metadata, %o: tensor<?x8x64xf16>, %l: tensor<?x8xf32>) {
  // expected-error @+1 {{expects a finite soft_cap >= 0 (0: no cap), got -1}}
  %0:2 = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.125) soft_cap(-1.0) : tensor<?x8x64xf16>, tensor<?x2x16x8x64xf16>, tensor<?x8x64xf16>, tensor<?x8xf32> -> tensor<?x8x64xf16>, tensor<?x8xf32>
  return
}

// -----

func.func @pa_backend_block_16(%q: tensor<?x8x64xf16>, %c: tensor<?x2x8x8x64xf16>, %md: !attn.metadata, %o: tensor<?x8x64xf16>, %l: tensor<?x8xf32>) {
  // expected-error @+1 {{expects block size 8 to be a multiple of 16, as backend FLASH_ATTN requires}}
  %0:2 = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.125) backend(#attn.backend<name = "FLASH_ATTN", cudagraph = always, layout = nhd, block_size_multiple = 8>) : tensor<?x8x64xf16>, tensor<?x2x8x8x64xf16>, tensor<?x8x64xf16>, tensor<?x8xf32> -> tensor<?x8x64xf16>, tensor<?x8xf32>
  return
}

// -----

func.func @pa_backend_block_multiple(%q: tensor<?x8x64xf16>, %c: tensor<?x2x16x8x64xf16>, %md: !attn.metadata, %o: tensor<?x8x64xf16>, %l: tensor<?x8xf32>) {
  // expected-error @+1 {{expects block size 16 to be a multiple of 32 (backend MY_BACKEND block_size_multiple)}}
  %0:2 = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.125) backend(#attn.backend<name = "MY_BACKEND", cudagraph = never, layout = nhd, block_size_multiple = 32>) : tensor<?x8x64xf16>, tensor<?x2x16x8x64xf16>, tensor<?x8x64xf16>, tensor<?x8xf32> -> tensor<?x8x64xf16>, tensor<?x8xf32>
  return
}

// -----

func.func @pa_backend_layout(%q: tensor<?x8x64xf16>, %c: tensor<?x2x16x8x64xf16>, %md: !attn.metadata, %o: tensor<?x8x64xf16>, %l: tensor<?x8xf32>) {
  // expected-error @+1 {{expects layout nhd to match the layout of backend FLASH_ATTN (hnd)}}
  %0:2 = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.125) backend(#attn.backend<name = "FLASH_ATTN", cudagraph = always, layout = hnd, block_size_multiple = 16>) : tensor<?x8x64xf16>, tensor<?x2x16x8x64xf16>, tensor<?x8x64xf16>, tensor<?x8xf32> -> tensor<?x8x64xf16>, tensor<?x8xf32>
  return
}

// -----

func.func @pa_backend_head_size(%q: tensor<?x8x64xf16>, %c: tensor<?x2x16x8x64xf16>, %md: !attn.metadata, %o: tensor<?x8x64xf16>, %l: tensor<?x8xf32>) {
  // expected-error @+1 {{expects head size 64 to be one of the head sizes of backend FLASH_ATTN}}
  %0:2 = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.125) backend(#attn.backend<name = "FLASH_ATTN", cudagraph = always, layout = nhd, block_size_multiple = 16, head_sizes = [128, 256]>) : tensor<?x8x64xf16>, tensor<?x2x16x8x64xf16>, tensor<?x8x64xf16>, tensor<?x8xf32> -> tensor<?x8x64xf16>, tensor<?x8xf32>
  return
}

// -----

func.func @pa_mla_kv_heads(%q: tensor<?x8x64xf16>, %c: tensor<?x2x16x2x64xf16>, %md: !attn.metadata, %o: tensor<?x8x64xf16>, %l: tensor<?x8xf32>) {
  // expected-error @+1 {{expects one kv head for MLA backend TRITON_MLA, got 2}}
  %0:2 = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.125) backend(#attn.backend<name = "TRITON_MLA", cudagraph = always, layout = nhd, block_size_multiple = 16>) : tensor<?x8x64xf16>, tensor<?x2x16x2x64xf16>, tensor<?x8x64xf16>, tensor<?x8xf32> -> tensor<?x8x64xf16>, tensor<?x8xf32>
  return
}

// -----

func.func @pa_mla_window(%q: tensor<?x8x64xf16>, %c: tensor<?x2x16x1x64xf16>, %md: !attn.metadata, %o: tensor<?x8x64xf16>, %l: tensor<?x8xf32>) {
  // expected-error @+1 {{expects no sliding window for MLA backend TRITON_MLA}}
  %0:2 = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.125) window_left(128) backend(#attn.backend<name = "TRITON_MLA", cudagraph = always, layout = nhd, block_size_multiple = 16>) : tensor<?x8x64xf16>, tensor<?x2x16x1x64xf16>, tensor<?x8x64xf16>, tensor<?x8xf32> -> tensor<?x8x64xf16>, tensor<?x8xf32>
  return
}

// -----

func.func @pa_results(%q: tensor<?x8x64xf16>, %c: tensor<?x2x16x8x64xf16>, %md: !attn.metadata, %o: tensor<?x8x64xf16>, %l: tensor<?x8xf32>) {
  // expected-error @+1 {{expected the number of tensor results (1) to be equal to the number of output tensors (2)}}
  %0 = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.125) : tensor<?x8x64xf16>, tensor<?x2x16x8x64xf16>, tensor<?x8x64xf16>, tensor<?x8xf32> -> tensor<?x8x64xf16>
  return
}

// -----

func.func @rc_value_type(%k: tensor<?x8x64xf16>, %v: tensor<?x8x64xf32>, %s: tensor<?xi64>, %c: tensor<?x2x16x8x64xf16>) {
  // expected-error @+1 {{expects value type 'tensor<?x8x64xf32>' to equal key type 'tensor<?x8x64xf16>'}}
  %0 = attn.reshape_and_cache %k, %v, %s outs(%c) layout(nhd) : tensor<?x8x64xf16>, tensor<?x8x64xf32>, tensor<?xi64>, tensor<?x2x16x8x64xf16> -> tensor<?x2x16x8x64xf16>
  return
}

// -----

func.func @rc_slot_tokens(%k: tensor<4x8x64xf16>, %s: tensor<5xi64>, %c: tensor<?x2x16x8x64xf16>) {
  // expected-error @+1 {{expects key and slot_mapping to agree on the number of tokens, got 4 and 5}}
  %0 = attn.reshape_and_cache %k, %k, %s outs(%c) layout(nhd) : tensor<4x8x64xf16>, tensor<4x8x64xf16>, tensor<5xi64>, tensor<?x2x16x8x64xf16> -> tensor<?x2x16x8x64xf16>
  return
}

// -----

func.func @rc_kv_heads(%k: tensor<?x8x64xf16>, %s: tensor<?xi64>, %c: tensor<?x2x16x4x64xf16>) {
  // expected-error @+1 {{expects key and kv_cache to agree on the number of kv heads, got 8 and 4}}
  %0 = attn.reshape_and_cache %k, %k, %s outs(%c) layout(nhd) : tensor<?x8x64xf16>, tensor<?x8x64xf16>, tensor<?xi64>, tensor<?x2x16x4x64xf16> -> tensor<?x2x16x4x64xf16>
  return
}

// -----

func.func @rc_head_size(%k: tensor<?x8x64xf16>, %s: tensor<?xi64>, %c: tensor<?x2x8x16x128xf16>) {
  // expected-error @+1 {{expects key and kv_cache to agree on the head size, got 64 and 128}}
  %0 = attn.reshape_and_cache %k, %k, %s outs(%c) layout(hnd) : tensor<?x8x64xf16>, tensor<?x8x64xf16>, tensor<?xi64>, tensor<?x2x8x16x128xf16> -> tensor<?x2x8x16x128xf16>
  return
}

// -----

func.func @rc_cache_dtype(%k: tensor<?x8x64xf16>, %s: tensor<?xi64>, %c: tensor<?x2x16x8x64xf32>) {
  // expected-error @+1 {{expects kv_cache element type to be 'f16' (the key's) or fp8 (f8E4M3FN, f8E5M2), got 'f32'}}
  %0 = attn.reshape_and_cache %k, %k, %s outs(%c) layout(nhd) : tensor<?x8x64xf16>, tensor<?x8x64xf16>, tensor<?xi64>, tensor<?x2x16x8x64xf32> -> tensor<?x2x16x8x64xf32>
  return
}

// -----

func.func @rc_backend(%k: tensor<?x8x64xf16>, %s: tensor<?xi64>, %c: tensor<?x2x24x8x64xf16>) {
  // expected-error @+1 {{expects block size 24 to be a multiple of 16, as backend FLASH_ATTN requires}}
  %0 = attn.reshape_and_cache %k, %k, %s outs(%c) layout(nhd) backend(#attn.backend<name = "FLASH_ATTN", cudagraph = always, layout = nhd, block_size_multiple = 8>) : tensor<?x8x64xf16>, tensor<?x8x64xf16>, tensor<?xi64>, tensor<?x2x24x8x64xf16> -> tensor<?x2x24x8x64xf16>
  return
}

// -----

func.func @rc_cache_rank(%k: tensor<?x8x64xf16>, %s: tensor<?xi64>, %c: tensor<?x16x8x64xf16>) {
  // expected-error @+1 {{expects kv_cache to have rank 5 (paged) or 3 (MLA latent cache), got 'tensor<?x16x8x64xf16>'}}
  %0 = attn.reshape_and_cache %k, %k, %s outs(%c) layout(nhd) : tensor<?x8x64xf16>, tensor<?x8x64xf16>, tensor<?xi64>, tensor<?x16x8x64xf16> -> tensor<?x16x8x64xf16>
  return
}

// -----

func.func @rc_no_layout(%k: tensor<?x8x64xf16>, %s: tensor<?xi64>, %c: tensor<?x2x16x8x64xf16>) {
  // expected-error @+1 {{expects a layout (nhd or hnd) with a paged (rank-5) kv_cache}}
  %0 = attn.reshape_and_cache %k, %k, %s outs(%c) : tensor<?x8x64xf16>, tensor<?x8x64xf16>, tensor<?xi64>, tensor<?x2x16x8x64xf16> -> tensor<?x2x16x8x64xf16>
  return
}

// -----

func.func @rc_mla_layout(%k: tensor<?x512xbf16>, %v: tensor<?x64xbf16>, %s: tensor<?xi64>, %c: tensor<?x64x576xbf16>) {
  // expected-error @+1 {{expects no layout with an MLA latent cache (rank-3 kv_cache)}}
  %0 = attn.reshape_and_cache %k, %v, %s outs(%c) layout(nhd) : tensor<?x512xbf16>, tensor<?x64xbf16>, tensor<?xi64>, tensor<?x64x576xbf16> -> tensor<?x64x576xbf16>
  return
}

// -----

func.func @rc_mla_key_rank(%k: tensor<?x1x512xbf16>, %v: tensor<?x64xbf16>, %s: tensor<?xi64>, %c: tensor<?x64x576xbf16>) {
  // expected-error @+1 {{expects key to have rank 2, got 'tensor<?x1x512xbf16>'}}
  %0 = attn.reshape_and_cache %k, %v, %s outs(%c) : tensor<?x1x512xbf16>, tensor<?x64xbf16>, tensor<?xi64>, tensor<?x64x576xbf16> -> tensor<?x64x576xbf16>
  return
}

// -----

func.func @rc_mla_value_rank(%k: tensor<?x512xbf16>, %v: tensor<?x1x64xbf16>, %s: tensor<?xi64>, %c: tensor<?x64x576xbf16>) {
  // expected-error @+1 {{expects value to have rank 2, got 'tensor<?x1x64xbf16>'}}
  %0 = attn.reshape_and_cache %k, %v, %s outs(%c) : tensor<?x512xbf16>, tensor<?x1x64xbf16>, tensor<?xi64>, tensor<?x64x576xbf16> -> tensor<?x64x576xbf16>
  return
}

// -----

func.func @rc_mla_value_dtype(%k: tensor<?x512xbf16>, %v: tensor<?x64xf32>, %s: tensor<?xi64>, %c: tensor<?x64x576xbf16>) {
  // expected-error @+1 {{expects value element type to be 'bf16' (the key's), got 'f32'}}
  %0 = attn.reshape_and_cache %k, %v, %s outs(%c) : tensor<?x512xbf16>, tensor<?x64xf32>, tensor<?xi64>, tensor<?x64x576xbf16> -> tensor<?x64x576xbf16>
  return
}

// -----

func.func @rc_mla_value_tokens(%k: tensor<4x512xbf16>, %v: tensor<3x64xbf16>, %s: tensor<?xi64>, %c: tensor<?x64x576xbf16>) {
  // expected-error @+1 {{expects key and value to agree on the number of tokens, got 4 and 3}}
  %0 = attn.reshape_and_cache %k, %v, %s outs(%c) : tensor<4x512xbf16>, tensor<3x64xbf16>, tensor<?xi64>, tensor<?x64x576xbf16> -> tensor<?x64x576xbf16>
  return
}

// -----

func.func @rc_mla_slot_tokens(%k: tensor<4x512xbf16>, %v: tensor<4x64xbf16>, %s: tensor<5xi64>, %c: tensor<?x64x576xbf16>) {
  // expected-error @+1 {{expects key and slot_mapping to agree on the number of tokens, got 4 and 5}}
  %0 = attn.reshape_and_cache %k, %v, %s outs(%c) : tensor<4x512xbf16>, tensor<4x64xbf16>, tensor<5xi64>, tensor<?x64x576xbf16> -> tensor<?x64x576xbf16>
  return
}

// -----

func.func @rc_mla_slot_type(%k: tensor<?x512xbf16>, %v: tensor<?x64xbf16>, %s: tensor<?xi32>, %c: tensor<?x64x576xbf16>) {
  // expected-error @+1 {{expects slot_mapping element type to be i64, got 'i32'}}
  %0 = attn.reshape_and_cache %k, %v, %s outs(%c) : tensor<?x512xbf16>, tensor<?x64xbf16>, tensor<?xi32>, tensor<?x64x576xbf16> -> tensor<?x64x576xbf16>
  return
}

// -----

func.func @rc_mla_cache_dtype(%k: tensor<?x512xbf16>, %v: tensor<?x64xbf16>, %s: tensor<?xi64>, %c: tensor<?x64x576xf16>) {
  // expected-error @+1 {{expects kv_cache element type to be 'bf16' (the key's) or fp8 (f8E4M3FN, f8E5M2), got 'f16'}}
  %0 = attn.reshape_and_cache %k, %v, %s outs(%c) : tensor<?x512xbf16>, tensor<?x64xbf16>, tensor<?xi64>, tensor<?x64x576xf16> -> tensor<?x64x576xf16>
  return
}

// -----

func.func @rc_mla_row_size(%k: tensor<?x512xbf16>, %v: tensor<?x32xbf16>, %s: tensor<?xi64>, %c: tensor<?x64x576xbf16>) {
  // expected-error @+1 {{expects kv_cache dimension 2 (the latent row: key size + value size) to be 544, got 576}}
  %0 = attn.reshape_and_cache %k, %v, %s outs(%c) : tensor<?x512xbf16>, tensor<?x32xbf16>, tensor<?xi64>, tensor<?x64x576xbf16> -> tensor<?x64x576xbf16>
  return
}

// -----

func.func @rc_mla_backend(%k: tensor<?x512xbf16>, %v: tensor<?x64xbf16>, %s: tensor<?xi64>, %c: tensor<?x64x576xbf16>) {
  // expected-error @+1 {{expects an MLA backend with a latent cache, got FLASH_ATTN}}
  %0 = attn.reshape_and_cache %k, %v, %s outs(%c) backend(#attn.backend<name = "FLASH_ATTN", cudagraph = always, layout = nhd, block_size_multiple = 16>) : tensor<?x512xbf16>, tensor<?x64xbf16>, tensor<?xi64>, tensor<?x64x576xbf16> -> tensor<?x64x576xbf16>
  return
}

// -----

func.func @rc_mla_backend_block(%k: tensor<?x512xbf16>, %v: tensor<?x64xbf16>, %s: tensor<?xi64>, %c: tensor<?x40x576xbf16>) {
  // expected-error @+1 {{expects block size 40 to be a multiple of 16, as backend TRITON_MLA requires}}
  %0 = attn.reshape_and_cache %k, %v, %s outs(%c) backend(#attn.backend<name = "TRITON_MLA", cudagraph = always, layout = nhd, block_size_multiple = 8>) : tensor<?x512xbf16>, tensor<?x64xbf16>, tensor<?xi64>, tensor<?x40x576xbf16> -> tensor<?x40x576xbf16>
  return
}

// -----

func.func @mla_row_size(%q: tensor<?x16x576xbf16>, %c: tensor<?x64x512xbf16>, %bt: tensor<?x?xi32>, %lens: tensor<?xi32>, %o: tensor<?x16x512xbf16>, %l: tensor<?x16xf32>) {
  // expected-error @+1 {{expects q and kv_cache to agree on the latent row size (kv_lora_rank + rope dim), got 576 and 512}}
  %0:2 = attn.mla_decode %q, %c, %bt, %lens outs(%o, %l) kv_lora_rank(512) scale(0.1) : tensor<?x16x576xbf16>, tensor<?x64x512xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?x16x512xbf16>, tensor<?x16xf32> -> tensor<?x16x512xbf16>, tensor<?x16xf32>
  return
}

// -----

func.func @mla_cache_rank(%q: tensor<?x16x576xbf16>, %c: tensor<?x2x64x1x576xbf16>, %bt: tensor<?x?xi32>, %lens: tensor<?xi32>, %o: tensor<?x16x512xbf16>, %l: tensor<?x16xf32>) {
  // expected-error @+1 {{expects kv_cache to have rank 3, got 'tensor<?x2x64x1x576xbf16>'}}
  %0:2 = attn.mla_decode %q, %c, %bt, %lens outs(%o, %l) kv_lora_rank(512) scale(0.1) : tensor<?x16x576xbf16>, tensor<?x2x64x1x576xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?x16x512xbf16>, tensor<?x16xf32> -> tensor<?x16x512xbf16>, tensor<?x16xf32>
  return
}

// -----

func.func @mla_requests(%q: tensor<3x16x576xbf16>, %c: tensor<?x64x576xbf16>, %bt: tensor<?x?xi32>, %lens: tensor<4xi32>, %o: tensor<3x16x512xbf16>, %l: tensor<3x16xf32>) {
  // expected-error @+1 {{expects q and seq_lens to agree on the number of requests, got 3 and 4}}
  %0:2 = attn.mla_decode %q, %c, %bt, %lens outs(%o, %l) kv_lora_rank(512) scale(0.1) : tensor<3x16x576xbf16>, tensor<?x64x576xbf16>, tensor<?x?xi32>, tensor<4xi32>, tensor<3x16x512xbf16>, tensor<3x16xf32> -> tensor<3x16x512xbf16>, tensor<3x16xf32>
  return
}

// -----

func.func @mla_block_table_type(%q: tensor<?x16x576xbf16>, %c: tensor<?x64x576xbf16>, %bt: tensor<?x?xi64>, %lens: tensor<?xi32>, %o: tensor<?x16x512xbf16>, %l: tensor<?x16xf32>) {
  // expected-error @+1 {{expects block_table element type to be i32, got 'i64'}}
  %0:2 = attn.mla_decode %q, %c, %bt, %lens outs(%o, %l) kv_lora_rank(512) scale(0.1) : tensor<?x16x576xbf16>, tensor<?x64x576xbf16>, tensor<?x?xi64>, tensor<?xi32>, tensor<?x16x512xbf16>, tensor<?x16xf32> -> tensor<?x16x512xbf16>, tensor<?x16xf32>
  return
}

// -----

func.func @mla_rank(%q: tensor<?x16x576xbf16>, %c: tensor<?x64x576xbf16>, %bt: tensor<?x?xi32>, %lens: tensor<?xi32>, %o: tensor<?x16x576xbf16>, %l: tensor<?x16xf32>) {
  // expected-error @+1 {{expects kv_lora_rank in (0, 576), got 576}}
  %0:2 = attn.mla_decode %q, %c, %bt, %lens outs(%o, %l) kv_lora_rank(576) scale(0.1) : tensor<?x16x576xbf16>, tensor<?x64x576xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?x16x576xbf16>, tensor<?x16xf32> -> tensor<?x16x576xbf16>, tensor<?x16xf32>
  return
}

// -----

func.func @mla_out_width(%q: tensor<?x16x576xbf16>, %c: tensor<?x64x576xbf16>, %bt: tensor<?x?xi32>, %lens: tensor<?xi32>, %o: tensor<?x16x576xbf16>, %l: tensor<?x16xf32>) {
  // expected-error @+1 {{expects out_init dimension 2 (kv_lora_rank) to be 512, got 576}}
  %0:2 = attn.mla_decode %q, %c, %bt, %lens outs(%o, %l) kv_lora_rank(512) scale(0.1) : tensor<?x16x576xbf16>, tensor<?x64x576xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?x16x576xbf16>, tensor<?x16xf32> -> tensor<?x16x576xbf16>, tensor<?x16xf32>
  return
}

// -----

func.func @mla_scale(%q: tensor<?x16x576xbf16>, %c: tensor<?x64x576xbf16>, %bt: tensor<?x?xi32>, %lens: tensor<?xi32>, %o: tensor<?x16x512xbf16>, %l: tensor<?x16xf32>) {
  // expected-error @+1 {{expects a finite scale > 0, got -1}}
  %0:2 = attn.mla_decode %q, %c, %bt, %lens outs(%o, %l) kv_lora_rank(512) scale(-1.0) : tensor<?x16x576xbf16>, tensor<?x64x576xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?x16x512xbf16>, tensor<?x16xf32> -> tensor<?x16x512xbf16>, tensor<?x16xf32>
  return
}

// -----

func.func @mla_splits(%q: tensor<?x16x576xbf16>, %c: tensor<?x64x576xbf16>, %bt: tensor<?x?xi32>, %lens: tensor<?xi32>, %o: tensor<?x16x512xbf16>, %l: tensor<?x16xf32>) {
  // expected-error @+1 {{expects num_kv_splits >= 1, got 0}}
  %0:2 = attn.mla_decode %q, %c, %bt, %lens outs(%o, %l) kv_lora_rank(512) scale(0.1) num_kv_splits(0) : tensor<?x16x576xbf16>, tensor<?x64x576xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?x16x512xbf16>, tensor<?x16xf32> -> tensor<?x16x512xbf16>, tensor<?x16xf32>
  return
}

// -----

func.func @mla_not_mla_backend(%q: tensor<?x16x576xbf16>, %c: tensor<?x64x576xbf16>, %bt: tensor<?x?xi32>, %lens: tensor<?xi32>, %o: tensor<?x16x512xbf16>, %l: tensor<?x16xf32>) {
  // expected-error @+1 {{expects an MLA backend, got FLASH_ATTN}}
  %0:2 = attn.mla_decode %q, %c, %bt, %lens outs(%o, %l) kv_lora_rank(512) scale(0.1) backend(#attn.backend<name = "FLASH_ATTN", cudagraph = always, layout = nhd, block_size_multiple = 16>) : tensor<?x16x576xbf16>, tensor<?x64x576xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?x16x512xbf16>, tensor<?x16xf32> -> tensor<?x16x512xbf16>, tensor<?x16xf32>
  return
}

// -----

func.func @mla_backend_block(%q: tensor<?x16x576xbf16>, %c: tensor<?x40x576xbf16>, %bt: tensor<?x?xi32>, %lens: tensor<?xi32>, %o: tensor<?x16x512xbf16>, %l: tensor<?x16xf32>) {
  // expected-error @+1 {{expects block size 40 to be a multiple of 16, as backend TRITON_MLA requires}}
  %0:2 = attn.mla_decode %q, %c, %bt, %lens outs(%o, %l) kv_lora_rank(512) scale(0.1) backend(#attn.backend<name = "TRITON_MLA", cudagraph = always, layout = nhd, block_size_multiple = 8>) : tensor<?x16x576xbf16>, tensor<?x40x576xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?x16x512xbf16>, tensor<?x16xf32> -> tensor<?x16x512xbf16>, tensor<?x16xf32>
  return
}

// -----

func.func @merge_out_b_dtype(%oa: tensor<?x8x64xf16>, %la: tensor<?x8xf32>, %ob: tensor<?x8x64xf32>, %o: tensor<?x8x64xf16>) {
  // expected-error @+1 {{expects out_b element type to be 'f16' (out_a's), got 'f32'}}
  %0:2 = attn.merge_states %oa, %la, %ob, %la outs(%o, %la) : tensor<?x8x64xf16>, tensor<?x8xf32>, tensor<?x8x64xf32>, tensor<?x8xf32>, tensor<?x8x64xf16>, tensor<?x8xf32> -> tensor<?x8x64xf16>, tensor<?x8xf32>
  return
}

// -----

func.func @merge_out_rank(%oa: tensor<?x8x64xf16>, %la: tensor<?x8xf32>, %o: tensor<?x512xf16>) {
  // expected-error @+1 {{expects out_init to have rank 3, got 'tensor<?x512xf16>'}}
  %0:2 = attn.merge_states %oa, %la, %oa, %la outs(%o, %la) : tensor<?x8x64xf16>, tensor<?x8xf32>, tensor<?x8x64xf16>, tensor<?x8xf32>, tensor<?x512xf16>, tensor<?x8xf32> -> tensor<?x512xf16>, tensor<?x8xf32>
  return
}

// -----

func.func @merge_lse_heads(%oa: tensor<?x8x64xf16>, %la: tensor<?x8xf32>, %lb: tensor<?x4xf32>) {
  // expected-error @+1 {{expects out_a and lse_b to agree on the number of heads, got 8 and 4}}
  %0:2 = attn.merge_states %oa, %la, %oa, %lb outs(%oa, %la) : tensor<?x8x64xf16>, tensor<?x8xf32>, tensor<?x8x64xf16>, tensor<?x4xf32>, tensor<?x8x64xf16>, tensor<?x8xf32> -> tensor<?x8x64xf16>, tensor<?x8xf32>
  return
}

// -----

func.func @merge_shape(%oa: tensor<4x8x64xf16>, %la: tensor<4x8xf32>, %ob: tensor<4x8x32xf16>) {
  // expected-error @+1 {{expects out_a and out_b to agree on the output shape, got 64 and 32}}
  %0:2 = attn.merge_states %oa, %la, %ob, %la outs(%oa, %la) : tensor<4x8x64xf16>, tensor<4x8xf32>, tensor<4x8x32xf16>, tensor<4x8xf32>, tensor<4x8x64xf16>, tensor<4x8xf32> -> tensor<4x8x64xf16>, tensor<4x8xf32>
  return
}

// -----

// expected-error @+1 {{backend name must not be empty}}
func.func @backend_name() attributes {b = #attn.backend<name = "", cudagraph = always, layout = nhd, block_size_multiple = 16>} {
  return
}

// -----

// expected-error @+1 {{backend block_size_multiple must be positive, got 0}}
func.func @backend_block_multiple() attributes {b = #attn.backend<name = "X", cudagraph = always, layout = nhd, block_size_multiple = 0>} {
  return
}

// -----

// expected-error @+1 {{backend reorder_batch_threshold must be at least 1, got 0}}
func.func @backend_reorder() attributes {b = #attn.backend<name = "X", cudagraph = always, reorder_batch_threshold = 0, layout = nhd, block_size_multiple = 16>} {
  return
}

// -----

// A threshold past i32 once passed here and failed every GPU compile with
// "failed to legalize operation 'arith.constant'".
// expected-error @+1 {{backend reorder_batch_threshold must be at most 2147483647 (a query length, i32), got 4294967301}}
func.func @backend_reorder_limit() attributes {b = #attn.backend<name = "X", cudagraph = always, reorder_batch_threshold = 4294967301, layout = nhd, block_size_multiple = 16>} {
  return
}

// -----

// expected-error @+1 {{backend head sizes must be positive, got -64}}
func.func @backend_head_sizes() attributes {b = #attn.backend<name = "X", cudagraph = always, layout = nhd, block_size_multiple = 16, head_sizes = [128, -64]>} {
  return
}

// -----

// Sizes: every static size is at least 1 (a head size of 0 once divided by
// zero in the lowering) and at most dialect/Limits.h's bound.
func.func @pa_zero_head_size(%q: tensor<?x8x0xf16>, %c: tensor<?x2x16x8x0xf16>, %md: !attn.metadata, %o: tensor<?x8x0xf16>, %l: tensor<?x8xf32>) {
  // expected-error @+1 {{expects head size >= 1, got 0}}
  %0:2 = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.125) : tensor<?x8x0xf16>, tensor<?x2x16x8x0xf16>, tensor<?x8x0xf16>, tensor<?x8xf32> -> tensor<?x8x0xf16>, tensor<?x8xf32>
  return
}

// -----

func.func @pa_zero_kv_heads(%q: tensor<?x8x64xf16>, %c: tensor<?x2x16x0x64xf16>, %md: !attn.metadata, %o: tensor<?x8x64xf16>, %l: tensor<?x8xf32>) {
  // expected-error @+1 {{expects num_kv_heads >= 1, got 0}}
  %0:2 = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.125) : tensor<?x8x64xf16>, tensor<?x2x16x0x64xf16>, tensor<?x8x64xf16>, tensor<?x8xf32> -> tensor<?x8x64xf16>, tensor<?x8xf32>
  return
}

// -----

func.func @pa_huge_block(%q: tensor<?x8x64xf16>, %c: tensor<?x2x1000000000x8x64xf16>, %md: !attn.metadata, %o: tensor<?x8x64xf16>, %l: tensor<?x8xf32>) {
  // expected-error @+1 {{expects block size <= 4096 (dialect/Limits.h), got 1000000000}}
  %0:2 = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.125) : tensor<?x8x64xf16>, tensor<?x2x1000000000x8x64xf16>, tensor<?x8x64xf16>, tensor<?x8xf32> -> tensor<?x8x64xf16>, tensor<?x8xf32>
  return
}

// -----

func.func @pa_huge_heads(%q: tensor<?x8192x64xf16>, %c: tensor<?x2x16x8x64xf16>, %md: !attn.metadata, %o: tensor<?x8192x64xf16>, %l: tensor<?x8192xf32>) {
  // expected-error @+1 {{expects num_heads <= 4096 (dialect/Limits.h), got 8192}}
  %0:2 = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.125) : tensor<?x8192x64xf16>, tensor<?x2x16x8x64xf16>, tensor<?x8192x64xf16>, tensor<?x8192xf32> -> tensor<?x8192x64xf16>, tensor<?x8192xf32>
  return
}

// -----

func.func @pa_inf_scale(%q: tensor<?x8x64xf16>, %c: tensor<?x2x16x8x64xf16>, %md: !attn.metadata, %o: tensor<?x8x64xf16>, %l: tensor<?x8xf32>) {
  // 1e39 rounds to +inf in f32.
  // expected-error @+1 {{expects a finite scale > 0, got INF}}
  %0:2 = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(1.0e39) : tensor<?x8x64xf16>, tensor<?x2x16x8x64xf16>, tensor<?x8x64xf16>, tensor<?x8xf32> -> tensor<?x8x64xf16>, tensor<?x8xf32>
  return
}

// -----

func.func @pa_inf_soft_cap(%q: tensor<?x8x64xf16>, %c: tensor<?x2x16x8x64xf16>, %md: !attn.metadata, %o: tensor<?x8x64xf16>, %l: tensor<?x8xf32>) {
  // expected-error @+1 {{expects a finite soft_cap >= 0 (0: no cap), got INF}}
  %0:2 = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.125) soft_cap(1.0e39) : tensor<?x8x64xf16>, tensor<?x2x16x8x64xf16>, tensor<?x8x64xf16>, tensor<?x8xf32> -> tensor<?x8x64xf16>, tensor<?x8xf32>
  return
}

// -----

func.func @pa_huge_window(%q: tensor<?x8x64xf16>, %c: tensor<?x2x16x8x64xf16>, %md: !attn.metadata, %o: tensor<?x8x64xf16>, %l: tensor<?x8xf32>) {
  // expected-error @+1 {{expects window_left <= 2147483647 (positions are i32), got 4294967296}}
  %0:2 = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.125) window_left(4294967296) : tensor<?x8x64xf16>, tensor<?x2x16x8x64xf16>, tensor<?x8x64xf16>, tensor<?x8xf32> -> tensor<?x8x64xf16>, tensor<?x8xf32>
  return
}

// -----

func.func @rc_zero_head_size(%k: tensor<?x8x0xf16>, %s: tensor<?xi64>, %c: tensor<?x2x16x8x0xf16>) {
  // expected-error @+1 {{expects head size >= 1, got 0}}
  %0 = attn.reshape_and_cache %k, %k, %s outs(%c) layout(nhd) : tensor<?x8x0xf16>, tensor<?x8x0xf16>, tensor<?xi64>, tensor<?x2x16x8x0xf16> -> tensor<?x2x16x8x0xf16>
  return
}

// -----

func.func @rc_latent_zero_rope(%k: tensor<?x512xbf16>, %v: tensor<?x0xbf16>, %s: tensor<?xi64>, %c: tensor<?x64x512xbf16>) {
  // expected-error @+1 {{expects rope dim (value size) >= 1, got 0}}
  %0 = attn.reshape_and_cache %k, %v, %s outs(%c) : tensor<?x512xbf16>, tensor<?x0xbf16>, tensor<?xi64>, tensor<?x64x512xbf16> -> tensor<?x64x512xbf16>
  return
}

// -----

func.func @mla_huge_splits(%q: tensor<?x16x576xbf16>, %c: tensor<?x64x576xbf16>, %bt: tensor<?x?xi32>, %lens: tensor<?xi32>, %o: tensor<?x16x512xbf16>, %l: tensor<?x16xf32>) {
  // expected-error @+1 {{expects num_kv_splits <= 1024 (dialect/Limits.h), got 100000}}
  %0:2 = attn.mla_decode %q, %c, %bt, %lens outs(%o, %l) kv_lora_rank(512) scale(0.1) num_kv_splits(100000) : tensor<?x16x576xbf16>, tensor<?x64x576xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?x16x512xbf16>, tensor<?x16xf32> -> tensor<?x16x512xbf16>, tensor<?x16xf32>
  return
}

// -----

func.func @mla_huge_row(%q: tensor<?x16x8192xbf16>, %c: tensor<?x64x8192xbf16>, %bt: tensor<?x?xi32>, %lens: tensor<?xi32>, %o: tensor<?x16x512xbf16>, %l: tensor<?x16xf32>) {
  // expected-error @+1 {{expects latent row size <= 4096 (dialect/Limits.h), got 8192}}
  %0:2 = attn.mla_decode %q, %c, %bt, %lens outs(%o, %l) kv_lora_rank(512) scale(0.1) : tensor<?x16x8192xbf16>, tensor<?x64x8192xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?x16x512xbf16>, tensor<?x16xf32> -> tensor<?x16x512xbf16>, tensor<?x16xf32>
  return
}

// -----

func.func @ms_zero_heads(%o: tensor<?x0x64xf16>, %l: tensor<?x0xf32>) {
  // expected-error @+1 {{expects num_heads >= 1, got 0}}
  %0:2 = attn.merge_states %o, %l, %o, %l outs(%o, %l) : tensor<?x0x64xf16>, tensor<?x0xf32>, tensor<?x0x64xf16>, tensor<?x0xf32>, tensor<?x0x64xf16>, tensor<?x0xf32> -> tensor<?x0x64xf16>, tensor<?x0xf32>
  return
}

// -----

// fp8 caches and their scales.

func.func @mla_cache_dtype(%q: tensor<?x4x80xbf16>, %c: tensor<?x16x80xf16>, %bt: tensor<?x?xi32>, %lens: tensor<?xi32>, %o: tensor<?x4x64xbf16>, %l: tensor<?x4xf32>) {
  // expected-error @+1 {{expects kv_cache element type to be 'bf16' (q's) or fp8 (f8E4M3FN, f8E5M2), got 'f16'}}
  %0:2 = attn.mla_decode %q, %c, %bt, %lens outs(%o, %l) kv_lora_rank(64) scale(0.125) : tensor<?x4x80xbf16>, tensor<?x16x80xf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?x4x64xbf16>, tensor<?x4xf32> -> tensor<?x4x64xbf16>, tensor<?x4xf32>
  return
}

// -----

func.func @pa_fp8_no_scales(%q: tensor<?x8x64xbf16>, %c: tensor<?x2x16x2x64xf8E4M3FN>, %md: !attn.metadata, %o: tensor<?x8x64xbf16>, %l: tensor<?x8xf32>, %ks: tensor<1xf32>) {
  // expected-error @+1 {{expects k_scale and v_scale with an fp8 kv_cache ('f8E4M3FN')}}
  %0:2 = attn.paged_attention %q, %c, %md k_scale(%ks : tensor<1xf32>) outs(%o, %l) layout(nhd) scale(0.125) : tensor<?x8x64xbf16>, tensor<?x2x16x2x64xf8E4M3FN>, tensor<?x8x64xbf16>, tensor<?x8xf32> -> tensor<?x8x64xbf16>, tensor<?x8xf32>
  return
}

// -----

func.func @pa_scales_without_fp8(%q: tensor<?x8x64xbf16>, %c: tensor<?x2x16x2x64xbf16>, %md: !attn.metadata, %o: tensor<?x8x64xbf16>, %l: tensor<?x8xf32>, %ks: tensor<1xf32>) {
  // expected-error @+1 {{expects no k_scale or v_scale with a 'bf16' kv_cache (scales are for fp8 caches)}}
  %0:2 = attn.paged_attention %q, %c, %md k_scale(%ks : tensor<1xf32>) v_scale(%ks : tensor<1xf32>) outs(%o, %l) layout(nhd) scale(0.125) : tensor<?x8x64xbf16>, tensor<?x2x16x2x64xbf16>, tensor<?x8x64xbf16>, tensor<?x8xf32> -> tensor<?x8x64xbf16>, tensor<?x8xf32>
  return
}

// -----

func.func @pa_scale_rank(%q: tensor<?x8x64xbf16>, %c: tensor<?x2x16x2x64xf8E5M2>, %md: !attn.metadata, %o: tensor<?x8x64xbf16>, %l: tensor<?x8xf32>, %ks: tensor<f32>, %vs: tensor<1xf32>) {
  // expected-error @+1 {{expects k_scale to have rank 1, got 'tensor<f32>'}}
  %0:2 = attn.paged_attention %q, %c, %md k_scale(%ks : tensor<f32>) v_scale(%vs : tensor<1xf32>) outs(%o, %l) layout(nhd) scale(0.125) : tensor<?x8x64xbf16>, tensor<?x2x16x2x64xf8E5M2>, tensor<?x8x64xbf16>, tensor<?x8xf32> -> tensor<?x8x64xbf16>, tensor<?x8xf32>
  return
}

// -----

func.func @pa_scale_dtype(%q: tensor<?x8x64xbf16>, %c: tensor<?x2x16x2x64xf8E4M3FN>, %md: !attn.metadata, %o: tensor<?x8x64xbf16>, %l: tensor<?x8xf32>, %ks: tensor<1xf32>, %vs: tensor<1xf16>) {
  // expected-error @+1 {{expects v_scale element type to be 'f32' (scales are f32), got 'f16'}}
  %0:2 = attn.paged_attention %q, %c, %md k_scale(%ks : tensor<1xf32>) v_scale(%vs : tensor<1xf16>) outs(%o, %l) layout(nhd) scale(0.125) : tensor<?x8x64xbf16>, tensor<?x2x16x2x64xf8E4M3FN>, tensor<?x8x64xbf16>, tensor<?x8xf32> -> tensor<?x8x64xbf16>, tensor<?x8xf32>
  return
}

// -----

func.func @rc_scale_size(%k: tensor<?x2x64xbf16>, %s: tensor<?xi64>, %c: tensor<?x2x2x16x64xf8E4M3FN>, %ks: tensor<1xf32>, %vs: tensor<3xf32>) {
  // expected-error @+1 {{expects v_scale to have 1 element (per layer) or num_kv_heads (per kv head), got 3}}
  %0 = attn.reshape_and_cache %k, %k, %s k_scale(%ks : tensor<1xf32>) v_scale(%vs : tensor<3xf32>) outs(%c) layout(hnd) : tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?xi64>, tensor<?x2x2x16x64xf8E4M3FN> -> tensor<?x2x2x16x64xf8E4M3FN>
  return
}

// -----

func.func @rc_mla_v_scale(%k: tensor<?x512xbf16>, %v: tensor<?x64xbf16>, %s: tensor<?xi64>, %c: tensor<?x64x576xf8E4M3FN>, %ks: tensor<1xf32>) {
  // expected-error @+1 {{expects no v_scale with an MLA latent cache (one scale, k_scale)}}
  %0 = attn.reshape_and_cache %k, %v, %s k_scale(%ks : tensor<1xf32>) v_scale(%ks : tensor<1xf32>) outs(%c) : tensor<?x512xbf16>, tensor<?x64xbf16>, tensor<?xi64>, tensor<?x64x576xf8E4M3FN> -> tensor<?x64x576xf8E4M3FN>
  return
}

// -----

func.func @mla_fp8_no_scale(%q: tensor<?x4x80xbf16>, %c: tensor<?x16x80xf8E5M2>, %bt: tensor<?x?xi32>, %lens: tensor<?xi32>, %o: tensor<?x4x64xbf16>, %l: tensor<?x4xf32>) {
  // expected-error @+1 {{expects k_scale with an fp8 kv_cache ('f8E5M2')}}
  %0:2 = attn.mla_decode %q, %c, %bt, %lens outs(%o, %l) kv_lora_rank(64) scale(0.125) : tensor<?x4x80xbf16>, tensor<?x16x80xf8E5M2>, tensor<?x?xi32>, tensor<?xi32>, tensor<?x4x64xbf16>, tensor<?x4xf32> -> tensor<?x4x64xbf16>, tensor<?x4xf32>
  return
}

// -----

func.func @mla_scale_per_head(%q: tensor<?x4x80xbf16>, %c: tensor<?x16x80xf8E5M2>, %bt: tensor<?x?xi32>, %lens: tensor<?xi32>, %o: tensor<?x4x64xbf16>, %l: tensor<?x4xf32>, %ks: tensor<4xf32>) {
  // expected-error @+1 {{expects k_scale to have 1 element (per layer), got 4}}
  %0:2 = attn.mla_decode %q, %c, %bt, %lens k_scale(%ks : tensor<4xf32>) outs(%o, %l) kv_lora_rank(64) scale(0.125) : tensor<?x4x80xbf16>, tensor<?x16x80xf8E5M2>, tensor<?x?xi32>, tensor<?xi32>, tensor<?x4x64xbf16>, tensor<?x4xf32> -> tensor<?x4x64xbf16>, tensor<?x4xf32>
  return
}
