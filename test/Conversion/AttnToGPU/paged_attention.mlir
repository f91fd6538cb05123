// RUN: attn-opt %s --convert-attn-to-gpu | FileCheck %s

// Decode/prefill over an f16 NHD cache: H = 8 query heads on G = 2 kv heads
// (GQA groups of 4), head size 64, block size 16, causal (the default).

// The host function is the launch description: operands flattened to 1-D,
// the params buffer [num_tokens, num_reqs, max_blocks_per_req, num_blocks],
// and a grid of (T, G, 1) workgroups of four subgroups.
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
// CHECK-NOT: attn.

// The kernel: find the request of the token, narrow the keys to the causal
// range, then steps of 16 keys from 0 to the end. Head size 64 over 32 lanes is one row
// per subgroup, so the four subgroups are four row groups, each taking
// U = 4 keys per step: four block-table reads, then 4 keys x 4 query heads
// subgroup reductions, then one online-softmax update. The subgroups
// write their normalized rows and lses ([4 x 4] lses, then [4 x 4 x 64]
// rows: 1040 floats) to workgroup memory, and after a barrier the
// workgroup merges them per head by their lses.
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
// CHECK: arith.minsi
// CHECK-NOT: arith.maxsi
// CHECK: memref.load %[[KQ]]
// CHECK: scf.for %{{.*}} = %c0 to %{{.*}} step %c16 iter_args
// CHECK-COUNT-4: memref.load %[[KBT]]
// CHECK: memref.load %[[KC]]
// CHECK-COUNT-16: gpu.subgroup_reduce add
// CHECK-NOT: math.tanh
// CHECK-NOT: arith.sitofp
// CHECK: math.exp2
// CHECK: scf.yield
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
