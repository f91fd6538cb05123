// RUN: attn-opt %s -split-input-file \
// RUN:   --one-shot-bufferize="bufferize-function-boundaries function-boundary-type-conversion=identity-layout-map" \
// RUN:   | FileCheck %s

// The metadata op reads its tensors and keeps its !attn.metadata result;
// paged_attention writes into the caller's out and lse buffers, no copies.

// CHECK-LABEL: func.func @paged
// CHECK-SAME: (%[[Q:.*]]: memref<?x8x64xf16>, %[[C:.*]]: memref<?x2x16x2x64xf16>, %[[QSL:.*]]: memref<?xi32>, %[[LENS:.*]]: memref<?xi32>, %[[BT:.*]]: memref<?x?xi32>, %[[O:.*]]: memref<?x8x64xf16>, %[[L:.*]]: memref<?x8xf32>)
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: %[[MD:.*]] = attn.metadata query_start_loc(%[[QSL]]) seq_lens(%[[LENS]]) block_table(%[[BT]]) : memref<?xi32>, memref<?xi32>, memref<?x?xi32>
// CHECK: attn.paged_attention %[[Q]], %[[C]], %[[MD]] outs(%[[O]], %[[L]]) layout(nhd)
// CHECK-SAME: : memref<?x8x64xf16>, memref<?x2x16x2x64xf16>, memref<?x8x64xf16>, memref<?x8xf32>{{$}}
// CHECK: return %[[O]], %[[L]]
func.func @paged(%q: tensor<?x8x64xf16>, %cache: tensor<?x2x16x2x64xf16>,
                 %qsl: tensor<?xi32>, %lens: tensor<?xi32>,
                 %bt: tensor<?x?xi32>, %o: tensor<?x8x64xf16>,
                 %l: tensor<?x8xf32>)
    -> (tensor<?x8x64xf16>, tensor<?x8xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      : tensor<?xi32>, tensor<?xi32>, tensor<?x?xi32>
  %out, %lse = attn.paged_attention %q, %cache, %md outs(%o, %l) layout(nhd)
      scale(0.125)
      : tensor<?x8x64xf16>, tensor<?x2x16x2x64xf16>, tensor<?x8x64xf16>,
        tensor<?x8xf32> -> tensor<?x8x64xf16>, tensor<?x8xf32>
  return %out, %lse : tensor<?x8x64xf16>, tensor<?x8xf32>
}

// -----

// reshape_and_cache updates the cache in place.

// CHECK-LABEL: func.func @cache
// CHECK-SAME: (%[[K:.*]]: memref<?x2x64xbf16>, %[[V:.*]]: memref<?x2x64xbf16>, %[[S:.*]]: memref<?xi64>, %[[C:.*]]: memref<?x2x16x2x64xbf16>)
// CHECK-NOT: memref.alloc
// CHECK-NOT: memref.copy
// CHECK: attn.reshape_and_cache %[[K]], %[[V]], %[[S]] outs(%[[C]]) layout(nhd)
// CHECK: return %[[C]]
func.func @cache(%k: tensor<?x2x64xbf16>, %v: tensor<?x2x64xbf16>,
                 %slots: tensor<?xi64>, %cache: tensor<?x2x16x2x64xbf16>)
    -> tensor<?x2x16x2x64xbf16> {
  %new = attn.reshape_and_cache %k, %v, %slots outs(%cache) layout(nhd)
      : tensor<?x2x64xbf16>, tensor<?x2x64xbf16>, tensor<?xi64>,
        tensor<?x2x16x2x64xbf16> -> tensor<?x2x16x2x64xbf16>
  return %new : tensor<?x2x16x2x64xbf16>
}

// -----

// A cache read after the update is the updated buffer: both ops use the
// same memref and nothing is copied.

