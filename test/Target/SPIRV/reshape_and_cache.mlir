// REQUIRES: spirv-val
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-translate --attn-to-spirv --subgroup-size=8 --workgroup-size=64 %s -o %t/ --list-kernels | FileCheck %s
// RUN: %spirv-val --target-env vulkan1.1 %t/f32_reshape_and_cache.spv
// RUN: %spirv-val --target-env vulkan1.1 %t/f16_reshape_and_cache.spv
// RUN: %spirv-val --target-env vulkan1.1 %t/bf16_reshape_and_cache.spv

// CHECK: f32_reshape_and_cache workgroup=64x1x1 params=[num_tokens,num_blocks]
// CHECK: f16_reshape_and_cache workgroup=64x1x1
// CHECK: bf16_reshape_and_cache workgroup=64x1x1

func.func @f32(%k: tensor<?x8x128xf32>, %v: tensor<?x8x128xf32>,
               %s: tensor<?xi64>, %c: tensor<?x2x16x8x128xf32>)
    -> tensor<?x2x16x8x128xf32> {
  %n = attn.reshape_and_cache %k, %v, %s outs(%c) layout(nhd)
      : tensor<?x8x128xf32>, tensor<?x8x128xf32>, tensor<?xi64>,
        tensor<?x2x16x8x128xf32> -> tensor<?x2x16x8x128xf32>
  return %n : tensor<?x2x16x8x128xf32>
}

func.func @f16(%k: tensor<?x8x128xf16>, %v: tensor<?x8x128xf16>,
               %s: tensor<?xi64>, %c: tensor<?x2x8x16x128xf16>)
    -> tensor<?x2x8x16x128xf16> {
  %n = attn.reshape_and_cache %k, %v, %s outs(%c) layout(hnd)
      : tensor<?x8x128xf16>, tensor<?x8x128xf16>, tensor<?xi64>,
        tensor<?x2x8x16x128xf16> -> tensor<?x2x8x16x128xf16>
  return %n : tensor<?x2x8x16x128xf16>
}

func.func @bf16(%k: tensor<?x8x128xbf16>, %v: tensor<?x8x128xbf16>,
                %s: tensor<?xi64>, %c: tensor<?x2x16x8x128xbf16>)
    -> tensor<?x2x16x8x128xbf16> {
  %n = attn.reshape_and_cache %k, %v, %s outs(%c) layout(nhd)
      : tensor<?x8x128xbf16>, tensor<?x8x128xbf16>, tensor<?xi64>,
        tensor<?x2x16x8x128xbf16> -> tensor<?x2x16x8x128xbf16>
  return %n : tensor<?x2x16x8x128xbf16>
}
