// REQUIRES: spirv-val
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-translate --attn-to-spirv --subgroup-size=32 %s -o %t/ --list-kernels | FileCheck %s
// RUN: %spirv-val --target-env vulkan1.1 %t/f16_mla_decode_partial.spv
// RUN: %spirv-val --target-env vulkan1.1 %t/f16_mla_decode_reduce.spv
// RUN: %spirv-val --target-env vulkan1.1 %t/bf16_mla_decode.spv
// RUN: %spirv-val --target-env vulkan1.1 %t/f32_mla_decode_partial.spv

// CHECK: f16_mla_decode_partial workgroup=32x1x1 params=[num_reqs,max_blocks_per_req,num_blocks]
// CHECK: f16_mla_decode_reduce workgroup=32x1x1 params=[num_rows]
// CHECK: bf16_mla_decode workgroup=32x1x1
// CHECK: f32_mla_decode_partial

func.func @f16(%q: tensor<?x16x576xf16>, %c: tensor<?x64x576xf16>,
               %bt: tensor<?x?xi32>, %lens: tensor<?xi32>,
               %o: tensor<?x16x512xf16>, %l: tensor<?x16xf32>)
    -> (tensor<?x16x512xf16>, tensor<?x16xf32>) {
  %r:2 = attn.mla_decode %q, %c, %bt, %lens outs(%o, %l) kv_lora_rank(512)
      scale(0.1352337) num_kv_splits(4)
      : tensor<?x16x576xf16>, tensor<?x64x576xf16>, tensor<?x?xi32>,
        tensor<?xi32>, tensor<?x16x512xf16>, tensor<?x16xf32>
      -> tensor<?x16x512xf16>, tensor<?x16xf32>
  return %r#0, %r#1 : tensor<?x16x512xf16>, tensor<?x16xf32>
}

func.func @bf16(%q: tensor<?x16x576xbf16>, %c: tensor<?x64x576xbf16>,
                %bt: tensor<?x?xi32>, %lens: tensor<?xi32>,
                %o: tensor<?x16x512xbf16>, %l: tensor<?x16xf32>)
    -> (tensor<?x16x512xbf16>, tensor<?x16xf32>) {
  %r:2 = attn.mla_decode %q, %c, %bt, %lens outs(%o, %l) kv_lora_rank(512)
      scale(0.1352337)
      : tensor<?x16x576xbf16>, tensor<?x64x576xbf16>, tensor<?x?xi32>,
        tensor<?xi32>, tensor<?x16x512xbf16>, tensor<?x16xf32>
      -> tensor<?x16x512xbf16>, tensor<?x16xf32>
  return %r#0, %r#1 : tensor<?x16x512xbf16>, tensor<?x16xf32>
}

func.func @f32(%q: tensor<?x8x96xf32>, %c: tensor<?x16x96xf32>,
               %bt: tensor<?x?xi32>, %lens: tensor<?xi32>,
               %o: tensor<?x8x80xf32>, %l: tensor<?x8xf32>)
    -> (tensor<?x8x80xf32>, tensor<?x8xf32>) {
  %r:2 = attn.mla_decode %q, %c, %bt, %lens outs(%o, %l) kv_lora_rank(80)
      scale(0.1) num_kv_splits(2)
      : tensor<?x8x96xf32>, tensor<?x16x96xf32>, tensor<?x?xi32>,
        tensor<?xi32>, tensor<?x8x80xf32>, tensor<?x8xf32>
      -> tensor<?x8x80xf32>, tensor<?x8xf32>
  return %r#0, %r#1 : tensor<?x8x80xf32>, tensor<?x8xf32>
}
