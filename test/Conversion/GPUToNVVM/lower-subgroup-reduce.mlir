// RUN: attn-opt %s --attn-lower-subgroup-reduce | FileCheck %s
// RUN: attn-opt %s --attn-lower-subgroup-reduce="subgroup-size=8" | FileCheck %s --check-prefix=SG8
// RUN: not attn-opt %s --attn-lower-subgroup-reduce="subgroup-size=24" 2>&1 | FileCheck %s --check-prefix=ERR

// Subgroup reductions in kernels become xor shuffles over the subgroup:
// 32 lanes take five steps, 8 lanes three.
// CHECK-LABEL: gpu.func @dot
// CHECK-NOT: gpu.subgroup_reduce
// CHECK-COUNT-5: gpu.shuffle  xor
// CHECK-NOT: gpu.shuffle
// CHECK: gpu.return
// SG8-LABEL: gpu.func @dot
// SG8-COUNT-3: gpu.shuffle  xor
// SG8-NOT: gpu.shuffle
// ERR: attn-lower-subgroup-reduce expects a power of two subgroup-size, got 24

// The subgroup of a thread is its linear id over the subgroup size
// (convert-gpu-to-nvvm lowers neither gpu.subgroup_id nor the
// gpu.subgroup_size of upstream's own expansion).
// CHECK-LABEL: gpu.func @which
// CHECK-NOT: gpu.subgroup_id
// CHECK-DAG: %[[X:.*]] = gpu.thread_id x
// CHECK-DAG: %[[Y:.*]] = gpu.thread_id y
// CHECK-DAG: %[[Z:.*]] = gpu.thread_id z
// CHECK-DAG: %[[BX:.*]] = gpu.block_dim x
// CHECK-DAG: %[[BY:.*]] = gpu.block_dim y
// CHECK-DAG: %[[YZ:.*]] = arith.muli %[[BY]], %[[Z]]
// CHECK-DAG: %[[Y2:.*]] = arith.addi %[[Y]], %[[YZ]]
// CHECK-DAG: %[[XY:.*]] = arith.muli %[[BX]], %[[Y2]]
// CHECK-DAG: %[[LIN:.*]] = arith.addi %[[X]], %[[XY]]
// CHECK: arith.divui %[[LIN]], %c32
// SG8-LABEL: gpu.func @which
// SG8: arith.divui %{{.*}}, %c8
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @dot(%x: f32, %out: memref<?xf32>) kernel {
      %c0 = arith.constant 0 : index
      %sum = gpu.subgroup_reduce add %x : (f32) -> f32
      memref.store %sum, %out[%c0] : memref<?xf32>
      gpu.return
    }
    gpu.func @which(%out: memref<?xindex>) kernel {
      %c0 = arith.constant 0 : index
      %sg = gpu.subgroup_id : index
      memref.store %sg, %out[%c0] : memref<?xindex>
      gpu.return
    }
  }
}
