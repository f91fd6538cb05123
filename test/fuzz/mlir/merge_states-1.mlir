module {
  func.func @merge_states(%arg0: tensor<?x2x16xf32>, %arg1: tensor<?x2xf32>, %arg2: tensor<?x2x16xf32>, %arg3: tensor<?x2xf32>) -> (tensor<?x2x16xf32>, tensor<?x2xf32>) {
    %c0 = arith.constant 0 : index
    %dim = tensor.dim %arg0, %c0 : tensor<?x2x16xf32>
    %0 = tensor.empty(%dim) : tensor<?x2x16xf32>
    %1 = tensor.empty(%dim) : tensor<?x2xf32>
    %2:2 = attn.merge_states %arg0, %arg1, %arg2, %arg3 outs(%0, %1) : tensor<?x2x16xf32>, tensor<?x2xf32>, tensor<?x2x16xf32>, tensor<?x2xf32>, tensor<?x2x16xf32>, tensor<?x2xf32> -> tensor<?x2x16xf32>, tensor<?x2xf32>
    return %2#0, %2#1 : tensor<?x2x16xf32>, tensor<?x2xf32>
  }
}

