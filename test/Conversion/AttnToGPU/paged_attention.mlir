// RUN: attn-opt %s --convert-attn-to-gpu | FileCheck %s

// Decode/prefill over an f16 NHD cache: H = 8 query heads on G = 2 kv heads
// (GQA groups of 4), head size 64, block size 16, causal (the default).

// The host function is the launch description: operands flattened to 1-D,
// the params buffer [num_tokens, num_reqs, max_blocks_per_req, num_blocks],
// then two launches over grids the shapes bound. The per-token kernel: (T,
// G, 1) workgroups of four subgroups. The tiled prefill kernel: one
// workgroup per 16 query tokens of the batch plus one per request (the
// tokens of a request before its first multiple of 16), times G.
// CHECK-LABEL: func.func @paged
// CHECK-SAME: (%[[Q:[^:]*]]: memref<?x8x64xf16>, %[[C:[^:]*]]: memref<?x2x16x2x64xf16>, %[[QSL:[^:]*]]: memref<?xi32>, %[[LENS:[^:]*]]: memref<?xi32>, %[[BT:[^:]*]]: memref<?x?xi32>, %[[O:[^:]*]]: memref<?x8x64xf16>, %[[L:[^:]*]]: memref<?x8xf32>)
// CHECK-DAG: %[[QF:.*]] = memref.collapse_shape %[[Q]] {{\[\[}}0, 1, 2]] : memref<?x8x64xf16> into memref<?xf16>
// CHECK-DAG: %[[CF:.*]] = memref.collapse_shape %[[C]] {{\[\[}}0, 1, 2, 3, 4]] : memref<?x2x16x2x64xf16> into memref<?xf16>
// CHECK-DAG: %[[BTF:.*]] = memref.collapse_shape %[[BT]] {{\[\[}}0, 1]]
// CHECK-DAG: %[[OF:.*]] = memref.collapse_shape %[[O]]
// CHECK-DAG: %[[LF:.*]] = memref.collapse_shape %[[L]]
// CHECK-DAG: %[[T:.*]] = memref.dim %[[Q]], %c0
// CHECK-DAG: %[[R:.*]] = memref.dim %[[LENS]], %c0
// CHECK-DAG: %[[M:.*]] = memref.dim %[[BT]], %c1
// CHECK-DAG: %[[NB:.*]] = memref.dim %[[C]], %c0
// CHECK: %[[P:.*]] = memref.alloc() : memref<4xi32>
// CHECK: %[[T32:.*]] = arith.index_cast %[[T]] : index to i32
// CHECK: memref.store %[[T32]], %[[P]][%{{.*}}] : memref<4xi32>
// CHECK: %[[PD:.*]] = memref.cast %[[P]] : memref<4xi32> to memref<?xi32>
// CHECK: gpu.launch_func @paged_paged_attention::@paged_paged_attention
// CHECK-SAME: blocks in (%[[T]], %c2{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c128{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}})
// CHECK-SAME: args(%[[QF]] : memref<?xf16>, %[[CF]] : memref<?xf16>, %[[QSL]] : memref<?xi32>, %[[LENS]] : memref<?xi32>, %[[BTF]] : memref<?xi32>, %[[OF]] : memref<?xf16>, %[[LF]] : memref<?xf32>, %[[PD]] : memref<?xi32>)
// CHECK: memref.dealloc %[[P]]
// CHECK: %[[T2:.*]] = memref.dim %[[Q]], %c0
// CHECK: %[[R2:.*]] = memref.dim %[[LENS]], %c0
// CHECK: %[[CHUNKS:.*]] = arith.ceildivui %[[T2]], %c16 : index
// CHECK: %[[TILES:.*]] = arith.addi %[[CHUNKS]], %[[R2]] : index
// CHECK: gpu.launch_func @paged_paged_attention_prefill::@paged_paged_attention_prefill
// CHECK-SAME: blocks in (%[[TILES]], %c2{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c128{{[_0-9]*}}, %c1{{[_0-9]*}}, %c1{{[_0-9]*}})
// CHECK-NOT: attn.

