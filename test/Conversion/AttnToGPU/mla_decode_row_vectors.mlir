// RUN: attn-opt %s -split-input-file --convert-attn-to-gpu="row-vectors subgroup-size=1 attention-subgroups=1 lane-registers=512 vector-load-bytes=32" \
// RUN:   | FileCheck %s

// mla_decode for one invocation per workgroup (the cpu target): a work item
// takes a tile of up to 8 query heads (a quarter of the 512-float budget in
// 16-column chunks): 16 heads are two tiles. Its scaled query rows, a block's scores and the
// accumulators live on the stack. Per cache block it scores each visible
// row a 16-column chunk at a time, one FMA per head into the head's vector
// accumulator, the key chunk loaded once for the tile, while prefetching
// the same row of the next block (18 lines of 576 f16); one online-softmax
// update per head; then the latent values a chunk of columns at a time.

// CHECK-LABEL: func.func @mla
// CHECK: gpu.launch_func @mla_mla_decode_partial::@mla_mla_decode_partial blocks in (%{{.*}}, %c2{{[_0-9]*}}, %c4{{[_0-9]*}})
// CHECK: gpu.launch_func @mla_mla_decode_reduce::@mla_mla_decode_reduce
// CHECK: gpu.func @mla_mla_decode_partial
// CHECK-SAME: attn.heads_per_workgroup = 8 : i64
// CHECK: %[[Q:.*]] = memref.alloca() : memref<8x576xf32>
// CHECK: %[[PROBS:.*]] = memref.alloca() : memref<8x16xf32>
// CHECK: %[[ACC:.*]] = memref.alloca() : memref<8x512xf32>
// A tile that divides H clamps no head.
// CHECK-NOT: arith.minsi %{{.*}}, %c15
// CHECK-NOT: scf.if
// CHECK: vector.store %{{.*}}, %[[Q]][%c0, %{{.*}}] : memref<8x576xf32>, vector<16xf32>
// m and l of the 8 heads are carried over the blocks.
// CHECK: scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK: scf.for %[[U:.*]] = %[[LO:.*]] to %[[HI:.*]] step %c1 {
// CHECK-COUNT-18: memref.prefetch %arg1[%{{.*}}], read, locality<3>, data : memref<?xf16>
// CHECK-NOT: memref.prefetch
// CHECK: scf.for %[[C:.*]] = %c0 to %c576 step %c16 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK: %[[KEY:.*]] = vector.load %arg1[%{{.*}}] : memref<?xf16>, vector<16xf16>
// CHECK: %[[KEYF:.*]] = arith.extf %[[KEY]] : vector<16xf16> to vector<16xf32>
// CHECK: %[[Q0:.*]] = vector.load %[[Q]][%c0, %[[C]]] : memref<8x576xf32>, vector<16xf32>
// CHECK: math.fma %[[Q0]], %[[KEYF]], %{{.*}} : vector<16xf32>
// CHECK-NOT: vector.load %arg1
// CHECK: %[[Q7:.*]] = vector.load %[[Q]][%c7, %[[C]]] : memref<8x576xf32>, vector<16xf32>
// CHECK: math.fma %[[Q7]], %[[KEYF]], %{{.*}} : vector<16xf32>
// CHECK: vector.reduction <add>, %{{.*}} fastmath<reassoc,contract> : vector<16xf32> into f32
// CHECK: memref.store %{{.*}}, %[[PROBS]][%c0, %[[U]]] : memref<8x16xf32>
// One update per head and block, the block's max by halves.
// CHECK-NOT: vector.reduction <maxnumf>
// CHECK: vector.load %[[PROBS]][%c0, %c0] : memref<8x16xf32>, vector<16xf32>
// CHECK: arith.maxnumf %{{.*}}, %{{.*}} : vector<8xf32>
// CHECK: math.exp2 %{{.*}} : vector<16xf32>
// The values: the 512 latent columns, 16 at a time, for the 8 heads.
// CHECK: scf.for %[[V:.*]] = %c0 to %c512 step %c16 {
// CHECK: vector.load %[[ACC]][%c0, %[[V]]] : memref<8x512xf32>, vector<16xf32>
// CHECK: scf.for %[[K:.*]] = %[[LO]] to %[[HI]] step %c1 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>) {
// CHECK: %[[VAL:.*]] = vector.load %arg1[%{{.*}}] : memref<?xf16>, vector<16xf16>
// CHECK: %[[PU:.*]] = memref.load %[[PROBS]][%c0, %[[K]]] : memref<8x16xf32>
// CHECK: %[[W:.*]] = vector.broadcast %[[PU]] : f32 to vector<16xf32>
// CHECK: math.fma %[[W]], %{{.*}}, %{{.*}} : vector<16xf32>
// CHECK: vector.store %{{.*}}, %[[ACC]][%c0, %[[V]]] : memref<8x512xf32>, vector<16xf32>
// Partial rows in f32 scratch, a chunk at a time.
// CHECK: vector.store %{{.*}}, %arg4[%{{.*}}] : memref<?xf32>, vector<16xf32>
// CHECK: gpu.func @mla_mla_decode_reduce
func.func @mla(%q: memref<?x16x576xf16>, %cache: memref<?x16x576xf16>,
               %bt: memref<?x?xi32>, %lens: memref<?xi32>,
               %o: memref<?x16x512xf16>, %l: memref<?x16xf32>) {
  attn.mla_decode %q, %cache, %bt, %lens outs(%o, %l)
      kv_lora_rank(512) scale(0.1352337) num_kv_splits(4)
      : memref<?x16x576xf16>, memref<?x16x576xf16>, memref<?x?xi32>,
        memref<?xi32>, memref<?x16x512xf16>, memref<?x16xf32>
  return
}

