// The target pipelines refuse kernels that convert-attn-to-gpu built for
// another subgroup size than theirs: lane layouts, shuffles and workgroup
// sizes depend on it, so a mismatch would give wrong kernels silently.
// RUN: attn-opt %s --convert-attn-to-gpu="subgroup-size=32" | FileCheck %s --check-prefix=MARK
// RUN: attn-opt %s --convert-attn-to-gpu="subgroup-size=32" | not attn-opt --attn-gpu-to-spirv="subgroup-size=16" 2>&1 | FileCheck %s --check-prefix=SPIRV
// RUN: attn-opt %s --convert-attn-to-gpu="subgroup-size=16" | not attn-opt --attn-gpu-to-nvvm 2>&1 | FileCheck %s --check-prefix=NVVM
// Agreeing sizes pass.
// RUN: attn-opt %s --convert-attn-to-gpu="subgroup-size=16" | attn-opt --attn-gpu-to-spirv="subgroup-size=16" | FileCheck %s --check-prefix=OK

// MARK: gpu.module @merge_merge_states attributes {attn.kernels, attn.subgroup_size = 32 : i64}
// SPIRV: error: gpu.module @merge_merge_states was built by convert-attn-to-gpu for subgroup size 32, but attn-spirv-attach-target was given subgroup-size=16; give both the same size (attn-compile and attn-translate do)
// NVVM: error: gpu.module @merge_merge_states was built by convert-attn-to-gpu for subgroup size 16, but attn-lower-subgroup-reduce was given subgroup-size=32; give both the same size (attn-compile and attn-translate do)
// OK: spirv.module

func.func @merge(%oa: memref<?x8x64xf32>, %la: memref<?x8xf32>,
                 %ob: memref<?x8x64xf32>, %lb: memref<?x8xf32>,
                 %o: memref<?x8x64xf32>, %l: memref<?x8xf32>) {
  attn.merge_states %oa, %la, %ob, %lb outs(%o, %l)
      : memref<?x8x64xf32>, memref<?x8xf32>, memref<?x8x64xf32>,
        memref<?x8xf32>, memref<?x8x64xf32>, memref<?x8xf32>
  return
}
