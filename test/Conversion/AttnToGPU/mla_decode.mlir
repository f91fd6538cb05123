// RUN: attn-opt %s --convert-attn-to-gpu="subgroup-size=32" | FileCheck %s
// RUN: attn-opt %s --convert-attn-to-gpu="subgroup-size=32 split-kv=1" \
// RUN:   | FileCheck %s --check-prefix=ONE
// RUN: attn-opt %s --convert-attn-to-gpu="subgroup-size=32 vector-load-bytes=16" \
// RUN:   | FileCheck %s --check-prefix=VEC

// DeepSeek-style latent cache: rows of 576 = 512 latent + 64 rope values,
// one kv head. num_kv_splits(4) gives a partial kernel over (R, H / tile, 4)
// and a reduce kernel over (R, H). With 32 lanes a head needs 18 + 16 values
// per lane, so two heads share a workgroup (budget 128).
// CHECK-LABEL: func.func @mla
// CHECK: %[[PO:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: %[[PL:.*]] = memref.alloc(%{{.*}}) : memref<?xf32>
// CHECK: gpu.launch_func @mla_mla_decode_partial::@mla_mla_decode_partial blocks in (%{{.*}}, %c8{{[_0-9]*}}, %c4{{[_0-9]*}})
// CHECK: gpu.launch_func @mla_mla_decode_reduce::@mla_mla_decode_reduce blocks in (%{{.*}}, %c16{{[_0-9]*}}, %c1{{[_0-9]*}})
// CHECK-SAME: args(%[[PO]] : memref<?xf32>, %[[PL]] : memref<?xf32>,

// CHECK: gpu.func @mla_mla_decode_partial
// CHECK-SAME: attn.heads_per_workgroup = 2 : i64
// CHECK-SAME: attn.params = ["num_reqs", "max_blocks_per_req", "num_blocks"]
// CHECK: gpu.block_id z
// CHECK: scf.for
// CHECK: memref.load %arg2
// CHECK: scf.for
// Each row is loaded once (18 loads per lane) for both heads of the tile.
// CHECK-COUNT-18: memref.load %arg1
// CHECK-NOT: memref.load %arg1
// CHECK-COUNT-2: gpu.subgroup_reduce add
// CHECK-NOT: memref.load %arg1
// CHECK: math.exp2
// CHECK: gpu.func @mla_mla_decode_reduce
// CHECK-SAME: attn.op = "split_kv_reduce"

// With 128-bit loads a lane owns chunks of 8 f16: a row of 576 is 72 chunks
// over 32 lanes, so 3 loads per lane, the third only for lanes 0-7 (the
// others read the last chunk, at 568, and drop it); 24 + 16 values per
// head still fit two heads.
// VEC: gpu.func @mla_mla_decode_partial
// VEC-SAME: attn.heads_per_workgroup = 2 : i64
// VEC: scf.for
// VEC: scf.for
// VEC-COUNT-3: vector.load %arg1[{{.*}}] {alignment = 16 : i64} : memref<?xf16>, vector<8xf16>
// VEC-NOT: memref.load %arg1
// VEC: gpu.subgroup_reduce add
// VEC: gpu.func @mla_mla_decode_reduce

// ONE-LABEL: func.func @mla
// ONE: gpu.launch_func @mla_mla_decode::@mla_mla_decode blocks in (%{{.*}}, %c8{{[_0-9]*}}, %c1{{[_0-9]*}})
// ONE-NOT: gpu.launch_func
// ONE-NOT: gpu.block_id z
func.func @mla(%q: memref<?x16x576xf16>, %cache: memref<?x16x576xf16>,
               %bt: memref<?x?xi32>, %lens: memref<?xi32>,
               %o: memref<?x16x512xf16>, %l: memref<?x16xf32>) {
  attn.mla_decode %q, %cache, %bt, %lens outs(%o, %l)
      kv_lora_rank(512) scale(0.1352337) num_kv_splits(4)
      : memref<?x16x576xf16>, memref<?x16x576xf16>, memref<?x?xi32>,
        memref<?xi32>, memref<?x16x512xf16>, memref<?x16xf32>
  return
}
