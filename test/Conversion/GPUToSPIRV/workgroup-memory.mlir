// RUN: attn-opt %s --attn-spirv-workgroup-memory | FileCheck %s
// RUN: attn-opt %s --attn-gpu-to-spirv="subgroup-size=8" | FileCheck %s --check-prefix=SPIRV

// convert-gpu-to-spirv leaves workgroup attributions unconverted, so the
// pass turns each into an allocation in the Workgroup storage class at the
// top of the kernel, which upstream lowers to a Workgroup global.
// CHECK-LABEL: gpu.func @merge
// CHECK-NOT: workgroup(
// CHECK-SAME: kernel
// CHECK-NEXT: %[[BUF:.*]] = memref.alloc() : memref<64xf32, #spirv.storage_class<Workgroup>>
// CHECK: memref.store %{{.*}}, %[[BUF]]
// CHECK: gpu.barrier
// CHECK: memref.load %[[BUF]]
// SPIRV: spirv.GlobalVariable @{{.*}} : !spirv.ptr<!spirv.struct<(!spirv.array<64 x f32>)>, Workgroup>
// SPIRV: spirv.ControlBarrier <Workgroup>, <Workgroup>, <AcquireRelease|WorkgroupMemory>
module attributes {gpu.container_module} {
  gpu.module @k {
    gpu.func @merge(%io: memref<?xf32>)
        workgroup(%buf : memref<64xf32, #gpu.address_space<workgroup>>)
        kernel attributes {known_block_size = array<i32: 64, 1, 1>} {
      %t = gpu.thread_id x
      %v = memref.load %io[%t] : memref<?xf32>
      memref.store %v, %buf[%t] : memref<64xf32, #gpu.address_space<workgroup>>
      gpu.barrier
      %c63 = arith.constant 63 : index
      %r = arith.subi %c63, %t : index
      %w = memref.load %buf[%r] : memref<64xf32, #gpu.address_space<workgroup>>
      memref.store %w, %io[%t] : memref<?xf32>
      gpu.return
    }
  }
}
