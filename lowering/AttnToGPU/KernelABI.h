//===- KernelABI.h - How attn's GPU kernels take their arguments -*- C++ -*-===//
//
// The contract between convert-attn-to-gpu and the runtimes that launch its
// kernels (Vulkan, CUDA, Metal). Plain C++, no MLIR, so runtime code may
// include it.
//
// Arguments. Every kernel argument is a 1-D buffer (`memref<?xT>`): the
// host flattens each operand in row-major order, and the kernel computes
// indices from the shapes. The arguments follow the op's operands in order,
// with `!attn.metadata` expanded to query_start_loc, seq_lens, block_table
// (slot_mapping is not passed to attention kernels), optional operands only
// when present, and the destinations last; then ONE params buffer of i32.
// Builders add each argument under its role (HostLaunch::addBuffer with an
// `Arg`, KernelBuilder.h) and kernel bodies read them by role (KernelArgs),
// so this order is written once per kernel, where its launch is built.
// On SPIR-V, argument i is the storage buffer at set 0, binding i. With
// bf16-as-i16, bf16 buffers are declared as i16 words (same bytes). An fp8
// cache is i8 bytes on every target; its k_scale / v_scale (f32 [1] or [G])
// follow the sinks, as in the op. On CUDA
// (PTX, lowering/GPUToPTX/), bf16 stays bf16 and argument i is the five
// `.param .u64` values 5i .. 5i+4 of upstream's memref descriptor
// (allocated pointer, aligned pointer, offset, size, stride); the runtime
// passes (p, p, 0, elements, 1), see devices/cuda/CudaKernelABI.h.
//
// Params. Dynamic sizes the kernel needs, one i32 each, in the order of the
// enums below. Each kernel also names them in its `attn.params` string-array
// attribute, which is authoritative for tools that serialize the launch.
// Static sizes (heads, head size, block size, splits) are baked into the
// kernel.
//
// Kernels and grids (workgroup = `known_block_size` of the gpu.func):
//  - paged_attention (`*_paged_attention`): grid (T, G * H / (G * Hw), 1),
//    one workgroup per query token and Hw of the H/G query heads of a kv
//    head (all of them unless the lanes' register budget is short);
//    workgroup = W subgroups (attention-subgroups, fewer when the merge
//    buffer would pass max-workgroup-memory), so the runtime must run the
//    kernel with the subgroup size it was built for and full subgroups.
//    With vector-load-bytes (PTX: 16), lanes read the query and cache with
//    aligned vector loads: the buffers must start at a 16-byte boundary, as
//    cuMemAlloc's do. With split-KV: `*_paged_attention_partial`,
//    grid (T, G, S), writing f32 partial out [S, T, H, D] and lse [S, T, H]
//    to host-allocated buffers, then `*_paged_attention_reduce`, grid (T, H).
//    With the tiled prefill kernel these take only the tokens of requests
//    with at most the decode threshold of query tokens (the reduce then also
//    gets query_start_loc, after lse); their other workgroups return.
//  - paged_attention prefill (`*_paged_attention_prefill`): grid
//    (ceil(T / Bq) + R, G * H / (G * Hq), 1), a tile of Bq query tokens of
//    one request and Hq query heads of one kv head per workgroup (the tile
//    sizes are in the kernel's `attn.tile` attribute: Bq, Hq, Bc, L, R, U),
//    for the requests longer than the decode threshold; same arguments as
//    `*_paged_attention` with sinks always, never split.
//  - reshape_and_cache: grid (T, G), one workgroup per token and kv head.
//  - merge_states: grid (T, H).
//  - mla_decode: `*_mla_decode_partial`, grid (R, ceil(H /
//    heads_per_workgroup), S) then `*_mla_decode_reduce`, grid (R, H); with
//    one split only the first, writing out and lse directly (grid (R,
//    ceil(H / heads_per_workgroup), 1)). The GPU kernels' tile divides H;
//    the cpu target's (row-vectors) need not, and its last tile's heads
//    past H write nothing.
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_LOWERING_ATTNTOGPU_KERNELABI_H
#define ATTN_LOWERING_ATTNTOGPU_KERNELABI_H

namespace attn::abi {

/// Params of paged_attention kernels (full and partial).
enum PagedAttentionParam {
  kPagedNumTokens = 0,       ///< T, query dim 0 (== query_start_loc[R])
  kPagedNumReqs = 1,         ///< R, seq_lens dim 0
  kPagedMaxBlocksPerReq = 2, ///< M, block_table dim 1
  kPagedNumBlocks = 3,       ///< kv_cache dim 0
  kPagedNumParams = 4,
};

/// Params of reshape_and_cache.
enum ReshapeAndCacheParam {
  kCacheNumTokens = 0, ///< T, key dim 0
  kCacheNumBlocks = 1, ///< kv_cache dim 0
  kCacheNumParams = 2,
};

/// Params of merge_states and of the split-KV reduce kernels. The reduce of
/// paged_attention beside a tiled prefill kernel also takes num_reqs.
enum MergeParam {
  kMergeNumTokens = 0, ///< rows: T for attention, R for MLA
  kMergeNumParams = 1,
  /// R, seq_lens dim 0: the reduce of paged_attention with prefill only.
  kMergeNumReqs = 1,
};

/// Params of mla_decode partial kernels.
enum MlaDecodeParam {
  kMlaNumReqs = 0,         ///< R, q dim 0
  kMlaMaxBlocksPerReq = 1, ///< M, block_table dim 1
  kMlaNumBlocks = 2,       ///< kv_cache dim 0
  kMlaNumParams = 3,
};

} // namespace attn::abi

#endif // ATTN_LOWERING_ATTNTOGPU_KERNELABI_H
