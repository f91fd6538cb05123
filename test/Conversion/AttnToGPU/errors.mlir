// RUN: attn-opt %s -split-input-file -verify-diagnostics --convert-attn-to-gpu

func.func @tensors(%oa: tensor<?x4x32xf32>, %la: tensor<?x4xf32>,
                   %ob: tensor<?x4x32xf32>, %lb: tensor<?x4xf32>,
                   %o: tensor<?x4x32xf32>, %l: tensor<?x4xf32>)
    -> (tensor<?x4x32xf32>, tensor<?x4xf32>) {
  // expected-error @below {{expects memref operands; bufferize before convert-attn-to-gpu}}
  %r:2 = attn.merge_states %oa, %la, %ob, %lb outs(%o, %l)
      : tensor<?x4x32xf32>, tensor<?x4xf32>, tensor<?x4x32xf32>,
        tensor<?x4xf32>, tensor<?x4x32xf32>, tensor<?x4xf32>
      -> tensor<?x4x32xf32>, tensor<?x4xf32>
  return %r#0, %r#1 : tensor<?x4x32xf32>, tensor<?x4xf32>
}

// -----

func.func @strided(%oa: memref<?x4x32xf32, strided<[?, ?, ?], offset: ?>>,
                   %la: memref<?x4xf32>, %ob: memref<?x4x32xf32>,
                   %lb: memref<?x4xf32>, %o: memref<?x4x32xf32>,
                   %l: memref<?x4xf32>) {
  // expected-error @below {{expects operands with an identity layout}}
  attn.merge_states %oa, %la, %ob, %lb outs(%o, %l)
      : memref<?x4x32xf32, strided<[?, ?, ?], offset: ?>>, memref<?x4xf32>,
        memref<?x4x32xf32>, memref<?x4xf32>, memref<?x4x32xf32>,
        memref<?x4xf32>
  return
}

// -----

func.func @dynamic_head_size(%oa: memref<?x4x?xf32>, %la: memref<?x4xf32>,
                             %ob: memref<?x4x?xf32>, %lb: memref<?x4xf32>,
                             %o: memref<?x4x?xf32>, %l: memref<?x4xf32>) {
  // expected-error @below {{expects the head size to be static to lower to a GPU kernel}}
  attn.merge_states %oa, %la, %ob, %lb outs(%o, %l)
      : memref<?x4x?xf32>, memref<?x4xf32>, memref<?x4x?xf32>,
        memref<?x4xf32>, memref<?x4x?xf32>, memref<?x4xf32>
  return
}

// -----

func.func @metadata_argument(%q: memref<?x4x32xf32>,
                             %c: memref<?x2x16x4x32xf32>,
                             %md: !attn.metadata, %o: memref<?x4x32xf32>,
                             %l: memref<?x4xf32>) {
  // expected-error @below {{expects its metadata to come from an attn.metadata op}}
  attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.5)
      : memref<?x4x32xf32>, memref<?x2x16x4x32xf32>, memref<?x4x32xf32>,
        memref<?x4xf32>
  return
}
