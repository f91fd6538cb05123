// RUN: attn-opt %s --convert-attn-to-gpu --attn-gpu-to-nvvm="chip=sm_80" | FileCheck %s

// The attn-gpu-to-nvvm pipeline: an NVVM target on every kernel module,
// kernels as llvm.func with nvvm.kernel and their block size, every
// memref<?xT> argument as upstream's five-value descriptor, subgroup
// reductions as a butterfly of 32-lane shuffles, math as libdevice calls;
// the host launches stay.
// CHECK: func.func @merge
// CHECK: gpu.launch_func @merge_merge_states::@merge_merge_states
// CHECK: func.func @paged
// CHECK: gpu.launch_func @paged_paged_attention::@paged_paged_attention
// CHECK-LABEL: gpu.module @merge_merge_states [#nvvm.target<chip = "sm_80", features = "+ptx80">]
// CHECK: llvm.func @__nv_expf(f32) -> f32
// 6 outputs and inputs, then the params buffer: 7 descriptors.
// CHECK: llvm.func @merge_merge_states(%arg0: !llvm.ptr, %arg1: !llvm.ptr, %arg2: i64, %arg3: i64, %arg4: i64, %arg5: !llvm.ptr,
// CHECK-SAME: %arg34: i64)
// CHECK-SAME: nvvm.kernel
// CHECK-SAME: nvvm.maxntid = array<i32: 32, 1, 1>
// CHECK-NOT: gpu.subgroup_reduce
// CHECK-LABEL: gpu.module @paged_paged_attention [#nvvm.target<chip = "sm_80", features = "+ptx80">]
// CHECK: llvm.func @__nv_exp2f(f32) -> f32
// CHECK: llvm.func @paged_paged_attention(
// CHECK-SAME: %arg39: i64)
// CHECK-COUNT-5: nvvm.shfl.sync  bfly
// CHECK: llvm.call @__nv_exp2f
// CHECK-NOT: gpu.subgroup_reduce
func.func @merge(%oa: memref<?x4x32xf32>, %la: memref<?x4xf32>,
                 %ob: memref<?x4x32xf32>, %lb: memref<?x4xf32>,
                 %o: memref<?x4x32xf32>, %l: memref<?x4xf32>) {
  attn.merge_states %oa, %la, %ob, %lb outs(%o, %l)
      : memref<?x4x32xf32>, memref<?x4xf32>, memref<?x4x32xf32>,
        memref<?x4xf32>, memref<?x4x32xf32>, memref<?x4xf32>
  return
}

func.func @paged(%q: memref<?x4x32xf32>, %c: memref<?x2x16x4x32xf32>,
                 %qsl: memref<?xi32>, %lens: memref<?xi32>,
                 %bt: memref<?x?xi32>, %o: memref<?x4x32xf32>,
                 %l: memref<?x4xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      : memref<?xi32>, memref<?xi32>, memref<?x?xi32>
  attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd) scale(0.5)
      : memref<?x4x32xf32>, memref<?x2x16x4x32xf32>, memref<?x4x32xf32>,
        memref<?x4xf32>
  return
}
