// RUN: attn-translate --attn-to-ptx --chip=sm_80 %s | FileCheck %s
// RUN: attn-translate --attn-to-ptx %s --list-kernels | FileCheck %s --check-prefix=LIST
// RUN: not attn-translate --attn-to-ptx --subgroup-size=8 %s 2>&1 | FileCheck %s --check-prefix=SG

// One PTX module per kernel, each with one .entry named after the kernel,
// for the chip asked for; a kernel's params are five u64 per memref
// argument (reshape_and_cache: key, value, slot_mapping, cache, params), and
// the bf16 cache stays bf16 (16-bit loads and stores, no conversions to i16
// words on the host).
// CHECK: // kernel cache_reshape_and_cache
// CHECK: .target sm_80
// CHECK: .visible .entry cache_reshape_and_cache(
// CHECK: .param .u64 .ptr .align 1 cache_reshape_and_cache_param_0,
// CHECK: .param .u64 cache_reshape_and_cache_param_24
// CHECK-NEXT: )
// The i64 slot is compared unsigned against the cache's slot count before
// it becomes an index, so every negative slot (-2^32 + 5 too) is padding.
// CHECK: or.b64 [[SLOT:%rd[0-9]+]], {{%rd[0-9]+}}, {{%rd[0-9]+}};
// CHECK: setp.ge.u64 {{%p[0-9]+}}, [[SLOT]], {{%rd[0-9]+}};
// CHECK-NOT: .entry
// CHECK: // kernel paged_paged_attention
// CHECK: .target sm_80
// CHECK: .visible .entry paged_paged_attention(
// CHECK: paged_paged_attention_param_39
// CHECK-NEXT: )
// Attention on NVIDIA: four warps per block merging through shared
// memory (4 warps x 1 head x (32 + 1) floats),
// and lanes reading cache rows with 128-bit loads (8 bf16, so a
// row of 32 takes 4 lanes and the dot product 2 butterfly shuffles).
// CHECK: .maxntid 128, 1, 1
// CHECK: .shared .align 4 .b8 __wg_paged_paged_attention_0[528];
// CHECK: ld.global.v4.b32
// CHECK: shfl.sync.bfly.b32 {{.*}}, 2, 31, -1;
// CHECK-NEXT: add.rn.f32
// CHECK-NEXT: shfl.sync.bfly.b32 {{.*}}, 1, 31, -1;
// CHECK: bar.sync 0;
// CHECK: cvt.rn.bf16.f32
// CHECK-NOT: .entry
// The tiled prefill kernel: each tile of 64 keys and values is copied with
// 128-bit loads and stores into shared memory (2 x 64 rows of 64 bytes),
// between barriers, then read back 128 bits at a time.
// CHECK: // kernel paged_paged_attention_prefill
// CHECK: .visible .entry paged_paged_attention_prefill(
// CHECK: .maxntid 128, 1, 1
// CHECK: .shared .align 16 .b8 __wg_paged_paged_attention_prefill_0[8192];
// CHECK: bar.sync 0;
// CHECK: ld.global.v4.b32
// CHECK: st.shared.v4.b32
// CHECK: bar.sync 0;
// CHECK: ld.shared.v4.b32
// CHECK: fma.rn.f32
// CHECK-NOT: .entry

// LIST: cache_reshape_and_cache workgroup=32x1x1 params=[num_tokens,num_blocks]
// LIST: paged_paged_attention workgroup=128x1x1 params=[num_tokens,num_reqs,max_blocks_per_req,num_blocks]
// LIST: paged_paged_attention_prefill workgroup=128x1x1 params=[num_tokens,num_reqs,max_blocks_per_req,num_blocks]

// SG: error: --attn-to-ptx needs --subgroup-size=32 (an NVIDIA warp), got 8

func.func @cache(%k: tensor<?x4x32xbf16>, %v: tensor<?x4x32xbf16>,
                 %c: tensor<?x2x16x4x32xbf16>, %s: tensor<?xi64>)
    -> tensor<?x2x16x4x32xbf16> {
  %r = attn.reshape_and_cache %k, %v, %s outs(%c) layout(nhd)
      : tensor<?x4x32xbf16>, tensor<?x4x32xbf16>, tensor<?xi64>,
        tensor<?x2x16x4x32xbf16> -> tensor<?x2x16x4x32xbf16>
  return %r : tensor<?x2x16x4x32xbf16>
}

func.func @paged(%q: tensor<?x4x32xbf16>, %c: tensor<?x2x16x4x32xbf16>,
                 %qsl: tensor<?xi32>, %lens: tensor<?xi32>,
                 %bt: tensor<?x?xi32>)
    -> (tensor<?x4x32xbf16>, tensor<?x4xf32>) {
  %c0 = arith.constant 0 : index
  %t = tensor.dim %q, %c0 : tensor<?x4x32xbf16>
  %o0 = tensor.empty(%t) : tensor<?x4x32xbf16>
  %l0 = tensor.empty(%t) : tensor<?x4xf32>
  %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens) block_table(%bt)
      : tensor<?xi32>, tensor<?xi32>, tensor<?x?xi32>
  %o, %l = attn.paged_attention %q, %c, %md outs(%o0, %l0) layout(nhd)
      scale(0.5)
      : tensor<?x4x32xbf16>, tensor<?x2x16x4x32xbf16>, tensor<?x4x32xbf16>,
        tensor<?x4xf32> -> tensor<?x4x32xbf16>, tensor<?x4xf32>
  return %o, %l : tensor<?x4x32xbf16>, tensor<?x4xf32>
}
