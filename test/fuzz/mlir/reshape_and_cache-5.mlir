module {
  func.func @reshape_and_cache(%arg0: tensor<?x32xf16>, %arg1: tensor<?x16xf16>, %arg2: tensor<?x16x48xf16>, %arg3: tensor<?xi64>) -> tensor<?x16x48xf16> {
    %0 = attn.reshape_and_cache %arg0, %arg1, %arg3 outs(%arg2) : tensor<?x32xf16>, tensor<?x16xf16>, tensor<?xi64>, tensor<?x16x48xf16> -> tensor<?x16x48xf16>
    return %0 : tensor<?x16x48xf16>
  }
}

