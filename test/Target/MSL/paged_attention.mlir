// RUN: attn-translate --attn-to-msl %s | FileCheck %s
// RUN: attn-translate --attn-to-msl --split-kv=2 %s | FileCheck %s --check-prefix=SPLIT
// RUN: attn-translate --attn-to-msl --vector-load-bytes=0 --vector-width=8 --attention-subgroups=1 %s | FileCheck %s --check-prefix=ROWS

// Argument i of the kernel ABI is [[buffer(i)]]: query, cache,
// query_start_loc, seq_lens, block_table, out, lse, then the i32 params.
// One workgroup is four SIMD-groups of 32 threads that share the keys; a
// row of 64 is spread over 8 lanes (16 bytes each, read element by element:
// SPIRVToMSL takes no aliased bindings), so the dot products are shuffles
// (MSL 2.0), and the SIMD-groups merge their results in threadgroup memory
// after a barrier. The tiled prefill kernel stages key and value tiles in
// threadgroup memory between barriers.
// CHECK-LABEL: // kernel f32_paged_attention launch {"bounds":{{.*}},"buffer_indices":[0,1,2,3,4,5,6,7],"entry_point":"f32_paged_attention","msl_version":"2.0","subgroup_size":32,"workgroup_size":[128,1,1]}
// CHECK: #include <metal_stdlib>
// CHECK: kernel void f32_paged_attention(device [[F32:.*]]& {{.*}} {{\[\[}}buffer(0)]], device [[F32]]& {{.*}} {{\[\[}}buffer(1)]], device [[I32:.*]]& {{.*}} {{\[\[}}buffer(2)]], device [[I32]]& {{.*}} {{\[\[}}buffer(3)]], device [[I32]]& {{.*}} {{\[\[}}buffer(4)]], device [[F32]]& {{.*}} {{\[\[}}buffer(5)]], device [[F32]]& {{.*}} {{\[\[}}buffer(6)]], device [[I32]]& {{.*}} {{\[\[}}buffer(7)]], uint3 {{.*}} {{\[\[}}thread_position_in_threadgroup]], uint {{.*}} {{\[\[}}simdgroup_index_in_threadgroup]], uint {{.*}} {{\[\[}}thread_index_in_simdgroup]], uint3 {{.*}} {{\[\[}}threadgroup_position_in_grid]])
// CHECK: threadgroup _{{[0-9]+}} _workgroup_mem_0;
// CHECK: spvSubgroupShuffleXor({{.*}}, 4u)
// CHECK: exp2(
// CHECK: threadgroup_barrier(mem_flags::mem_threadgroup);
// CHECK-LABEL: // kernel f32_paged_attention_prefill launch {"bounds":{{.*}},"buffer_indices":[0,1,2,3,4,5,6,7],"entry_point":"f32_paged_attention_prefill",
// CHECK: threadgroup _{{[0-9]+}} _workgroup_mem_0;
// CHECK: threadgroup_barrier(mem_flags::mem_threadgroup);
// CHECK: _workgroup_mem_0._m0[
// CHECK: threadgroup_barrier(mem_flags::mem_threadgroup);

// f16 buffers are `half`; the math stays f32.
// CHECK-LABEL: // kernel f16_hnd_paged_attention launch {"bounds":{{.*}},"buffer_indices":[0,1,2,3,4,5,6,7],"entry_point":"f16_hnd_paged_attention","msl_version":"2.0","subgroup_size":32,"workgroup_size":[128,1,1]}
// CHECK: half _m0[1];
// CHECK: kernel void f16_hnd_paged_attention(
// CHECK: spvSubgroupShuffleXor(

// bf16 buffers are 16-bit words widened with a shift: no bfloat type.
// Every knob: ALiBi slopes and sinks are two more f32 buffers.
// CHECK-LABEL: // kernel bf16_knobs_paged_attention launch {"bounds":{{.*}},"buffer_indices":[0,1,2,3,4,5,6,7,8,9],"entry_point":"bf16_knobs_paged_attention","msl_version":"2.0","subgroup_size":32,"workgroup_size":[128,1,1]}
// CHECK: ushort _m0[1];
// CHECK: kernel void bf16_knobs_paged_attention(
// CHECK-SAME: {{\[\[}}buffer(9)]]
// CHECK: as_type<float>(uint({{.*}}) << 16u)
// The soft cap's tanh is computed from exp2 (KernelBuilder::tanhF32).
// CHECK: abs(
// CHECK: exp2(

// Split-KV: the partial kernel writes f32 partials, the reduce kernel
// merges the decodes' rows (so it also reads query_start_loc, buffer 5).
// SPLIT-LABEL: // kernel f32_paged_attention_partial launch {"bounds":{{.*}},"buffer_indices":[0,1,2,3,4,5,6,7],"entry_point":"f32_paged_attention_partial","msl_version":"2.0","subgroup_size":32,"workgroup_size":[128,1,1]}
// SPLIT: kernel void f32_paged_attention_partial(
// SPLIT-LABEL: // kernel f32_paged_attention_reduce launch {"bounds":{{.*}},"buffer_indices":[0,1,2,3,4,5],"entry_point":"f32_paged_attention_reduce"
// SPLIT: kernel void f32_paged_attention_reduce(
// SPLIT: // kernel f16_hnd_paged_attention_partial
// SPLIT: // kernel f16_hnd_paged_attention_reduce
// SPLIT: // kernel bf16_knobs_paged_attention_partial
// SPLIT: // kernel bf16_knobs_paged_attention_reduce

// Lanes owning 8 contiguous elements: a row of 64 takes 8 lanes, so a
// SIMD-group holds 4 rows; dot products sum over 8 lanes with shuffles,
// and the 4 rows' states merge with shuffles 8 and 16 lanes apart. One
// SIMD-group per workgroup: no threadgroup memory.
// ROWS-LABEL: // kernel f32_paged_attention launch {{.*}}"workgroup_size":[32,1,1]}
// ROWS-NOT: threadgroup _
// ROWS: spvSubgroupShuffleXor({{.*}}, 4u)
// ROWS-NEXT: spvSubgroupShuffleXor({{.*}}, 2u)
// ROWS-NEXT: spvSubgroupShuffleXor({{.*}}, 1u)
// ROWS: spvSubgroupShuffleXor({{.*}}, 8u)
// ROWS: spvSubgroupShuffleXor({{.*}}, 16u)
// ROWS-NOT: threadgroup_barrier
// ROWS: // kernel f32_paged_attention_prefill

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

func.func @f16_hnd(%q: tensor<?x8x128xf16>, %c: tensor<?x2x2x16x128xf16>,
                   %qsl: tensor<?xi32>, %lens: tensor<?xi32>,
                   %bt: tensor<?x?xi32>, %o: tensor<?x8x128xf16>,
                   %l: tensor<?x8xf32>)
    -> (tensor<?x8x128xf16>, tensor<?x8xf32>) {
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      : tensor<?xi32>, tensor<?xi32>, tensor<?x?xi32>
  %out, %lse = attn.paged_attention %q, %c, %md outs(%o, %l) layout(hnd)
      scale(0.0883883461)
      : tensor<?x8x128xf16>, tensor<?x2x2x16x128xf16>, tensor<?x8x128xf16>,
        tensor<?x8xf32> -> tensor<?x8x128xf16>, tensor<?x8xf32>
  return %out, %lse : tensor<?x8x128xf16>, tensor<?x8xf32>
}

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
