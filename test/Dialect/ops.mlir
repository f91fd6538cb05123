// Round trip of every attn op and attribute: custom form, then the generic
// form parsed back into the custom one.
// RUN: attn-opt %s | attn-opt | FileCheck %s
// RUN: attn-opt %s --mlir-print-op-generic | attn-opt | FileCheck %s

// CHECK-LABEL: func.func @metadata
func.func @metadata(%qsl: tensor<?xi32>, %lens: tensor<?xi32>,
                    %bt: tensor<?x?xi32>, %slots: tensor<?xi64>)
    -> (!attn.metadata, !attn.metadata) {
  // CHECK: attn.metadata query_start_loc(%{{[a-z0-9_#]+}}) seq_lens(%{{[a-z0-9_#]+}}) block_table(%{{[a-z0-9_#]+}}) : tensor<?xi32>, tensor<?xi32>, tensor<?x?xi32>
  %a = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      : tensor<?xi32>, tensor<?xi32>, tensor<?x?xi32>
  // CHECK: attn.metadata {{.*}} slot_mapping(%{{[a-z0-9_#]+}} : tensor<?xi64>) {causal = false}
  %b = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      slot_mapping(%slots : tensor<?xi64>) {causal = false}
      : tensor<?xi32>, tensor<?xi32>, tensor<?x?xi32>
  return %a, %b : !attn.metadata, !attn.metadata
}


// CHECK-LABEL: func.func @paged_attention_all_knobs
func.func @paged_attention_all_knobs(%q: tensor<?x8x64xf16>,
    %cache: tensor<?x2x4x16x64xf16>, %md: !attn.metadata,
    %slopes: tensor<8xf32>, %sinks: tensor<8xf32>,
    %o: tensor<?x8x64xf16>, %l: tensor<?x8xf32>)
    -> (tensor<?x8x64xf16>, tensor<?x8xf32>) {
  // CHECK: %[[R:.*]]:2 = attn.paged_attention %{{[a-z0-9_#]+}}, %{{[a-z0-9_#]+}}, %{{[a-z0-9_#]+}} alibi(%{{[a-z0-9_#]+}} : tensor<8xf32>) sinks(%{{[a-z0-9_#]+}} : tensor<8xf32>) outs(%{{[a-z0-9_#]+}}, %{{[a-z0-9_#]+}})
  // CHECK-SAME: layout(hnd) scale(1.250000e-01) window_left(127) window_right(3) soft_cap(3.000000e+01)
  // CHECK-SAME: backend(<name = "FLASH_ATTN", cudagraph = uniform_batch, layout = hnd, block_size_multiple = 16>)
  // CHECK-SAME: -> tensor<?x8x64xf16>, tensor<?x8xf32>
  %out, %lse = attn.paged_attention %q, %cache, %md
      alibi(%slopes : tensor<8xf32>) sinks(%sinks : tensor<8xf32>)
      outs(%o, %l) layout(hnd) scale(0.125) window_left(127) window_right(3)
      soft_cap(30.0)
      backend(#attn.backend<name = "FLASH_ATTN", cudagraph = uniform_batch,
                            layout = hnd, block_size_multiple = 16>)
      : tensor<?x8x64xf16>, tensor<?x2x4x16x64xf16>, tensor<?x8x64xf16>,
        tensor<?x8xf32> -> tensor<?x8x64xf16>, tensor<?x8xf32>
  return %out, %lse : tensor<?x8x64xf16>, tensor<?x8xf32>
}


// Defaults are not printed: no window, no cap, no backend.
// CHECK-LABEL: func.func @paged_attention_defaults
func.func @paged_attention_defaults(%q: tensor<5x4x32xf32>,
    %cache: tensor<3x2x16x4x32xf32>, %md: !attn.metadata,
    %o: tensor<5x4x32xf32>, %l: tensor<5x4xf32>)
    -> (tensor<5x4x32xf32>, tensor<5x4xf32>) {
  // CHECK: attn.paged_attention {{.*}} outs(%{{[a-z0-9_#]+}}, %{{[a-z0-9_#]+}}) layout(nhd) scale(5.000000e-01) :
  // CHECK-NOT: window
  %out, %lse = attn.paged_attention %q, %cache, %md outs(%o, %l)
      layout(nhd) scale(0.5) window_left(-1) soft_cap(0.0)
      : tensor<5x4x32xf32>, tensor<3x2x16x4x32xf32>, tensor<5x4x32xf32>,
        tensor<5x4xf32> -> tensor<5x4x32xf32>, tensor<5x4xf32>
  return %out, %lse : tensor<5x4x32xf32>, tensor<5x4xf32>
}


