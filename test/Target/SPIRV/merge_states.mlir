// REQUIRES: spirv-val
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-translate --attn-to-spirv --subgroup-size=8 %s -o %t/ --list-kernels | FileCheck %s
// RUN: %spirv-val --target-env vulkan1.1 %t/f32_merge_states.spv
// RUN: %spirv-val --target-env vulkan1.1 %t/f16_merge_states.spv
// RUN: %spirv-val --target-env vulkan1.1 %t/bf16_merge_states.spv

// CHECK: f32_merge_states workgroup=8x1x1 params=[num_tokens]
// CHECK: f16_merge_states
// CHECK: bf16_merge_states

func.func @f32(%oa: tensor<?x32x128xf32>, %la: tensor<?x32xf32>,
               %ob: tensor<?x32x128xf32>, %lb: tensor<?x32xf32>,
               %o: tensor<?x32x128xf32>, %l: tensor<?x32xf32>)
    -> (tensor<?x32x128xf32>, tensor<?x32xf32>) {
  %r:2 = attn.merge_states %oa, %la, %ob, %lb outs(%o, %l)
      : tensor<?x32x128xf32>, tensor<?x32xf32>, tensor<?x32x128xf32>,
        tensor<?x32xf32>, tensor<?x32x128xf32>, tensor<?x32xf32>
      -> tensor<?x32x128xf32>, tensor<?x32xf32>
  return %r#0, %r#1 : tensor<?x32x128xf32>, tensor<?x32xf32>
}

func.func @f16(%oa: tensor<?x32x128xf16>, %la: tensor<?x32xf32>,
               %ob: tensor<?x32x128xf16>, %lb: tensor<?x32xf32>,
               %o: tensor<?x32x128xf16>, %l: tensor<?x32xf32>)
    -> (tensor<?x32x128xf16>, tensor<?x32xf32>) {
  %r:2 = attn.merge_states %oa, %la, %ob, %lb outs(%o, %l)
      : tensor<?x32x128xf16>, tensor<?x32xf32>, tensor<?x32x128xf16>,
        tensor<?x32xf32>, tensor<?x32x128xf16>, tensor<?x32xf32>
      -> tensor<?x32x128xf16>, tensor<?x32xf32>
  return %r#0, %r#1 : tensor<?x32x128xf16>, tensor<?x32xf32>
}

func.func @bf16(%oa: tensor<?x32x128xbf16>, %la: tensor<?x32xf32>,
                %ob: tensor<?x32x128xbf16>, %lb: tensor<?x32xf32>,
                %o: tensor<?x32x128xbf16>, %l: tensor<?x32xf32>)
    -> (tensor<?x32x128xbf16>, tensor<?x32xf32>) {
  %r:2 = attn.merge_states %oa, %la, %ob, %lb outs(%o, %l)
      : tensor<?x32x128xbf16>, tensor<?x32xf32>, tensor<?x32x128xbf16>,
        tensor<?x32xf32>, tensor<?x32x128xbf16>, tensor<?x32xf32>
      -> tensor<?x32x128xbf16>, tensor<?x32xf32>
  return %r#0, %r#1 : tensor<?x32x128xbf16>, tensor<?x32xf32>
}
