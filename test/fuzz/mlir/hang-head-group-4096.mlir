module {
  func.func @paged_attention(%arg0: tensor<?x4096x128xbf16>, %arg1: tensor<?x2x16x1x128xbf16>, %arg2: tensor<?x?xi32>, %arg3: tensor<?xi32>, %arg4: tensor<?xi32>) -> (tensor<?x4096x128xbf16>, tensor<?x4096xf32>) {
    %0 = attn.metadata query_start_loc(%arg4) seq_lens(%arg3) block_table(%arg2) : tensor<?xi32>, tensor<?xi32>, tensor<?x?xi32>
    %c0 = arith.constant 0 : index
    %dim = tensor.dim %arg0, %c0 : tensor<?x4096x128xbf16>
    %1 = tensor.empty(%dim) : tensor<?x4096x128xbf16>
    %2 = tensor.empty(%dim) : tensor<?x4096xf32>
    %3:2 = attn.paged_attention %arg0, %arg1, %0 outs(%1, %2) layout(nhd) scale(0.0883883461) : tensor<?x4096x128xbf16>, tensor<?x2x16x1x128xbf16>, tensor<?x4096x128xbf16>, tensor<?x4096xf32> -> tensor<?x4096x128xbf16>, tensor<?x4096xf32>
    return %3#0, %3#1 : tensor<?x4096x128xbf16>, tensor<?x4096xf32>
  }
}

