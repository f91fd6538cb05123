// RUN: attn-opt %s --convert-attn-to-gpu="subgroup-size=8" --attn-gpu-to-spirv="subgroup-size=8" | FileCheck %s

// The attn-gpu-to-spirv pipeline: a Vulkan target env with the subgroup
// size, one spirv.module per kernel with its workgroup size, exp2 as
// GL.Exp2 and dot products summed by shuffles over a head row's lanes (4
// of the 8: f32 rows of 32 with 4 query heads fit 128 lane registers); the
// host launch stays.
// CHECK: spirv.target_env = #spirv.target_env<#spirv.vce<v1.3,
// CHECK-SAME: api=Vulkan
// CHECK-SAME: subgroup_size = 8
// CHECK: func.func @merge
// CHECK: gpu.launch_func @merge_merge_states::@merge_merge_states
// CHECK: func.func @paged
// CHECK: gpu.launch_func @paged_paged_attention::@paged_paged_attention
// CHECK: spirv.module @__spv__merge_merge_states Logical GLSL450
// CHECK: spirv.GL.Exp
// CHECK: spirv.EntryPoint "GLCompute" @merge_merge_states
// CHECK: spirv.ExecutionMode @merge_merge_states "LocalSize", 8, 1, 1
// CHECK: gpu.module @merge_merge_states
// CHECK: spirv.module @__spv__paged_paged_attention
// CHECK-SAME: GroupNonUniformShuffle
// CHECK: spirv.GroupNonUniformShuffleXor <Subgroup> %{{.*}}, %cst2_i32
// CHECK: spirv.GroupNonUniformShuffleXor <Subgroup> %{{.*}}, %cst1_i32
// CHECK: spirv.GL.Exp2
// CHECK: spirv.EntryPoint "GLCompute" @paged_paged_attention
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