// CHECK-LABEL: func.func @cache_then_attend
// CHECK-SAME: %[[C:[^:]*]]: memref<?x2x16x1x32xf32>
// CHECK-NOT: memref.copy
// CHECK: attn.reshape_and_cache {{.*}} outs(%[[C]])
// CHECK: attn.paged_attention %{{.*}}, %[[C]],
func.func @cache_then_attend(%k: tensor<?x1x32xf32>, %v: tensor<?x1x32xf32>,
                             %slots: tensor<?xi64>,
                             %cache: tensor<?x2x16x1x32xf32>,
                             %q: tensor<?x4x32xf32>, %qsl: tensor<?xi32>,
                             %lens: tensor<?xi32>, %bt: tensor<?x?xi32>,
                             %o: tensor<?x4x32xf32>, %l: tensor<?x4xf32>)
    -> (tensor<?x4x32xf32>, tensor<?x4xf32>) {
  %new = attn.reshape_and_cache %k, %v, %slots outs(%cache) layout(nhd)
      : tensor<?x1x32xf32>, tensor<?x1x32xf32>, tensor<?xi64>,
        tensor<?x2x16x1x32xf32> -> tensor<?x2x16x1x32xf32>
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      : tensor<?xi32>, tensor<?xi32>, tensor<?x?xi32>
  %out, %lse = attn.paged_attention %q, %new, %md outs(%o, %l) layout(nhd)
      scale(0.17677669)
      : tensor<?x4x32xf32>, tensor<?x2x16x1x32xf32>, tensor<?x4x32xf32>,
        tensor<?x4xf32> -> tensor<?x4x32xf32>, tensor<?x4xf32>
  return %out, %lse : tensor<?x4x32xf32>, tensor<?x4xf32>
}

// -----

// Destinations made inside the function become allocations.

// CHECK-LABEL: func.func @merge
// CHECK-DAG: %[[O:.*]] = memref.alloc(%{{.*}}) {{.*}}: memref<?x4x32xf32>
// CHECK-DAG: %[[L:.*]] = memref.alloc(%{{.*}}) {{.*}}: memref<?x4xf32>
// CHECK: attn.merge_states %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} outs(%[[O]], %[[L]])
// CHECK: return %[[O]], %[[L]]
func.func @merge(%oa: tensor<?x4x32xf32>, %la: tensor<?x4xf32>,
                 %ob: tensor<?x4x32xf32>, %lb: tensor<?x4xf32>)
    -> (tensor<?x4x32xf32>, tensor<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %n = tensor.dim %oa, %c0 : tensor<?x4x32xf32>
  %o0 = tensor.empty(%n) : tensor<?x4x32xf32>
  %l0 = tensor.empty(%n) : tensor<?x4xf32>
  %o, %l = attn.merge_states %oa, %la, %ob, %lb outs(%o0, %l0)
      : tensor<?x4x32xf32>, tensor<?x4xf32>, tensor<?x4x32xf32>,
        tensor<?x4xf32>, tensor<?x4x32xf32>, tensor<?x4xf32>
      -> tensor<?x4x32xf32>, tensor<?x4xf32>
  return %o, %l : tensor<?x4x32xf32>, tensor<?x4xf32>
}

// -----

// CHECK-LABEL: func.func @mla
// CHECK-SAME: %[[O:[^:]*]]: memref<?x16x512xf16>, %[[L:[^:]*]]: memref<?x16xf32>)
// CHECK: attn.mla_decode {{.*}} outs(%[[O]], %[[L]]) kv_lora_rank(512)
// CHECK: return %[[O]], %[[L]]
func.func @mla(%q: tensor<?x16x576xf16>, %cache: tensor<?x16x576xf16>,
               %bt: tensor<?x?xi32>, %lens: tensor<?xi32>,
               %o: tensor<?x16x512xf16>, %l: tensor<?x16xf32>)
    -> (tensor<?x16x512xf16>, tensor<?x16xf32>) {
  %out, %lse = attn.mla_decode %q, %cache, %bt, %lens outs(%o, %l)
      kv_lora_rank(512) scale(0.1352337) num_kv_splits(2)
      : tensor<?x16x576xf16>, tensor<?x16x576xf16>, tensor<?x?xi32>,
        tensor<?xi32>, tensor<?x16x512xf16>, tensor<?x16xf32>
      -> tensor<?x16x512xf16>, tensor<?x16xf32>
  return %out, %lse : tensor<?x16x512xf16>, tensor<?x16xf32>
}
