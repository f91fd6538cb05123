// RUN: attn-opt --convert-attn-to-ttkernel -split-input-file -verify-diagnostics %s

func.func @head_size(%q: tensor<?x8x36xbf16>, %c: tensor<?x2x16x2x36xbf16>,
                     %bt: tensor<?x?xi32>, %lens: tensor<?xi32>,
                     %qsl: tensor<?xi32>, %o: tensor<?x8x36xbf16>,
                     %l: tensor<?x8xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      : tensor<?xi32>, tensor<?xi32>, tensor<?x?xi32>
  // expected-error @+1 {{tt lowering needs head sizes that are multiples of 8 (rows move in pieces of whole 16-byte words), got 36}}
  %out, %lse = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd)
      scale(0.125)
      : tensor<?x8x36xbf16>, tensor<?x2x16x2x36xbf16>, tensor<?x8x36xbf16>,
        tensor<?x8xf32> -> tensor<?x8x36xbf16>, tensor<?x8xf32>
  return
}

// -----

func.func @merge_head_size(%oa: tensor<?x8x20xf16>, %la: tensor<?x8xf32>,
                           %o: tensor<?x8x20xf16>) {
  // expected-error @+1 {{tt lowering needs head sizes that are multiples of 8 (rows move in pieces of whole 16-byte words), got 20}}
  %0:2 = attn.merge_states %oa, %la, %oa, %la outs(%o, %la)
      : tensor<?x8x20xf16>, tensor<?x8xf32>, tensor<?x8x20xf16>,
        tensor<?x8xf32>, tensor<?x8x20xf16>, tensor<?x8xf32>
      -> tensor<?x8x20xf16>, tensor<?x8xf32>
  return
}

// -----

func.func @block_size(%q: tensor<?x8x64xbf16>, %c: tensor<?x2x24x2x64xbf16>,
                      %bt: tensor<?x?xi32>, %lens: tensor<?xi32>,
                      %qsl: tensor<?xi32>, %o: tensor<?x8x64xbf16>,
                      %l: tensor<?x8xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      : tensor<?xi32>, tensor<?xi32>, tensor<?x?xi32>
  // expected-error @+1 {{tt lowering needs a block size that divides 32 or is a multiple of 32, got 24}}
  %out, %lse = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd)
      scale(0.125)
      : tensor<?x8x64xbf16>, tensor<?x2x24x2x64xbf16>, tensor<?x8x64xbf16>,
        tensor<?x8xf32> -> tensor<?x8x64xbf16>, tensor<?x8xf32>
  return
}

// -----

func.func @latent_widths(%kv_c: tensor<?x504xbf16>, %k_pe: tensor<?x72xbf16>,
                         %slots: tensor<?xi64>, %c: tensor<?x64x576xbf16>) {
  // expected-error @+1 {{tt lowering needs the latent and rope widths to be multiples of 16 (half a tile row), got 504 and 72}}
  %0 = attn.reshape_and_cache %kv_c, %k_pe, %slots outs(%c)
      : tensor<?x504xbf16>, tensor<?x72xbf16>, tensor<?xi64>,
        tensor<?x64x576xbf16> -> tensor<?x64x576xbf16>
  return
}
