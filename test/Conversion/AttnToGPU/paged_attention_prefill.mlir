// RUN: attn-opt %s -split-input-file --convert-attn-to-gpu="vector-load-bytes=16" | FileCheck %s
// RUN: attn-opt %s -split-input-file --convert-attn-to-gpu="vector-load-bytes=16 decode-threshold=4" | FileCheck %s --check-prefix=THRESHOLD
// RUN: attn-opt %s -split-input-file --convert-attn-to-gpu="vector-load-bytes=16 tiled-prefill=false" | FileCheck %s --check-prefix=OFF

// The tiled prefill kernel of paged_attention (lowering/AttnToGPU/
// PagedPrefill.cpp) on a target with 32-lane subgroups, 128-bit loads and
// 128 lane registers. Llama-3-8B: bf16, head size 128, 4 query heads per kv
// head. A row spreads over 16 lanes (chunks of 16 bytes, one each), so a
// subgroup holds 2 row groups of R = 4 rows and the workgroup of 4
// subgroups 32 rows: 8 query tokens x 4 heads (attn.tile = [Bq, Hq, Bc, L,
// R, U]). Keys come in tiles of 32 staged in workgroup memory (2 x 32 rows x
// 16 chunks of vector<4xi32>, 16 KiB) and are read 2 per step.
// CHECK-LABEL: func.func @llama
// CHECK: gpu.launch_func @llama_paged_attention::@llama_paged_attention
// CHECK: %[[CHUNKS:.*]] = arith.ceildivui %{{.*}}, %c8{{[_0-9]*}} : index
// CHECK: %[[TILES:.*]] = arith.addi %[[CHUNKS]], %{{.*}} : index
// CHECK: gpu.launch_func @llama_paged_attention_prefill::@llama_paged_attention_prefill blocks in (%[[TILES]], %c8{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c128{{[_0-9]*}},
//
// CHECK-LABEL: gpu.func @llama_paged_attention_prefill
// CHECK-SAME: (%[[Q:.*]]: memref<?xbf16>, %[[C:.*]]: memref<?xbf16>, %[[QSL:.*]]: memref<?xi32>, %[[LENS:.*]]: memref<?xi32>, %[[BT:.*]]: memref<?xi32>, %[[O:.*]]: memref<?xbf16>, %[[L:.*]]: memref<?xf32>, %[[P:.*]]: memref<?xi32>)
// CHECK-SAME: workgroup(%[[WG:.*]] : memref<1024xvector<4xi32>, #gpu.address_space<workgroup>>)
// CHECK-SAME: attn.op = "paged_attention"
// CHECK-SAME: attn.tile = array<i64: 8, 4, 32, 16, 4, 2>
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// Workgroup x below ceil(T / 8) takes the tokens from 8x of the request of
// token 8x (found by binary search); the others take a request's head.
// CHECK: %[[X:.*]] = gpu.block_id x
// CHECK: %[[IS_CHUNK:.*]] = arith.cmpi ult, %[[X]], %{{.*}} : index
// CHECK: scf.if %[[IS_CHUNK]] -> (index) {
// CHECK: scf.while
// CHECK: } else {
// CHECK: arith.subi %[[X]]
// Only requests longer than the decode threshold (1), with tokens here.
// CHECK: %[[LONG:.*]] = arith.cmpi sgt, %{{.*}}, %c1 : index
// CHECK: %[[MINE:.*]] = arith.andi %{{.*}}, %[[LONG]] : i1
// CHECK: scf.if %[[MINE]] {
// The lane's 4 query rows, one 16-byte load each.
// CHECK-COUNT-4: vector.load %[[Q]][%{{.*}}] {alignment = 16 : i64} : memref<?xbf16>, vector<8xbf16>
// Tiles of 32 keys from the first visible key (0, causal) on; each copied
// through the block table between two barriers.
// CHECK: scf.for %[[KT:.*]] = %c0 to %{{.*}} step %c32 iter_args
// CHECK-NEXT: gpu.barrier
// CHECK-NEXT: scf.for %[[I:.*]] = %{{.*}} to %c1024 step %c128 {
// CHECK: memref.load %[[BT]]
// CHECK: %[[CHUNK:.*]] = vector.load %[[C]][%{{.*}}] {alignment = 16 : i64} : memref<?xbf16>, vector<8xbf16>
// CHECK: %[[WORDS:.*]] = vector.bitcast %[[CHUNK]] : vector<8xbf16> to vector<4xi32>
// CHECK: memref.store %[[WORDS]], %[[WG]][%[[I]]]
// CHECK: gpu.barrier
// The subgroup's keys of the tile, 2 a step: its rows' scores, masked per
// element past each row's last visible key, then one online-softmax update.
// CHECK: scf.for %[[J:.*]] = %{{.*}} to %{{.*}} step %c2 iter_args
// CHECK: memref.load %[[WG]]
// CHECK: math.fma
// CHECK: gpu.shuffle  xor %{{.*}}, %c8_i32, %c32_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32
// CHECK: arith.cmpi slt, %[[J]], %{{.*}} : index
// CHECK-NOT: arith.cmpi sge, %[[J]]
// CHECK: arith.select
// CHECK: math.exp2
// CHECK: scf.yield
// Rows of tokens past the tile's are not written.
// CHECK: math.log
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %[[O]]
// CHECK: memref.store %{{.*}}, %[[L]]
//
// THRESHOLD-LABEL: gpu.func @llama_paged_attention(
// THRESHOLD: arith.cmpi sle, %{{.*}}, %c4 : index
// THRESHOLD-LABEL: gpu.func @llama_paged_attention_prefill(
// THRESHOLD: arith.cmpi sgt, %{{.*}}, %c4 : index
//
// Without the tiled kernel the per-token kernel takes every request, with
// no test of the query length.
// OFF-NOT: _prefill
// OFF-LABEL: gpu.func @llama_paged_attention(
// OFF: scf.while
// OFF-NOT: scf.if
// OFF: arith.minsi
func.func @llama(%q: memref<?x32x128xbf16>, %c: memref<?x2x16x8x128xbf16>,
                 %qsl: memref<?xi32>, %lens: memref<?xi32>,
                 %bt: memref<?x?xi32>, %o: memref<?x32x128xbf16>,
                 %l: memref<?x32xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      : memref<?xi32>, memref<?xi32>, memref<?x?xi32>
  attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.125)
      : memref<?x32x128xbf16>, memref<?x2x16x8x128xbf16>,
        memref<?x32x128xbf16>, memref<?x32xf32>
  return
}

