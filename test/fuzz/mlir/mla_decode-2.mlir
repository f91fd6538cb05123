module {
  func.func @mla_decode(%arg0: tensor<?x4x48xbf16>, %arg1: tensor<?x16x48xbf16>, %arg2: tensor<?x?xi32>, %arg3: tensor<?xi32>) -> (tensor<?x4x32xbf16>, tensor<?x4xf32>) {
    %c0 = arith.constant 0 : index
    %dim = tensor.dim %arg0, %c0 : tensor<?x4x48xbf16>
    %0 = tensor.empty(%dim) : tensor<?x4x32xbf16>
    %1 = tensor.empty(%dim) : tensor<?x4xf32>
    %2:2 = attn.mla_decode %arg0, %arg1, %arg2, %arg3 outs(%0, %1) kv_lora_rank(32) scale(0.144337565) num_kv_splits(2) : tensor<?x4x48xbf16>, tensor<?x16x48xbf16>, tensor<?x?xi32>, tensor<?xi32>, tensor<?x4x32xbf16>, tensor<?x4xf32> -> tensor<?x4x32xbf16>, tensor<?x4xf32>
    return %2#0, %2#1 : tensor<?x4x32xbf16>, tensor<?x4xf32>
  }
}