// On memrefs the ops have no results and write their destinations.
// CHECK-LABEL: func.func @on_memrefs
func.func @on_memrefs(%q: memref<?x4x32xbf16>, %cache: memref<?x2x16x4x32xbf16>,
    %qsl: memref<?xi32>, %lens: memref<?xi32>, %bt: memref<?x?xi32>,
    %o: memref<?x4x32xbf16>, %l: memref<?x4xf32>,
    %k: memref<?x4x32xbf16>, %slots: memref<?xi64>) {
  // CHECK: attn.metadata {{.*}} : memref<?xi32>, memref<?xi32>, memref<?x?xi32>
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      : memref<?xi32>, memref<?xi32>, memref<?x?xi32>
  // CHECK: attn.paged_attention {{.*}} : memref<?x4x32xbf16>, memref<?x2x16x4x32xbf16>, memref<?x4x32xbf16>, memref<?x4xf32>{{$}}
  attn.paged_attention %q, %cache, %md outs(%o, %l) layout(nhd) scale(0.17)
      : memref<?x4x32xbf16>, memref<?x2x16x4x32xbf16>, memref<?x4x32xbf16>,
        memref<?x4xf32>
  // CHECK: attn.reshape_and_cache {{.*}} outs(%{{[a-z0-9_#]+}}) layout(nhd) : {{.*}}memref<?x2x16x4x32xbf16>{{$}}
  attn.reshape_and_cache %k, %k, %slots outs(%cache) layout(nhd)
      : memref<?x4x32xbf16>, memref<?x4x32xbf16>, memref<?xi64>,
        memref<?x2x16x4x32xbf16>
  return
}


// CHECK-LABEL: func.func @reshape_and_cache
func.func @reshape_and_cache(%k: tensor<?x8x128xbf16>, %v: tensor<?x8x128xbf16>,
    %slots: tensor<?xi64>, %cache: tensor<?x2x16x8x128xbf16>)
    -> tensor<?x2x16x8x128xbf16> {
  // CHECK: %{{[a-z0-9_#]+}} = attn.reshape_and_cache %{{[a-z0-9_#]+}}, %{{[a-z0-9_#]+}}, %{{[a-z0-9_#]+}} outs(%{{[a-z0-9_#]+}}) layout(nhd) backend(<name = "FLASH_ATTN", cudagraph = always, reorder_batch_threshold = 1, layout = nhd, block_size_multiple = 16, head_sizes = [128]>)
  %new = attn.reshape_and_cache %k, %v, %slots outs(%cache) layout(nhd)
      backend(#attn.backend<name = "FLASH_ATTN", cudagraph = always,
                            reorder_batch_threshold = 1, layout = nhd,
                            block_size_multiple = 16, head_sizes = [128]>)
      : tensor<?x8x128xbf16>, tensor<?x8x128xbf16>, tensor<?xi64>,
        tensor<?x2x16x8x128xbf16> -> tensor<?x2x16x8x128xbf16>
  return %new : tensor<?x2x16x8x128xbf16>
}


// CHECK-LABEL: func.func @reshape_and_cache_mla
func.func @reshape_and_cache_mla(%kv_c: tensor<?x512xbf16>,
    %k_pe: tensor<?x64xbf16>, %slots: tensor<?xi64>,
    %cache: tensor<?x64x576xbf16>) -> tensor<?x64x576xbf16> {
  // CHECK: %{{[a-z0-9_#]+}} = attn.reshape_and_cache %{{[a-z0-9_#]+}}, %{{[a-z0-9_#]+}}, %{{[a-z0-9_#]+}} outs(%{{[a-z0-9_#]+}}) backend(<name = "TRITON_MLA", cudagraph = uniform_single_token_decode, layout = nhd, block_size_multiple = 16>) : tensor<?x512xbf16>, tensor<?x64xbf16>, tensor<?xi64>, tensor<?x64x576xbf16> -> tensor<?x64x576xbf16>
  %new = attn.reshape_and_cache %kv_c, %k_pe, %slots outs(%cache)
      backend(#attn.backend<name = "TRITON_MLA",
                            cudagraph = uniform_single_token_decode,
                            layout = nhd, block_size_multiple = 16>)
      : tensor<?x512xbf16>, tensor<?x64xbf16>, tensor<?xi64>,
        tensor<?x64x576xbf16> -> tensor<?x64x576xbf16>
  return %new : tensor<?x64x576xbf16>
}