// -----

// 17 heads: three tiles of 6 (the grid's y is ceil(17 / 6)). The last
// tile's sixth head, 17, reads head 16's query row and writes nothing: each
// head's rows are written under `h < 17`. Rows of 64 with a latent part of 40 take
// chunks of 8 columns.
// CHECK-LABEL: func.func @odd
// CHECK: gpu.launch_func @odd_mla_decode::@odd_mla_decode blocks in (%{{.*}}, %c3{{[_0-9]*}}, %c1{{[_0-9]*}})
// CHECK: gpu.func @odd_mla_decode
// CHECK-SAME: attn.heads_per_workgroup = 6 : i64
// CHECK: memref.alloca() : memref<6x64xf32>
// CHECK: memref.alloca() : memref<6x16xf32>
// CHECK: memref.alloca() : memref<6x40xf32>
// CHECK: %[[H0:.*]] = arith.minsi %{{.*}}, %c16 : index
// CHECK: vector.load %arg0[%{{.*}}] : memref<?xbf16>, vector<8xbf16>
// CHECK: %[[IN:.*]] = arith.cmpi slt, %{{.*}}, %c17 : index
// CHECK: scf.if %[[IN]] {
// CHECK: vector.store %{{.*}}, %arg4[%{{.*}}] : memref<?xbf16>, vector<8xbf16>
// CHECK: memref.store %{{.*}}, %arg5[%{{.*}}] : memref<?xf32>
func.func @odd(%q: memref<?x17x64xbf16>, %cache: memref<?x16x64xbf16>,
               %bt: memref<?x?xi32>, %lens: memref<?xi32>,
               %o: memref<?x17x40xbf16>, %l: memref<?x17xf32>) {
  attn.mla_decode %q, %cache, %bt, %lens outs(%o, %l)
      kv_lora_rank(40) scale(0.125) num_kv_splits(1)
      : memref<?x17x64xbf16>, memref<?x16x64xbf16>, memref<?x?xi32>,
        memref<?xi32>, memref<?x17x40xbf16>, memref<?x17xf32>
  return
}
