// REQUIRES: spirv-val
// RUN: rm -rf %t && mkdir -p %t
// RUN: attn-translate --attn-to-spirv --subgroup-size=8 %s -o %t/ --list-kernels | FileCheck %s
// RUN: %spirv-val --target-env vulkan1.1 %t/f32_paged_attention.spv
// RUN: %spirv-val --target-env vulkan1.1 %t/f16_paged_attention.spv
// RUN: %spirv-val --target-env vulkan1.1 %t/bf16_knobs_paged_attention.spv
// RUN: %spirv-val --target-env vulkan1.1 %t/f32_paged_attention_prefill.spv
// RUN: %spirv-val --target-env vulkan1.1 %t/f16_paged_attention_prefill.spv
// RUN: %spirv-val --target-env vulkan1.1 %t/bf16_knobs_paged_attention_prefill.spv
// RUN: attn-translate --attn-to-spirv --subgroup-size=32 --split-kv=4 %s -o %t/split/ --list-kernels | FileCheck %s --check-prefix=SPLIT
// RUN: %spirv-val --target-env vulkan1.1 %t/split/f16_paged_attention_partial.spv
// RUN: %spirv-val --target-env vulkan1.1 %t/split/f16_paged_attention_reduce.spv
// RUN: %spirv-val --target-env vulkan1.1 %t/split/bf16_knobs_paged_attention_partial.spv
// RUN: %spirv-val --target-env vulkan1.1 %t/split/bf16_knobs_paged_attention_reduce.spv
// RUN: %spirv-val --target-env vulkan1.1 %t/split/bf16_knobs_paged_attention_prefill.spv

// One binary per kernel, named after its entry point: each op gets the
// per-token kernel and the tiled prefill kernel. Attention workgroups are
// four subgroups, fewer when their merge buffer would pass 16 KiB: with
// 32-lane subgroups f16 keeps its 8 query heads per kv head of 128
// together, so 4 x 8 x 129 floats would not fit and it takes three; on 8
// lanes the 8 heads' state passes the 128 lane registers, so a workgroup
// takes 4 of them and four subgroups fit.
// CHECK: f32_paged_attention workgroup=32x1x1 params=[num_tokens,num_reqs,max_blocks_per_req,num_blocks]
// CHECK: f32_paged_attention_prefill workgroup=32x1x1 params=[num_tokens,num_reqs,max_blocks_per_req,num_blocks]
// CHECK: f16_paged_attention workgroup=32x1x1
// CHECK: bf16_knobs_paged_attention workgroup=32x1x1

// The reduce merges the decodes' rows only, so it also takes num_reqs.
// SPLIT: f32_paged_attention_partial workgroup=128x1x1 params=[num_tokens,num_reqs,max_blocks_per_req,num_blocks]
// SPLIT: f32_paged_attention_reduce workgroup=32x1x1 params=[num_rows,num_reqs]
// SPLIT: f32_paged_attention_prefill workgroup=128x1x1
// SPLIT: f16_paged_attention_partial workgroup=96x1x1

func.func @f32(%q: tensor<?x4x64xf32>, %c: tensor<?x2x16x2x64xf32>,
               %qsl: tensor<?xi32>, %lens: tensor<?xi32>,
               %bt: tensor<?x?xi32>, %o: tensor<?x4x64xf32>,
               %l: tensor<?x4xf32>) -> (tensor<?x4x64xf32>, tensor<?x4xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      : tensor<?xi32>, tensor<?xi32>, tensor<?x?xi32>
  %out, %lse = attn.paged_attention %q, %c, %md outs(%o, %l) layout(nhd)
      scale(0.125)
      : tensor<?x4x64xf32>, tensor<?x2x16x2x64xf32>, tensor<?x4x64xf32>,
        tensor<?x4xf32> -> tensor<?x4x64xf32>, tensor<?x4xf32>
  return %out, %lse : tensor<?x4x64xf32>, tensor<?x4xf32>
}

func.func @f16(%q: tensor<?x8x128xf16>, %c: tensor<?x2x1x16x128xf16>,
               %qsl: tensor<?xi32>, %lens: tensor<?xi32>,
               %bt: tensor<?x?xi32>, %o: tensor<?x8x128xf16>,
               %l: tensor<?x8xf32>) -> (tensor<?x8x128xf16>, tensor<?x8xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      : tensor<?xi32>, tensor<?xi32>, tensor<?x?xi32>
  %out, %lse = attn.paged_attention %q, %c, %md outs(%o, %l) layout(hnd)
      scale(0.0883883461)
      : tensor<?x8x128xf16>, tensor<?x2x1x16x128xf16>, tensor<?x8x128xf16>,
        tensor<?x8xf32> -> tensor<?x8x128xf16>, tensor<?x8xf32>
  return %out, %lse : tensor<?x8x128xf16>, tensor<?x8xf32>
}

// Every knob at once, bf16 (as i16 words), a head size that does not fill
// the lanes evenly.
func.func @bf16_knobs(%q: tensor<?x4x40xbf16>, %c: tensor<?x2x16x2x40xbf16>,
                      %qsl: tensor<?xi32>, %lens: tensor<?xi32>,
                      %bt: tensor<?x?xi32>, %alibi: tensor<4xf32>,
                      %sinks: tensor<4xf32>, %o: tensor<?x4x40xbf16>,
                      %l: tensor<?x4xf32>)
    -> (tensor<?x4x40xbf16>, tensor<?x4xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      {causal = false} : tensor<?xi32>, tensor<?xi32>, tensor<?x?xi32>
  %out, %lse = attn.paged_attention %q, %c, %md alibi(%alibi : tensor<4xf32>)
      sinks(%sinks : tensor<4xf32>) outs(%o, %l) layout(nhd) scale(0.158)
      window_left(64) window_right(8) soft_cap(50.0)
      : tensor<?x4x40xbf16>, tensor<?x2x16x2x40xbf16>, tensor<?x4x40xbf16>,
        tensor<?x4xf32> -> tensor<?x4x40xbf16>, tensor<?x4xf32>
  return %out, %lse : tensor<?x4x40xbf16>, tensor<?x4xf32>
}