// CHECK-LABEL: func.func @mla_decode
func.func @mla_decode(%q: tensor<?x16x576xbf16>, %cache: tensor<?x64x576xbf16>,
    %bt: tensor<?x?xi32>, %lens: tensor<?xi32>, %o: tensor<?x16x512xbf16>,
    %l: tensor<?x16xf32>) -> (tensor<?x16x512xbf16>, tensor<?x16xf32>) {
  // CHECK: attn.mla_decode {{.*}} outs(%{{[a-z0-9_#]+}}, %{{[a-z0-9_#]+}}) kv_lora_rank(512) scale(1.250000e-01) num_kv_splits(8) backend(<name = "TRITON_MLA", cudagraph = uniform_single_token_decode, layout = nhd, block_size_multiple = 16>)
  %out, %lse = attn.mla_decode %q, %cache, %bt, %lens outs(%o, %l)
      kv_lora_rank(512) scale(0.125) num_kv_splits(8)
      backend(#attn.backend<name = "TRITON_MLA",
                            cudagraph = uniform_single_token_decode,
                            layout = nhd, block_size_multiple = 16>)
      : tensor<?x16x576xbf16>, tensor<?x64x576xbf16>, tensor<?x?xi32>,
        tensor<?xi32>, tensor<?x16x512xbf16>, tensor<?x16xf32>
      -> tensor<?x16x512xbf16>, tensor<?x16xf32>
  return %out, %lse : tensor<?x16x512xbf16>, tensor<?x16xf32>
}


// num_kv_splits defaults to 1 and is then not printed.
// CHECK-LABEL: func.func @mla_decode_default_splits
func.func @mla_decode_default_splits(%q: tensor<2x4x96xf32>,
    %cache: tensor<8x16x96xf32>, %bt: tensor<2x4xi32>, %lens: tensor<2xi32>,
    %o: tensor<2x4x64xf32>, %l: tensor<2x4xf32>)
    -> (tensor<2x4x64xf32>, tensor<2x4xf32>) {
  // CHECK: kv_lora_rank(64) scale(1.000000e-01) :
  %out, %lse = attn.mla_decode %q, %cache, %bt, %lens outs(%o, %l)
      kv_lora_rank(64) scale(0.1)
      : tensor<2x4x96xf32>, tensor<8x16x96xf32>, tensor<2x4xi32>,
        tensor<2xi32>, tensor<2x4x64xf32>, tensor<2x4xf32>
      -> tensor<2x4x64xf32>, tensor<2x4xf32>
  return %out, %lse : tensor<2x4x64xf32>, tensor<2x4xf32>
}


// CHECK-LABEL: func.func @merge_states
func.func @merge_states(%oa: tensor<?x32x128xf16>, %la: tensor<?x32xf32>,
    %ob: tensor<?x32x128xf16>, %lb: tensor<?x32xf32>,
    %o: tensor<?x32x128xf16>, %l: tensor<?x32xf32>)
    -> (tensor<?x32x128xf16>, tensor<?x32xf32>) {
  // CHECK: attn.merge_states %{{[a-z0-9_#]+}}, %{{[a-z0-9_#]+}}, %{{[a-z0-9_#]+}}, %{{[a-z0-9_#]+}} outs(%{{[a-z0-9_#]+}}, %{{[a-z0-9_#]+}}) : tensor<?x32x128xf16>, tensor<?x32xf32>, tensor<?x32x128xf16>, tensor<?x32xf32>, tensor<?x32x128xf16>, tensor<?x32xf32> -> tensor<?x32x128xf16>, tensor<?x32xf32>
  %out, %lse = attn.merge_states %oa, %la, %ob, %lb outs(%o, %l)
      : tensor<?x32x128xf16>, tensor<?x32xf32>, tensor<?x32x128xf16>,
        tensor<?x32xf32>, tensor<?x32x128xf16>, tensor<?x32xf32>
      -> tensor<?x32x128xf16>, tensor<?x32xf32>
  return %out, %lse : tensor<?x32x128xf16>, tensor<?x32xf32>
}

