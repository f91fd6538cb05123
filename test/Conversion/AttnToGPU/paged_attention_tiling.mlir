// RUN: attn-opt %s -split-input-file --convert-attn-to-gpu="vector-load-bytes=16" | FileCheck %s
// RUN: attn-opt %s -split-input-file --convert-attn-to-gpu="vector-load-bytes=16 max-workgroup-memory=4096" | FileCheck %s --check-prefix=SMALL
// RUN: not attn-opt %s -split-input-file --convert-attn-to-gpu="subgroup-size=24" 2>&1 | FileCheck %s --check-prefix=OPTS
// RUN: not attn-opt %s -split-input-file --convert-attn-to-gpu="attention-subgroups=0" 2>&1 | FileCheck %s --check-prefix=OPTS0
// RUN: not attn-opt %s -split-input-file --convert-attn-to-gpu="vector-width=0" 2>&1 | FileCheck %s --check-prefix=OPTSW
// RUN: not attn-opt %s -split-input-file --convert-attn-to-gpu="lane-registers=0" 2>&1 | FileCheck %s --check-prefix=OPTSL
// RUN: not attn-opt %s -split-input-file --convert-attn-to-gpu="decode-threshold=-2" 2>&1 | FileCheck %s --check-prefix=OPTSD
// RUN: not attn-opt %s -split-input-file --convert-attn-to-gpu="prefill-matrix=wmma" 2>&1 | FileCheck %s --check-prefix=OPTSM
// RUN: not attn-opt %s -split-input-file --convert-attn-to-gpu="attention-subgroups=64" 2>&1 | FileCheck %s --check-prefix=BIG
// RUN: attn-opt %s -split-input-file --convert-attn-to-gpu="vector-load-bytes=16 attention-subgroups=3" | FileCheck %s --check-prefix=THREE

// How paged_attention tiles on a target with 128-bit loads (NVIDIA), with
// 32-lane subgroups.

// bf16, head size 128, 4 query heads per kv head. A lane owns chunks of 8
// bf16 (16 bytes), each read by one aligned vector load, so a row takes 16
// lanes and a subgroup holds 2 rows: dot products sum over 16 lanes (xor 8,
// 4, 2, 1), and the two rows' states merge with xor 16. Four subgroups
// merge through workgroup memory: 4 x 4 x (128 + 1) floats.
// CHECK-LABEL: gpu.func @llama_paged_attention
// CHECK-SAME: workgroup(%[[WG:.*]] : memref<2064xf32, #gpu.address_space<workgroup>>)
// CHECK-SAME: known_block_size = array<i32: 128, 1, 1>
// CHECK: %[[LANE:.*]] = gpu.lane_id
// CHECK: %[[SG:.*]] = gpu.subgroup_id
// CHECK: %[[IN_ROW:.*]] = arith.remui %[[LANE]], %c16
// CHECK: %[[ROW:.*]] = arith.divui %[[LANE]], %c16
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<?xbf16>, vector<8xbf16>
// CHECK: scf.for
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<?xbf16>, vector<8xbf16>
// CHECK: vector.extract %{{.*}}[0] : bf16 from vector<8xbf16>
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK: gpu.shuffle  xor %{{.*}}, %c8_i32, %c32_i32
// CHECK-NEXT: arith.addf
// CHECK-NEXT: gpu.shuffle  xor %{{.*}}, %c4_i32, %c32_i32
// CHECK: gpu.shuffle  xor %{{.*}}, %c1_i32, %c32_i32
// CHECK-NOT: gpu.subgroup_reduce
// CHECK: scf.yield
// CHECK: gpu.shuffle  xor %{{.*}}, %c16_i32, %c32_i32
// CHECK: gpu.barrier
// With 4 KiB of workgroup memory the count drops one at a time until the
// merge buffer fits: 3 x 4 x 129 and 2 x 4 x 129 floats do not, so one
// subgroup finalizes in registers.
// SMALL-LABEL: gpu.func @llama_paged_attention
// SMALL-NOT: workgroup(
// SMALL-SAME: known_block_size = array<i32: 32, 1, 1>
// SMALL-NOT: gpu.barrier
// SMALL: gpu.return
// BIG: convert-attn-to-gpu: attention-subgroups x subgroup-size = 2048 invocations per workgroup, more than 1024
// Subgroups need not be a power of two: three of them merge 3 x 4 x 129
// floats.
// THREE-LABEL: gpu.func @llama_paged_attention
// THREE-SAME: workgroup(%{{.*}} : memref<1548xf32, #gpu.address_space<workgroup>>)
// THREE-SAME: known_block_size = array<i32: 96, 1, 1>
// A bad option is named with its value, and the module is not printed.
// OPTS: error: convert-attn-to-gpu: option subgroup-size=24 is invalid: expected a power of two
// OPTS-NOT: see current operation
// OPTS0: error: convert-attn-to-gpu: option attention-subgroups=0 is invalid: expected a positive number
// OPTS0-NOT: builtin.module
// OPTSW: error: convert-attn-to-gpu: option vector-width=0 is invalid: expected a positive number
// OPTSW-NOT: builtin.module
// OPTSL: error: convert-attn-to-gpu: option lane-registers=0 is invalid: expected a positive number
// OPTSD: error: convert-attn-to-gpu: option decode-threshold=-2 is invalid: expected >= -1 (-1: the backend's threshold)
// OPTSM: error: convert-attn-to-gpu: option prefill-matrix=wmma is invalid: expected none, subgroup-mma, auto or emulate
// OPTSM-NOT: builtin.module
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

