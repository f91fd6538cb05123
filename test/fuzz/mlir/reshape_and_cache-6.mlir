module {
  func.func @reshape_and_cache(%arg0: tensor<?x2x16xbf16>, %arg1: tensor<?x2x16xbf16>, %arg2: tensor<?x2x16x2x16xbf16>, %arg3: tensor<?xi64>) -> tensor<?x2x16x2x16xbf16> {
    %0 = attn.reshape_and_cache %arg0, %arg1, %arg3 outs(%arg2) layout(nhd) : tensor<?x2x16xbf16>, tensor<?x2x16xbf16>, tensor<?xi64>, tensor<?x2x16x2x16xbf16> -> tensor<?x2x16x2x16xbf16>
    return %0 : tensor<?x2x16x2x16xbf16>
  }
}