// fp8 caches carry their scales: per layer ([1]) or per kv head ([G]).
// CHECK-LABEL: func.func @fp8_caches
func.func @fp8_caches(%q: tensor<?x8x64xbf16>,
    %cache: tensor<?x2x16x2x64xf8E4M3FN>, %md: !attn.metadata,
    %o: tensor<?x8x64xbf16>, %l: tensor<?x8xf32>, %ks: tensor<1xf32>,
    %vs: tensor<2xf32>, %k: tensor<?x2x64xbf16>, %s: tensor<?xi64>,
    %mq: tensor<?x4x80xf16>, %latent: tensor<?x16x80xf8E5M2>,
    %bt: tensor<?x?xi32>, %lens: tensor<?xi32>, %mo: tensor<?x4x64xf16>,
    %ml: tensor<?x4xf32>, %c: tensor<?x64xf16>, %pe: tensor<?x16xf16>)
    -> (tensor<?x8x64xbf16>, tensor<?x2x16x2x64xf8E4M3FN>,
        tensor<?x4x64xf16>, tensor<?x16x80xf8E5M2>) {
  // CHECK: attn.paged_attention %{{.*}} k_scale(%{{.*}} : tensor<1xf32>) v_scale(%{{.*}} : tensor<2xf32>) outs(
  %out, %lse = attn.paged_attention %q, %cache, %md
      k_scale(%ks : tensor<1xf32>) v_scale(%vs : tensor<2xf32>)
      outs(%o, %l) layout(nhd) scale(0.125)
      : tensor<?x8x64xbf16>, tensor<?x2x16x2x64xf8E4M3FN>,
        tensor<?x8x64xbf16>, tensor<?x8xf32>
      -> tensor<?x8x64xbf16>, tensor<?x8xf32>
  // CHECK: attn.reshape_and_cache %{{.*}} k_scale(%{{.*}} : tensor<1xf32>) v_scale(%{{.*}} : tensor<2xf32>) outs(
  %new = attn.reshape_and_cache %k, %k, %s k_scale(%ks : tensor<1xf32>)
      v_scale(%vs : tensor<2xf32>) outs(%cache) layout(nhd)
      : tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?xi64>,
        tensor<?x2x16x2x64xf8E4M3FN> -> tensor<?x2x16x2x64xf8E4M3FN>
  // CHECK: attn.mla_decode %{{.*}} k_scale(%{{.*}} : tensor<1xf32>) outs(
  %mout, %mlse = attn.mla_decode %mq, %latent, %bt, %lens
      k_scale(%ks : tensor<1xf32>) outs(%mo, %ml) kv_lora_rank(64) scale(0.1)
      : tensor<?x4x80xf16>, tensor<?x16x80xf8E5M2>, tensor<?x?xi32>,
        tensor<?xi32>, tensor<?x4x64xf16>, tensor<?x4xf32>
      -> tensor<?x4x64xf16>, tensor<?x4xf32>
  // CHECK: attn.reshape_and_cache %{{.*}} k_scale(%{{.*}} : tensor<1xf32>) outs(
  %written = attn.reshape_and_cache %c, %pe, %s k_scale(%ks : tensor<1xf32>)
      outs(%latent)
      : tensor<?x64xf16>, tensor<?x16xf16>, tensor<?xi64>,
        tensor<?x16x80xf8E5M2> -> tensor<?x16x80xf8E5M2>
  return %out, %new, %mout, %written : tensor<?x8x64xbf16>,
      tensor<?x2x16x2x64xf8E4M3FN>, tensor<?x4x64xf16>,
      tensor<?x16x80xf8E5M2>
}
