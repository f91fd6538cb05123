// RUN: attn-opt %s --convert-attn-to-gpu="subgroup-size=32" | FileCheck %s

// One workgroup per (token, head); invocations stride over the head
// dimension. Each side is weighted by exp(lse - max); an empty side
// (lse = -inf or +inf, which becomes -inf before the max) is selected away,
// as is a row where both are empty.
// CHECK-LABEL: func.func @merge
// CHECK: gpu.launch_func @merge_merge_states::@merge_merge_states blocks in (%{{.*}}, %c8{{[_0-9]*}}, %c1{{[_0-9]*}}) threads in (%c32{{[_0-9]*}},

// CHECK: gpu.func @merge_merge_states(%[[OA:.*]]: memref<?xf16>, %[[LA:.*]]: memref<?xf32>, %[[OB:.*]]: memref<?xf16>, %[[LB:.*]]: memref<?xf32>, %[[O:.*]]: memref<?xf16>, %[[L:.*]]: memref<?xf32>, %{{.*}}: memref<?xi32>) kernel
// CHECK-SAME: attn.op = "merge_states", attn.params = ["num_tokens"]
// CHECK: %[[INF:.*]] = arith.constant 0x7F800000 : f32
// CHECK: %[[NINF:.*]] = arith.constant 0xFF800000 : f32
// CHECK: %[[RA:.*]] = memref.load %[[LA]]
// CHECK: %[[ABSA:.*]] = math.absf %[[RA]]
// CHECK: %[[EA:.*]] = arith.cmpf oeq, %[[ABSA]], %[[INF]]
// CHECK: %[[A:.*]] = arith.select %[[EA]], %[[NINF]], %[[RA]]
// CHECK: %[[RB:.*]] = memref.load %[[LB]]
// CHECK: %[[ABSB:.*]] = math.absf %[[RB]]
// CHECK: %[[EB:.*]] = arith.cmpf oeq, %[[ABSB]], %[[INF]]
// CHECK: %[[B:.*]] = arith.select %[[EB]], %[[NINF]], %[[RB]]
// CHECK: arith.maximumf %[[A]], %[[B]]
// CHECK: math.exp
// CHECK: math.exp
// CHECK: scf.for %[[D:.*]] = %thread_id_x to %c64 step %c32
// CHECK: memref.load %[[OA]]
// CHECK: arith.extf
// CHECK: memref.load %[[OB]]
// CHECK: arith.truncf
// CHECK: memref.store %{{.*}}, %[[O]]
// CHECK: math.log
// CHECK: scf.if
// CHECK: memref.store %{{.*}}, %[[L]]
func.func @merge(%oa: memref<?x8x64xf16>, %la: memref<?x8xf32>,
                 %ob: memref<?x8x64xf16>, %lb: memref<?x8xf32>,
                 %o: memref<?x8x64xf16>, %l: memref<?x8xf32>) {
  attn.merge_states %oa, %la, %ob, %lb outs(%o, %l)
      : memref<?x8x64xf16>, memref<?x8xf32>, memref<?x8x64xf16>,
        memref<?x8xf32>, memref<?x8x64xf16>, memref<?x8xf32>
  return
}
