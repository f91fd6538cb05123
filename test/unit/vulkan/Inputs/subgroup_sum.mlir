// out[i] = the sum over i's subgroup of in[j] * scale, in f16, and sg[i] = the
// subgroup id of invocation i, so the host can check the sum whatever the
// device's subgroup size. Needs Float16, 16-bit storage and subgroup
// arithmetic. Lowered at build time by LowerKernel.cmake; 64 invocations per
// workgroup.
module attributes {gpu.container_module} {
  gpu.module @kernels [#spirv.target_env<
      #spirv.vce<v1.3, [Shader, Float16, StorageBuffer16BitAccess,
                        GroupNonUniform, GroupNonUniformArithmetic],
                 [SPV_KHR_storage_buffer_storage_class, SPV_KHR_16bit_storage]>,
      #spirv.resource_limits<>>] {
    gpu.func @subgroup_sum(%in: memref<?xf16>, %scale: f16,
                           %out: memref<?xf16>, %sg: memref<?xi32>) kernel
        attributes {spirv.entry_point_abi =
                    #spirv.entry_point_abi<workgroup_size = [64, 1, 1]>} {
      %gid = gpu.global_id x
      %x = memref.load %in[%gid] : memref<?xf16>
      %y = arith.mulf %x, %scale : f16
      %sum = gpu.subgroup_reduce add %y : (f16) -> f16
      memref.store %sum, %out[%gid] : memref<?xf16>
      %id = gpu.subgroup_id : index
      %id32 = arith.index_cast %id : index to i32
      memref.store %id32, %sg[%gid] : memref<?xi32>
      gpu.return
    }
  }
}
