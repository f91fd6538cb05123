// RUN: attn-translate --attn-to-msl %s | FileCheck %s

// Split-KV latent attention: a partial kernel with SIMD-group reductions,
// then a reduce kernel without.
// CHECK-LABEL: // kernel bf16_mla_decode_partial launch {"bounds":{{.*}},"buffer_indices":[0,1,2,3,4,5,6],"entry_point":"bf16_mla_decode_partial","msl_version":"2.1","subgroup_size":32,"workgroup_size":[32,1,1]}
// CHECK: kernel void bf16_mla_decode_partial(
// CHECK: simd_sum(
// CHECK-LABEL: // kernel bf16_mla_decode_reduce launch
// CHECK-SAME: "entry_point":"bf16_mla_decode_reduce"
// CHECK: kernel void bf16_mla_decode_reduce(

// One split: one kernel writes out and lse directly.
// CHECK-LABEL: // kernel f32_mla_decode launch {"bounds":{{.*}},"buffer_indices":[0,1,2,3,4,5,6],"entry_point":"f32_mla_decode","msl_version":"2.1"
// CHECK: kernel void f32_mla_decode(

func.func @bf16(%q: tensor<?x16x576xbf16>, %c: tensor<?x64x576xbf16>,
                %bt: tensor<?x?xi32>, %lens: tensor<?xi32>,
                %o: tensor<?x16x512xbf16>, %l: tensor<?x16xf32>)
    -> (tensor<?x16x512xbf16>, tensor<?x16xf32>) {
  %r:2 = attn.mla_decode %q, %c, %bt, %lens outs(%o, %l) kv_lora_rank(512)
      scale(0.1352337) num_kv_splits(4)
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
      scale(0.1)
      : tensor<?x8x96xf32>, tensor<?x16x96xf32>, tensor<?x?xi32>,
        tensor<?xi32>, tensor<?x8x80xf32>, tensor<?x8xf32>
      -> tensor<?x8x80xf32>, tensor<?x8xf32>
  return %r#0, %r#1 : tensor<?x8x80xf32>, tensor<?x8xf32>
}
