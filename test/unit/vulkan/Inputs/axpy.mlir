// out[i] = a[i] * s + b[i] for i < n: two f32 scalars (s, n) among the
// memrefs, to pin down how scalar kernel arguments reach the kernel. Lowered
// at build time by LowerKernel.cmake; 64 invocations per workgroup.
module attributes {gpu.container_module} {
  gpu.module @kernels [#spirv.target_env<
      #spirv.vce<v1.0, [Shader], [SPV_KHR_storage_buffer_storage_class]>,
      #spirv.resource_limits<>>] {
    gpu.func @axpy(%a: memref<?xf32>, %b: memref<?xf32>, %s: f32, %n: i32,
                   %out: memref<?xf32>) kernel
        attributes {spirv.entry_point_abi =
                    #spirv.entry_point_abi<workgroup_size = [64, 1, 1]>} {
      %gid = gpu.global_id x
      %i = arith.index_cast %gid : index to i32
      %inBounds = arith.cmpi slt, %i, %n : i32
      scf.if %inBounds {
        %x = memref.load %a[%gid] : memref<?xf32>
        %y = memref.load %b[%gid] : memref<?xf32>
        %scaled = arith.mulf %x, %s : f32
        %r = arith.addf %scaled, %y : f32
        memref.store %r, %out[%gid] : memref<?xf32>
      }
      gpu.return
    }
  }
}
