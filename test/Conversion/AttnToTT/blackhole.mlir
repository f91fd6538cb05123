// RUN: attn-opt --convert-attn-to-ttkernel=arch=blackhole -split-input-file -verify-diagnostics %s
// RUN: not attn-opt --convert-attn-to-ttkernel=arch=grayskull %s 2>&1 | FileCheck %s --check-prefix=ARCH

// ARCH: unknown TT architecture 'grayskull' (wormhole_b0 or blackhole)

// Blocks below a face are read a face row group at a time: one row of a
// bf16 block is 32 bytes, half of Blackhole's 64-byte DRAM read alignment.
func.func @block_size_1(%q: tensor<?x8x64xbf16>, %c: tensor<?x2x1x2x64xbf16>,
                        %bt: tensor<?x?xi32>, %lens: tensor<?xi32>,
                        %qsl: tensor<?xi32>, %o: tensor<?x8x64xbf16>,
                        %l: tensor<?x8xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      : tensor<?xi32>, tensor<?xi32>, tensor<?x?xi32>
  // expected-error @+1 {{tt lowering needs blocks below 16 rows to span a multiple of the 64-byte DRAM read alignment of blackhole per face row group, got 1 rows of 32 bytes}}
  %out, %lse = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd)
      scale(0.125)
      : tensor<?x8x64xbf16>, tensor<?x2x1x2x64xbf16>, tensor<?x8x64xbf16>,
        tensor<?x8xf32> -> tensor<?x8x64xbf16>, tensor<?x8xf32>
  return
}
