// RUN: attn-opt %s --convert-attn-to-gpu="row-vectors subgroup-size=1 attention-subgroups=1" | FileCheck %s
// RUN: attn-opt %s --convert-attn-to-gpu="row-vectors subgroup-size=1 attention-subgroups=1" | FileCheck %s --check-prefix=PASS
// RUN: not attn-opt %s --convert-attn-to-gpu="row-vectors" 2>&1 | FileCheck %s --check-prefix=SUBGROUP
// RUN: not attn-opt %s --convert-attn-to-gpu="row-vectors subgroup-size=1 attention-subgroups=2" 2>&1 | FileCheck %s --check-prefix=SUBGROUP

// The decode kernel for one invocation per workgroup (the cpu target): a
// work item takes the four query heads of one KV head. Per cache block it
// scores the visible keys (one vector load per key row, one reduction per
// head) into a stack buffer, prefetching the same rows of the next block,
// updates each head's online softmax once, then adds the values a chunk
// of 16 columns at a time (4 heads x 16 floats in registers), each
// probability read from the buffer and broadcast. Only the visible keys
// of a block are read.

// CHECK-LABEL: gpu.func @llama_paged_attention
// CHECK-SAME: known_block_size = array<i32: 1, 1, 1>
// CHECK: %[[PROBS:.*]] = memref.alloca() : memref<4x16xf32>
// CHECK: %[[ACC:.*]] = memref.alloca() : memref<4x128xf32>
// bf16 queries and cache: each head's query row is widened unscaled, so a
// score is a dot product of two bf16 rows (what attn-cpu-bf16-dot selects
// VDPBF16PS for), scaled after the sum.
// CHECK: %[[Q0:.*]] = vector.load %arg0[%{{.*}}] : memref<?xbf16>, vector<128xbf16>
// CHECK: %[[Q0F:.*]] = arith.extf %[[Q0]] : vector<128xbf16> to vector<128xf32>
// CHECK-COUNT-4: vector.store %{{.*}}, %[[ACC]][%{{.*}}, %c0] : memref<4x128xf32>, vector<128xf32>
// m and l of each head are carried.
// CHECK: scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, f32, f32) {
// CHECK-COUNT-4: vector.store %{{.*}}, %[[PROBS]][%{{.*}}, %c0] : memref<4x16xf32>, vector<16xf32>
// CHECK: scf.for %[[U:.*]] = %[[LO:.*]] to %[[HI:.*]] step %c1 {
// Four cache lines of the next block's key row, then of its value row.
// CHECK-COUNT-8: memref.prefetch %arg1[%{{.*}}], read, locality<3>, data : memref<?xbf16>
// CHECK: %[[KEY:.*]] = vector.load %arg1[%{{.*}}] : memref<?xbf16>, vector<128xbf16>
// CHECK: %[[KEYF:.*]] = arith.extf %[[KEY]] : vector<128xbf16> to vector<128xf32>
// CHECK: %[[PROD:.*]] = arith.mulf %[[Q0F]], %[[KEYF]] fastmath<reassoc,contract> : vector<128xf32>
// CHECK: %[[DOT:.*]] = vector.reduction <add>, %[[PROD]] fastmath<reassoc,contract> : vector<128xf32> into f32
// CHECK: arith.mulf %[[DOT]], %{{.*}} : f32
// CHECK: memref.store %{{.*}}, %[[PROBS]][%c0, %[[U]]] : memref<4x16xf32>
// CHECK: memref.store %{{.*}}, %[[PROBS]][%c3, %[[U]]] : memref<4x16xf32>
// One online-softmax update per head and block.
// CHECK: %[[S:.*]] = vector.load %[[PROBS]][%c0, %c0] : memref<4x16xf32>, vector<16xf32>
// The block's max by halves (16, 8, 4, 2), not a serial reduction.
// CHECK-NOT: vector.reduction <maxnumf>
// CHECK: %[[LO8:.*]] = vector.extract_strided_slice %[[S]] {offsets = [0], sizes = [8], strides = [1]} : vector<16xf32> to vector<8xf32>
// CHECK: %[[HI8:.*]] = vector.extract_strided_slice %[[S]] {offsets = [8], sizes = [8], strides = [1]} : vector<16xf32> to vector<8xf32>
// CHECK: arith.maxnumf %[[LO8]], %[[HI8]] : vector<8xf32>
// CHECK: arith.maxnumf %{{.*}}, %{{.*}} : vector<4xf32>
// CHECK: arith.maxnumf %{{.*}}, %{{.*}} : vector<2xf32>
// CHECK: arith.maxnumf %{{.*}}, %{{.*}} : vector<1xf32>
// CHECK: %[[P:.*]] = math.exp2 %{{.*}} : vector<16xf32>
// CHECK: vector.store %[[P]], %[[PROBS]][%c0, %c0] : memref<4x16xf32>, vector<16xf32>
// The values of the same keys, 16 columns at a time: eight passes.
// CHECK-COUNT-8: scf.for %{{.*}} = %[[LO]] to %[[HI]] step %c1 iter_args({{.*}}) -> (vector<16xf32>, vector<16xf32>, vector<16xf32>, vector<16xf32>)
// CHECK: scf.yield %{{.*}} : f32, f32, f32, f32, f32, f32, f32, f32

// A value pass, in full: the chunk's accumulators scaled by alpha, one
// chunk of a value row per key, its probability broadcast to an FMA.
// PASS-LABEL: gpu.func @llama_paged_attention
// PASS: %[[PROBS2:.*]] = memref.alloca() : memref<4x16xf32>
// PASS: %[[ACC2:.*]] = memref.alloca() : memref<4x128xf32>
// PASS: %[[OLD:.*]] = vector.load %[[ACC2]][%c0, %c0] : memref<4x128xf32>, vector<16xf32>
// PASS: arith.mulf %[[OLD]], %{{.*}} : vector<16xf32>
// PASS: scf.for %[[V:.*]] = %{{.*}} to %{{.*}} step %c1 iter_args(
// PASS: %[[ROW:.*]] = vector.load %arg1[%{{.*}}] : memref<?xbf16>, vector<16xbf16>
// PASS: %[[ROW32:.*]] = arith.extf %[[ROW]] : vector<16xbf16> to vector<16xf32>
// PASS: %[[PU:.*]] = memref.load %[[PROBS2]][%c0, %[[V]]] : memref<4x16xf32>
// PASS: %[[W:.*]] = vector.broadcast %[[PU]] : f32 to vector<16xf32>
// PASS: math.fma %[[W]], %[[ROW32]], %{{.*}} : vector<16xf32>
// PASS: vector.store %{{.*}}, %[[ACC2]][%c0, %c0] : memref<4x128xf32>, vector<16xf32>

// SUBGROUP: error: convert-attn-to-gpu: option row-vectors needs
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
