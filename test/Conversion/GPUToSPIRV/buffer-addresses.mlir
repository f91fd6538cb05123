// REQUIRES: spirv-val
// RUN: attn-opt %s --convert-attn-to-gpu="subgroup-size=8" --attn-gpu-to-spirv="subgroup-size=8 buffer-addresses=1" | FileCheck %s
// RUN: attn-opt %s --convert-attn-to-gpu="subgroup-size=8" --attn-gpu-to-spirv="subgroup-size=8" | FileCheck %s --check-prefix=BIND
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-translate --attn-to-spirv --subgroup-size=8 %s -o %t/
// RUN: %spirv-val --target-env vulkan1.1 %t/merge_merge_states.spv
// RUN: %spirv-val --target-env vulkan1.2 %t/merge_merge_states.spv
// RUN: %spirv-val --target-env vulkan1.1 %t/cache_reshape_and_cache.spv
// RUN: %spirv-val --target-env vulkan1.2 %t/cache_reshape_and_cache.spv

// attn-spirv-buffer-addresses: the kernel's buffers are u64 device
// addresses in one push-constant block (argument i at offset 8 i), each
// converted to a PhysicalStorageBuffer pointer to its { T data[]; } block;
// loads and stores are Aligned to their scalar size. No binding is left.
// CHECK-LABEL: spirv.module @__spv__merge_merge_states PhysicalStorageBuffer64 GLSL450
// CHECK-SAME: PhysicalStorageBufferAddresses
// CHECK-SAME: SPV_KHR_physical_storage_buffer
// CHECK-NOT: bind(
// CHECK: spirv.GlobalVariable @__buffer_addresses__ : !spirv.ptr<!spirv.struct<(i64 [0], i64 [8], i64 [16], i64 [24], i64 [32], i64 [40], i64 [48])>, PushConstant>
// CHECK: %[[BLOCK:.*]] = spirv.mlir.addressof @__buffer_addresses__
// CHECK: %[[SLOT:.*]] = spirv.AccessChain %[[BLOCK]][%{{.*}}] {{.*}} -> !spirv.ptr<i64, PushConstant>
// CHECK: %[[ADDR:.*]] = spirv.Load "PushConstant" %[[SLOT]] : i64
// CHECK: spirv.ConvertUToPtr %[[ADDR]] : i64 to !spirv.ptr<!spirv.struct<(!spirv.rtarray<f32, stride=4> [0])>, PhysicalStorageBuffer>
// CHECK: spirv.AccessChain {{.*}} -> !spirv.ptr<f32, PhysicalStorageBuffer>
// CHECK: spirv.Load "PhysicalStorageBuffer" %{{.*}} ["Aligned", 4] : f32
// CHECK: spirv.Store "PhysicalStorageBuffer" %{{.*}}, %{{.*}} ["Aligned", 4] : f32
// CHECK-NOT: , StorageBuffer>

// f16 caches: two-byte alignment; slot_mapping is i64.
// CHECK-LABEL: spirv.module @__spv__cache_reshape_and_cache PhysicalStorageBuffer64
// CHECK-DAG: spirv.Load "PhysicalStorageBuffer" %{{.*}} ["Aligned", 8] : i64
// CHECK-DAG: spirv.Load "PhysicalStorageBuffer" %{{.*}} ["Aligned", 2] : f16
// CHECK-DAG: spirv.Store "PhysicalStorageBuffer" %{{.*}}, %{{.*}} ["Aligned", 2] : f16

// Without the option (the Metal path) the buffers stay bindings.
// BIND-LABEL: spirv.module @__spv__merge_merge_states Logical GLSL450
// BIND: spirv.GlobalVariable @merge_merge_states_arg_0 bind(0, 0)
// BIND-NOT: PushConstant

func.func @merge(%oa: memref<?x4x32xf32>, %la: memref<?x4xf32>,
                 %ob: memref<?x4x32xf32>, %lb: memref<?x4xf32>,
                 %o: memref<?x4x32xf32>, %l: memref<?x4xf32>) {
  attn.merge_states %oa, %la, %ob, %lb outs(%o, %l)
      : memref<?x4x32xf32>, memref<?x4xf32>, memref<?x4x32xf32>,
        memref<?x4xf32>, memref<?x4x32xf32>, memref<?x4xf32>
  return
}

func.func @cache(%k: memref<?x8x128xf16>, %v: memref<?x8x128xf16>,
                 %s: memref<?xi64>, %c: memref<?x2x16x8x128xf16>) {
  attn.reshape_and_cache %k, %v, %s outs(%c) layout(nhd)
      : memref<?x8x128xf16>, memref<?x8x128xf16>, memref<?xi64>,
        memref<?x2x16x8x128xf16>
  return
}
