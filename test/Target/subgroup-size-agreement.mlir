// The target pipelines lower subgroup operations for the size
// convert-attn-to-gpu built the kernels for: they read it from the
// gpu.module (attn.subgroup_size), so the knob is given once. A size given
// to them as well must agree: lane layouts, shuffles and workgroup sizes
// depend on it, so a mismatch would give wrong kernels silently.
// RUN: attn-opt %s --convert-attn-to-gpu="subgroup-size=32" | FileCheck %s --check-prefix=MARK
// RUN: attn-opt %s --convert-attn-to-gpu="subgroup-size=32" | not attn-opt --attn-gpu-to-spirv="subgroup-size=16" 2>&1 | FileCheck %s --check-prefix=SPIRV --implicit-check-not="see current operation"
// RUN: attn-opt %s --convert-attn-to-gpu="subgroup-size=16" | not attn-opt --attn-gpu-to-nvvm 2>&1 | FileCheck %s --check-prefix=NVVM --implicit-check-not="see current operation"
// Agreeing sizes pass.
// RUN: attn-opt %s --convert-attn-to-gpu="subgroup-size=16" | attn-opt --attn-gpu-to-spirv="subgroup-size=16" | FileCheck %s --check-prefix=OK
// Without a size the pipelines take the kernels'.
// RUN: attn-opt %s --convert-attn-to-gpu="subgroup-size=16" | attn-opt --attn-gpu-to-spirv | FileCheck %s --check-prefix=FROM16
// RUN: attn-opt %S/Inputs/mla-decode.mlir --convert-attn-to-gpu="subgroup-size=16" | attn-opt --attn-lower-subgroup-reduce | FileCheck %s --check-prefix=REDUCE16 --implicit-check-not=gpu.subgroup_reduce --implicit-check-not=c32_i32
// RUN: attn-opt %S/Inputs/mla-decode.mlir --convert-attn-to-gpu="subgroup-size=8" | attn-opt --attn-lower-subgroup-reduce | FileCheck %s --check-prefix=REDUCE8 --implicit-check-not=gpu.subgroup_reduce --implicit-check-not=c16_i32
// RUN: attn-opt %s --convert-attn-to-gpu="subgroup-size=16" | not attn-opt --attn-spirv-attach-target="subgroup-size=-1" 2>&1 | FileCheck %s --check-prefix=NEG --implicit-check-not="see current operation"
// Kernel modules built for two sizes cannot share one target environment.
// RUN: not attn-opt %S/Inputs/two-subgroup-sizes.mlir --attn-spirv-attach-target 2>&1 | FileCheck %s --check-prefix=TWO --implicit-check-not="see current operation"

// MARK: gpu.module @merge_merge_states attributes {attn.kernels, attn.subgroup_size = 32 : i64}
// SPIRV: error: gpu.module @merge_merge_states was built by convert-attn-to-gpu for subgroup size 32, but attn-spirv-attach-target was given subgroup-size=16; give both the same size (attn-compile and attn-translate do)
// NVVM: error: gpu.module @merge_merge_states was built by convert-attn-to-gpu for subgroup size 16, but attn-lower-subgroup-reduce was given subgroup-size=32; give both the same size (attn-compile and attn-translate do)
// OK: spirv.module
// FROM16: spirv.target_env = #spirv.target_env<{{.*}}#spirv.resource_limits<subgroup_size = 16>>
// FROM16: spirv.module
// The MLA kernel's score sums expand into butterflies over the kernels'
// lanes: xor offsets up to half the size, shuffles of that width, and
// nothing of a wider subgroup.
// REDUCE16: gpu.shuffle  xor %{{.*}}, %c1_i32, %c16_i32
// REDUCE16: gpu.shuffle  xor %{{.*}}, %c8_i32, %c16_i32
// REDUCE8: gpu.shuffle  xor %{{.*}}, %c1_i32, %c8_i32
// REDUCE8: gpu.shuffle  xor %{{.*}}, %c4_i32, %c8_i32
// NEG: error: attn-spirv-attach-target expects subgroup-size >= 0 (0: the size the kernels were built for), got -1
// TWO: error: gpu.module @wide was built by convert-attn-to-gpu for subgroup size 32, but gpu.module @narrow for 16; attn-spirv-attach-target lowers one module for one size

func.func @merge(%oa: memref<?x8x64xf32>, %la: memref<?x8xf32>,
                 %ob: memref<?x8x64xf32>, %lb: memref<?x8xf32>,
                 %o: memref<?x8x64xf32>, %l: memref<?x8xf32>) {
  attn.merge_states %oa, %la, %ob, %lb outs(%o, %l)
      : memref<?x8x64xf32>, memref<?x8xf32>, memref<?x8x64xf32>,
        memref<?x8xf32>, memref<?x8x64xf32>, memref<?x8xf32>
  return
}