// Head size 80: chunks of 8 f16, 10 per row, dealt to 8 lanes, so lanes
// 0-1 own a second chunk and the others read the row's last chunk (at 72)
// and drop it. The first chunk is inside the row for every lane: no mask.
// CHECK-LABEL: gpu.func @odd_paged_attention
// CHECK: %[[IN_ROW:.*]] = arith.remui %{{.*}}, %c8
// CHECK: %[[BASE:.*]] = arith.muli %[[IN_ROW]], %c8
// CHECK-NOT: arith.minui %[[BASE]]
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<?xf16>, vector<8xf16>
// CHECK: %[[SECOND:.*]] = arith.addi %[[BASE]], %c64
// CHECK: %[[INSIDE:.*]] = arith.cmpi ult, %[[SECOND]], %c80
// CHECK: arith.minui %[[SECOND]], %c72
// CHECK: vector.load %{{.*}} {alignment = 16 : i64} : memref<?xf16>, vector<8xf16>
// CHECK: arith.select %[[INSIDE]]
func.func @odd(%q: memref<?x2x80xf16>, %c: memref<?x2x16x2x80xf16>,
               %qsl: memref<?xi32>, %lens: memref<?xi32>,
               %bt: memref<?x?xi32>, %o: memref<?x2x80xf16>,
               %l: memref<?x2xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      : memref<?xi32>, memref<?xi32>, memref<?x?xi32>
  attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.125)
      : memref<?x2x80xf16>, memref<?x2x16x2x80xf16>, memref<?x2x80xf16>,
        memref<?x2xf32>
  return
}

// -----

// MQA with 32 query heads on one kv head: with 128-bit chunks a lane would
// keep 2 x 32 x 8 query and accumulator values, over the 128-value budget,
// so chunks narrow until a row spans the subgroup (4 f16 per lane, one
// 64-bit load).
// CHECK-LABEL: gpu.func @mqa_paged_attention
// CHECK: vector.load %{{.*}} : memref<?xf16>, vector<4xf16>
// CHECK-NOT: vector<8xf16>
// CHECK: gpu.subgroup_reduce add
// CHECK-NOT: gpu.shuffle
// CHECK: scf.yield
func.func @mqa(%q: memref<?x32x128xf16>, %c: memref<?x2x16x1x128xf16>,
               %qsl: memref<?xi32>, %lens: memref<?xi32>,
               %bt: memref<?x?xi32>, %o: memref<?x32x128xf16>,
               %l: memref<?x32xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      : memref<?xi32>, memref<?xi32>, memref<?x?xi32>
  attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.125)
      : memref<?x32x128xf16>, memref<?x2x16x1x128xf16>,
        memref<?x32x128xf16>, memref<?x32xf32>
  return
}