// -----

// The backend's reorder_batch_threshold decides which requests are decodes.
// A window that starts at p - 100 makes the tiles start at the first row's
// window and the rows compare each key with both ends; the HND cache reads
// kv head g's rows of a block at (block * 2 + part) * G + g.
// CHECK-LABEL: gpu.func @window_paged_attention(
// CHECK: arith.cmpi sle, %{{.*}}, %c8 : index
// CHECK-LABEL: gpu.func @window_paged_attention_prefill(
// CHECK: arith.cmpi sgt, %{{.*}}, %c8 : index
// CHECK: scf.for
// CHECK: arith.cmpi sge
// CHECK: arith.cmpi slt
func.func @window(%q: memref<?x8x64xf16>, %c: memref<?x2x2x32x64xf16>,
                  %qsl: memref<?xi32>, %lens: memref<?xi32>,
                  %bt: memref<?x?xi32>, %o: memref<?x8x64xf16>,
                  %l: memref<?x8xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      : memref<?xi32>, memref<?xi32>, memref<?x?xi32>
  attn.paged_attention %q, %c, %md outs(%o, %l) layout(hnd) scale(0.125)
      window_left(100)
      backend(#attn.backend<name = "FLASH_ATTN", cudagraph = always,
                            reorder_batch_threshold = 8, layout = hnd,
                            block_size_multiple = 16>)
      : memref<?x8x64xf16>, memref<?x2x2x32x64xf16>, memref<?x8x64xf16>,
        memref<?x8xf32>
  return
}

// -----

// 512 query heads on one kv head (MQA): a tile takes the 64 heads its 64
// rows hold (a divisor of 512; one token), so its grid has 8 head slices,
// and the per-token kernel takes the 8 heads whose state fits the lane
// registers per workgroup, so its grid has 64: both kernels stay the size
// of the register budget, whatever the group.
// CHECK-LABEL: func.func @mqa
// CHECK: gpu.launch_func @mqa_paged_attention::@mqa_paged_attention blocks in (%{{.*}}, %c64{{[_0-9]*}}, %c1{{[_0-9]*}})
// CHECK: gpu.launch_func @mqa_paged_attention_prefill::@mqa_paged_attention_prefill blocks in (%{{.*}}, %c8{{[_0-9]*}}, %c1{{[_0-9]*}})
// CHECK-LABEL: gpu.func @mqa_paged_attention_prefill
// CHECK-SAME: attn.tile = array<i64: 1, 64,
func.func @mqa(%q: memref<?x512x64xbf16>, %c: memref<?x2x16x1x64xbf16>,
               %qsl: memref<?xi32>, %lens: memref<?xi32>,
               %bt: memref<?x?xi32>, %o: memref<?x512x64xbf16>,
               %l: memref<?x512xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      : memref<?xi32>, memref<?xi32>, memref<?x?xi32>
  attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.125)
      : memref<?x512x64xbf16>, memref<?x2x16x1x64xbf16>,
        memref<?x512x64xbf16>, memref<?x512xf32>
  return
}

// -----

// A cache row of 3 f16 (6 bytes) is no whole number of 32-bit words, which
// the tiled kernel stages: the per-token kernel takes every request.
// CHECK-LABEL: func.func @odd
// CHECK: gpu.launch_func @odd_paged_attention::@odd_paged_attention
// CHECK-NOT: _prefill
func.func @odd(%q: memref<?x2x3xf16>, %c: memref<?x2x16x2x3xf16>,
               %qsl: memref<?xi32>, %lens: memref<?xi32>,
               %bt: memref<?x?xi32>, %o: memref<?x2x3xf16>,
               %l: memref<?x2xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      : memref<?xi32>, memref<?xi32>, memref<?x?xi32>
  attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.5)
      : memref<?x2x3xf16>, memref<?x2x16x2x3xf16>, memref<?x2x3xf16>,
        memref<?x2xf32>
  return
}
