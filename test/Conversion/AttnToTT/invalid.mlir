// RUN: attn-opt --convert-attn-to-ttkernel -split-input-file -verify-diagnostics %s

func.func @f16(%q: tensor<?x8x64xf16>, %c: tensor<?x2x16x2x64xf16>,
               %bt: tensor<?x?xi32>, %lens: tensor<?xi32>, %qsl: tensor<?xi32>,
               %o: tensor<?x8x64xf16>, %l: tensor<?x8xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      : tensor<?xi32>, tensor<?xi32>, tensor<?x?xi32>
  // expected-error @+1 {{tt lowering supports bf16 and f32, not 'f16'}}
  %out, %lse = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd)
      scale(0.125)
      : tensor<?x8x64xf16>, tensor<?x2x16x2x64xf16>, tensor<?x8x64xf16>,
        tensor<?x8xf32> -> tensor<?x8x64xf16>, tensor<?x8xf32>
  return
}

// -----

func.func @head_size(%q: tensor<?x8x48xbf16>, %c: tensor<?x2x16x2x48xbf16>,
                     %bt: tensor<?x?xi32>, %lens: tensor<?xi32>,
                     %qsl: tensor<?xi32>, %o: tensor<?x8x48xbf16>,
                     %l: tensor<?x8xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      : tensor<?xi32>, tensor<?xi32>, tensor<?x?xi32>
  // expected-error @+1 {{tt lowering needs head sizes that are multiples of 32, got 48}}
  %out, %lse = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd)
      scale(0.125)
      : tensor<?x8x48xbf16>, tensor<?x2x16x2x48xbf16>, tensor<?x8x48xbf16>,
        tensor<?x8xf32> -> tensor<?x8x48xbf16>, tensor<?x8xf32>
  return
}

// -----

func.func @alibi(%q: tensor<?x8x64xbf16>, %c: tensor<?x2x16x2x64xbf16>,
                 %bt: tensor<?x?xi32>, %lens: tensor<?xi32>,
                 %qsl: tensor<?xi32>, %o: tensor<?x8x64xbf16>,
                 %l: tensor<?x8xf32>, %a: tensor<8xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      : tensor<?xi32>, tensor<?xi32>, tensor<?x?xi32>
  // expected-error @+1 {{tt lowering does not support alibi}}
  %out, %lse = attn.paged_attention %q, %c, %md alibi(%a : tensor<8xf32>)
      outs(%o, %l) layout(nhd) scale(0.125)
      : tensor<?x8x64xbf16>, tensor<?x2x16x2x64xbf16>, tensor<?x8x64xbf16>,
        tensor<?x8xf32> -> tensor<?x8x64xbf16>, tensor<?x8xf32>
  return
}

// -----

func.func @latent_cache(%kv_c: tensor<?x512xbf16>, %k_pe: tensor<?x64xbf16>,
                        %slots: tensor<?xi64>, %c: tensor<?x64x576xbf16>) {
  // expected-error @+1 {{tt lowering does not support the MLA latent cache (rank-3 kv_cache); compile it for spirv, ptx or msl}}
  %0 = attn.reshape_and_cache %kv_c, %k_pe, %slots outs(%c)
      : tensor<?x512xbf16>, tensor<?x64xbf16>, tensor<?xi64>,
        tensor<?x64x576xbf16> -> tensor<?x64x576xbf16>
  return
}
