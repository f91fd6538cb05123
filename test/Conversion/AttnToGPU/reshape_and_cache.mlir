// RUN: attn-opt %s -split-input-file --convert-attn-to-gpu="subgroup-size=32 workgroup-size=64 bf16-as-i16=true" | FileCheck %s

// bf16 buffers travel as i16 words; the cache row is a bit copy, so no
// conversion is emitted. One workgroup per (token, kv head).
// CHECK-LABEL: func.func @cache
// CHECK-DAG: %[[KF:.*]] = memref.collapse_shape %arg0
// CHECK-DAG: %[[KI:.*]] = arith.bitcast %[[KF]] : memref<?xbf16> to memref<?xi16>
// CHECK-DAG: %[[T:.*]] = memref.dim %arg0, %c0
// CHECK: gpu.launch_func @cache_reshape_and_cache::@cache_reshape_and_cache blocks in (%[[T]], %c2{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c64{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}})
// CHECK-SAME: args(%[[KI]] : memref<?xi16>, %{{.*}} : memref<?xi16>, %arg2 : memref<?xi64>, %{{.*}} : memref<?xi16>, %{{.*}} : memref<?xi32>)

// CHECK: gpu.func @cache_reshape_and_cache(%[[K:.*]]: memref<?xi16>, %[[V:.*]]: memref<?xi16>, %[[S:.*]]: memref<?xi64>, %[[C:.*]]: memref<?xi16>, %[[P:.*]]: memref<?xi32>) kernel
// CHECK-SAME: attn.params = ["num_tokens", "num_blocks"]
// CHECK-SAME: known_block_size = array<i32: 64, 1, 1>
// CHECK: %[[SLOT64:.*]] = memref.load %[[S]][%block_id_x] : memref<?xi64>
// Padding (slot < 0) and slots past the cache fail one unsigned compare, on
// the i64 slot: where index is 32 bits (SPIR-V) a cast first would turn
// -2^32 + 5 into slot 5.
// CHECK: %[[SIZE:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: %[[OK:.*]] = arith.cmpi ult, %[[SLOT64]], %[[SIZE]] : i64
// CHECK: %[[SLOT:.*]] = arith.index_cast %[[SLOT64]] : i64 to index
// CHECK: scf.if %[[OK]]
// CHECK: arith.divui %[[SLOT]], %c16
// CHECK: arith.remui %[[SLOT]], %c16
// CHECK: scf.for %{{.*}} = %thread_id_x to %c128 step %c64
// CHECK: %[[KV:.*]] = memref.load %[[K]]
// CHECK: memref.store %[[KV]], %[[C]]
// CHECK: %[[VV:.*]] = memref.load %[[V]]
// CHECK: memref.store %[[VV]], %[[C]]
// CHECK-NOT: arith.shli
func.func @cache(%k: memref<?x2x128xbf16>, %v: memref<?x2x128xbf16>,
                 %slots: memref<?xi64>, %cache: memref<?x2x16x2x128xbf16>) {
  attn.reshape_and_cache %k, %v, %slots outs(%cache) layout(nhd)
      : memref<?x2x128xbf16>, memref<?x2x128xbf16>, memref<?xi64>,
        memref<?x2x16x2x128xbf16>
  return
}

// -----

// The MLA latent cache: one workgroup per token writes kv_c, then k_pe, into
// the slot's row [L + P] = [64 + 16] of the cache viewed as [NB * B, L + P].
// CHECK-LABEL: func.func @latent_cache
// CHECK-DAG: %[[T:.*]] = memref.dim %arg0, %c0
// CHECK: gpu.launch_func @latent_cache_reshape_and_cache::@latent_cache_reshape_and_cache blocks in (%[[T]], %c1{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c64{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}})
// CHECK-SAME: args(%{{.*}} : memref<?xi16>, %{{.*}} : memref<?xi16>, %arg2 : memref<?xi64>, %{{.*}} : memref<?xi16>, %{{.*}} : memref<?xi32>)

// CHECK: gpu.func @latent_cache_reshape_and_cache(%[[K:.*]]: memref<?xi16>, %[[V:.*]]: memref<?xi16>, %[[S:.*]]: memref<?xi64>, %[[C:.*]]: memref<?xi16>, %[[P:.*]]: memref<?xi32>) kernel
// CHECK-SAME: attn.params = ["num_tokens", "num_blocks"]
// CHECK-SAME: known_block_size = array<i32: 64, 1, 1>
// CHECK: %[[SLOT64:.*]] = memref.load %[[S]][%block_id_x] : memref<?xi64>
// CHECK: %[[SIZE:.*]] = arith.index_cast %{{.*}} : index to i64
// CHECK: %[[OK:.*]] = arith.cmpi ult, %[[SLOT64]], %[[SIZE]] : i64
// CHECK: %[[SLOT:.*]] = arith.index_cast %[[SLOT64]] : i64 to index
// CHECK: scf.if %[[OK]]
// CHECK: %[[ROW:.*]] = arith.muli %[[SLOT]], %c80
// CHECK: scf.for %[[E:.*]] = %thread_id_x to %c64{{[_0-9]*}} step %c64
// CHECK: %[[KV:.*]] = memref.load %[[K]]
// CHECK: %[[KDST:.*]] = arith.addi %[[ROW]], %[[E]]
// CHECK: memref.store %[[KV]], %[[C]][%[[KDST]]]
// CHECK: %[[ROPE:.*]] = arith.addi %[[ROW]], %c64
// CHECK: scf.for %[[F:.*]] = %thread_id_x to %c16 step %c64
// CHECK: %[[VV:.*]] = memref.load %[[V]]
// CHECK: %[[VDST:.*]] = arith.addi %[[ROPE]], %[[F]]
// CHECK: memref.store %[[VV]], %[[C]][%[[VDST]]]
func.func @latent_cache(%kv_c: memref<?x64xbf16>, %k_pe: memref<?x16xbf16>,
                        %slots: memref<?xi64>, %cache: memref<?x16x80xbf16>) {
  attn.reshape_and_cache %kv_c, %k_pe, %slots outs(%cache)
      : memref<?x64xbf16>, memref<?x16xbf16>, memref<?xi64>,
        memref<?x16x80xbf16>
  return
}
