// RUN: attn-opt %s --split-input-file --convert-gpu-kernels-to-cpu | FileCheck %s

// A single-invocation kernel becomes a function of one work item: the work
// item's x, y, z first, block ids read them, thread and lane ids are 0, a
// reduction over one lane is its operand, barriers vanish, and workgroup
// memory is the work item's stack. The gpu.module goes.
// CHECK-NOT: gpu.module
// CHECK-LABEL: func.func @k_k
// CHECK-SAME: (%[[X:.*]]: index, %[[Y:.*]]: index, %[[Z:.*]]: index, %[[A:.*]]: memref<?xf32>, %[[P:.*]]: memref<?xi32>)
// CHECK-SAME: attn.cpu_kernel
// CHECK-SAME: attn.op = "merge_states"
// CHECK: %[[C0:.*]] = arith.constant 0 : index
// CHECK: %[[TILE:.*]] = memref.alloca() : memref<4xf32>
// CHECK: %[[V:.*]] = memref.load %[[A]][%[[Y]]]
// CHECK: memref.store %[[V]], %[[TILE]][%[[C0]]]
// CHECK-NOT: gpu.
// CHECK: %[[W:.*]] = memref.load %[[TILE]][%[[C0]]]
// CHECK: memref.store %[[W]], %[[A]][%[[Z]]]
// CHECK: return
module {
  gpu.module @k_k attributes {attn.kernels, attn.subgroup_size = 1 : i64} {
    gpu.func @k_k(%a: memref<?xf32>, %p: memref<?xi32>)
        workgroup(%tile : memref<4xf32, #gpu.address_space<workgroup>>)
        kernel attributes {attn.op = "merge_states",
                           known_block_size = array<i32: 1, 1, 1>} {
      %y = gpu.block_id y
      %z = gpu.block_id z
      %t = gpu.thread_id x
      %l = gpu.lane_id
      %v = memref.load %a[%y] : memref<?xf32>
      %r = gpu.subgroup_reduce add %v : (f32) -> f32
      memref.store %r, %tile[%t] : memref<4xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %w = memref.load %tile[%l] : memref<4xf32, #gpu.address_space<workgroup>>
      memref.store %w, %a[%z] : memref<?xf32>
      gpu.return
    }
  }
}

// -----

// Vector accesses lose the GPU buffers' alignment: host buffers may be
// aligned to their element only.
// CHECK-LABEL: func.func @v_v
// CHECK: vector.load %{{.*}} : memref<?xf32>, vector<8xf32>
// CHECK-NOT: alignment
// CHECK: vector.store %{{.*}} : memref<?xf32>, vector<8xf32>
module {
  gpu.module @v_v attributes {attn.kernels, attn.subgroup_size = 1 : i64} {
    gpu.func @v_v(%a: memref<?xf32>) kernel attributes {known_block_size = array<i32: 1, 1, 1>} {
      %x = gpu.block_id x
      %v = vector.load %a[%x] {alignment = 32 : i64} : memref<?xf32>, vector<8xf32>
      vector.store %v, %a[%x] {alignment = 32 : i64} : memref<?xf32>, vector<8xf32>
      gpu.return
    }
  }
}

// -----

// gpu.modules convert-attn-to-gpu did not make are left alone.
// CHECK-LABEL: gpu.module @other
// CHECK: gpu.func @other
module attributes {gpu.container_module} {
  gpu.module @other {
    gpu.func @other() kernel {
      gpu.return
    }
  }
}