// The per-token kernel: find the request of the token and return unless
// it is a decode (query length at most 1); narrow the keys to the causal
// range, then steps of 64 keys from 0 to the end. A head row of 64 is
// spread over 8 lanes (the fewest that fit 4 query heads and 4 keys in 128
// lane registers), so a subgroup holds 4 row groups and the workgroup 16,
// each taking U = 4 keys per step: block-table reads, dot products summed
// over 8 lanes (xor 4, 2, 1), one online-softmax update. The row groups of a
// subgroup merge by shuffles; the subgroups write their normalized rows and
// lses ([4 x 4] lses, then [4 x 4 x 64] rows: 1040 floats) to workgroup
// memory, and after a barrier the workgroup merges them by their lses.
// CHECK: gpu.module @paged_paged_attention
// CHECK: gpu.func @paged_paged_attention(%[[KQ:.*]]: memref<?xf16>, %[[KC:.*]]: memref<?xf16>, %[[KQSL:.*]]: memref<?xi32>, %[[KLENS:.*]]: memref<?xi32>, %[[KBT:.*]]: memref<?xi32>, %[[KO:.*]]: memref<?xf16>, %[[KL:.*]]: memref<?xf32>, %[[KP:.*]]: memref<?xi32>) workgroup(%[[WG:.*]] : memref<1040xf32, #gpu.address_space<workgroup>>) kernel
// CHECK-SAME: attn.op = "paged_attention"
// CHECK-SAME: attn.params = ["num_tokens", "num_reqs", "max_blocks_per_req", "num_blocks"]
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// CHECK: %[[TOK:.*]] = gpu.block_id x
// CHECK: gpu.lane_id
// CHECK: gpu.subgroup_id
// CHECK: %[[REQ:.*]]:2 = scf.while
// CHECK: memref.load %[[KQSL]]
// CHECK: %[[LEN:.*]] = memref.load %[[KLENS]][%[[REQ]]#0]
// CHECK: %[[DECODE:.*]] = arith.cmpi sle, %{{.*}}, %c1 : index
// CHECK: scf.if %[[DECODE]] {
// CHECK: arith.minsi
// CHECK-NOT: arith.maxsi
// CHECK: memref.load %[[KQ]]
// CHECK: scf.for %{{.*}} = %c0 to %{{.*}} step %c64 iter_args
// CHECK-COUNT-4: memref.load %[[KBT]]
// CHECK: memref.load %[[KC]]
// CHECK: math.fma
// CHECK: gpu.shuffle  xor %{{.*}}, %c4_i32, %c32_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c2_i32, %c32_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32
// CHECK-NOT: math.tanh
// CHECK-NOT: arith.sitofp
// CHECK: math.exp2
// CHECK: scf.yield
// CHECK: gpu.shuffle  xor %{{.*}}, %c8_i32, %c32_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c16_i32, %c32_i32
// CHECK: math.log
// CHECK: memref.store %{{.*}}, %[[WG]]
// CHECK: gpu.barrier
// CHECK: %[[TID:.*]] = gpu.thread_id x
// CHECK: scf.for %{{.*}} = %[[TID]] to %c64 step %c128
// CHECK: memref.load %[[WG]]
// CHECK: memref.store %{{.*}}, %[[KO]]
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %[[KL]]
func.func @paged(%q: memref<?x8x64xf16>, %cache: memref<?x2x16x2x64xf16>,
                 %qsl: memref<?xi32>, %lens: memref<?xi32>,
                 %bt: memref<?x?xi32>, %o: memref<?x8x64xf16>,
                 %l: memref<?x8xf32>) -> (memref<?x8x64xf16>, memref<?x8xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      : memref<?xi32>, memref<?xi32>, memref<?x?xi32>
  attn.paged_attention %q, %cache, %md outs(%o, %l) layout(nhd) scale(0.125)
      : memref<?x8x64xf16>, memref<?x2x16x2x64xf16>, memref<?x8x64xf16>,
        memref<?x8xf32>
  return %o, %l : memref<?x8x64xf16>, memref<?x8xf32>
}
