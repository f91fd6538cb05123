//===- AttnOps.td - attn operations ------------------------*- tablegen -*-===//

#ifndef ATTN_OPS_TD
#define ATTN_OPS_TD

include "dialect/AttnAttrs.td"
include "mlir/Interfaces/DestinationStyleOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// Operands are ranked tensors before bufferization and memrefs after it.
def Attn_Shaped : AnyTypeOf<[AnyRankedTensor, AnyMemRef],
                            "ranked tensor or memref">;

// Ops in destination-passing style: one result per `outs` operand on tensors,
// none on memrefs. On memrefs they read their inputs and write their
// destinations; an op that updates its destinations in place (`readsInits`)
// reads them as well.
class Attn_DpsOp<string mnemonic, list<Trait> traits = [], bit readsInits = 0>
    : Attn_Op<mnemonic, !listconcat(traits, [
        DestinationStyleOpInterface,
        DeclareOpInterfaceMethods<MemoryEffectsOpInterface>])> {
  let hasVerifier = 1;
  let extraClassDefinition = [{
    void $cppClass::getEffects(
        ::llvm::SmallVectorImpl<::mlir::SideEffects::EffectInstance<
            ::mlir::MemoryEffects::Effect>> &effects) {
      addDpsEffects(getOperation(), *this, }] #
      !if(readsInits, "true", "false") # [{, effects);
    }
  }];
}

//===----------------------------------------------------------------------===//
// attn.metadata
//===----------------------------------------------------------------------===//

def Attn_MetadataOp : Attn_Op<"metadata", [Pure]> {
  let summary = "Bundles the batch metadata of one serving step";
  let description = [{
    Groups the per-step tensors of vLLM v1's `CommonAttentionMetadata` into
    one `!attn.metadata` value, which attention ops read.

    - `query_start_loc`: [R + 1] i32, start of each request's query tokens;
    - `seq_lens`: [R] i32, tokens of each request including the new ones;
    - `block_table`: [R, max_blocks_per_req] i32, the cache blocks of each
      request in order;
    - `slot_mapping` (optional): [T] i64, the cache slot of each new token;
    - `causal` (default true).

    For request r, q_len = query_start_loc[r+1] - query_start_loc[r] and the
    first seq_lens[r] - q_len tokens are already cached. The dynamic rules
    (query_start_loc starts at 0 and never decreases, seq_len >= q_len,
    block-table entries inside the cache) are checked when the op runs.

    Example:

    ```mlir
    %md = attn.metadata query_start_loc(%qsl) seq_lens(%lens)
        block_table(%bt) : tensor<?xi32>, tensor<?xi32>, tensor<?x?xi32>
    ```
  }];
  let arguments = (ins
    Attn_Shaped:$query_start_loc,
    Attn_Shaped:$seq_lens,
    Attn_Shaped:$block_table,
    Optional<Attn_Shaped>:$slot_mapping,
    DefaultValuedAttr<BoolAttr, "true">:$causal
  );
  let results = (outs Attn_MetadataType:$result);
  let assemblyFormat = [{
    `query_start_loc` `(` $query_start_loc `)` `seq_lens` `(` $seq_lens `)`
    `block_table` `(` $block_table `)`
    (`slot_mapping` `(` $slot_mapping^ `:` type($slot_mapping) `)`)?
    attr-dict `:` type($query_start_loc) `,` type($seq_lens) `,`
    type($block_table)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// attn.paged_attention
//===----------------------------------------------------------------------===//

def Attn_PagedAttentionOp : Attn_DpsOp<"paged_attention",
    [AttrSizedOperandSegments]> {
  let summary = "Attention of a varlen batch over a paged KV cache";
  let description = [{
    Computes attention for every query token of a batch that mixes decodes,
    prefills and chunked prefills, reading keys and values through the block
    table of `metadata`.

    Shapes (T tokens, H query heads, G kv heads, D head size, B block size):
    `query` [T, H, D]; `kv_cache` [num_blocks, 2, B, G, D] with layout `nhd`
    or [num_blocks, 2, G, B, D] with layout `hnd`; `out` [T, H, D] of the
    query's element type; `lse` [T, H] f32, the natural-log sum of exp of the
    visible scores.

    Query token i of request r sits at position p = context + i; query head
    h reads kv head h / (H / G). Key j is visible when it is causal-visible
    (j <= p, when `causal`), inside `window_left` (j >= p - window_left, when
    window_left >= 0) and, for non-causal attention, inside `window_right`
    (j <= p + window_right, when window_right >= 0). The score is
    scale * <q, k_j>, then soft_cap * tanh(s / soft_cap) when soft_cap > 0,
    then minus alibi_slopes[h] * |j - p| with ALiBi (FlashAttention-2's
    order). With `sinks`, head h adds
    exp(sinks[h]) to the softmax denominator only. A token with no visible
    key gets out = 0 and lse = -inf (sinks[h] with sinks).

    The cache's element type is the query's, or fp8 (f8E4M3FN, f8E5M2) with
    `k_scale` and `v_scale`: f32 [1] (per layer) or [G] (per kv head). Key j
    is then k_scale * the cached key, value j v_scale * the cached value.

    Example (Llama-3-8B, bf16):

    ```mlir
    %out, %lse = attn.paged_attention %q, %cache, %md
        outs(%o, %l) layout(nhd) scale(0.0883883461)
        : tensor<?x32x128xbf16>, tensor<?x2x16x8x128xbf16>,
          tensor<?x32x128xbf16>, tensor<?x32xf32>
        -> tensor<?x32x128xbf16>, tensor<?x32xf32>
    ```

    With an fp8 cache, after `sinks`:
    `k_scale(%ks : tensor<1xf32>) v_scale(%vs : tensor<1xf32>)`.
  }];
  let arguments = (ins
    Attn_Shaped:$query,
    Attn_Shaped:$kv_cache,
    Attn_MetadataType:$metadata,
    Optional<Attn_Shaped>:$alibi_slopes,
    Optional<Attn_Shaped>:$sinks,
    Attn_Shaped:$out_init,
    Attn_Shaped:$lse_init,
    Optional<Attn_Shaped>:$k_scale,
    Optional<Attn_Shaped>:$v_scale,
    Attn_KVLayoutAttr:$layout,
    F32Attr:$scale,
    DefaultValuedAttr<I64Attr, "-1">:$window_left,
    DefaultValuedAttr<I64Attr, "-1">:$window_right,
    DefaultValuedAttr<F32Attr, "0.0f">:$soft_cap,
    OptionalAttr<Attn_BackendAttr>:$backend
  );
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $query `,` $kv_cache `,` $metadata
    (`alibi` `(` $alibi_slopes^ `:` type($alibi_slopes) `)`)?
    (`sinks` `(` $sinks^ `:` type($sinks) `)`)?
    (`k_scale` `(` $k_scale^ `:` type($k_scale) `)`)?
    (`v_scale` `(` $v_scale^ `:` type($v_scale) `)`)?
    `outs` `(` $out_init `,` $lse_init `)`
    `layout` `(` custom<Layout>($layout) `)` `scale` `(` $scale `)`
    (`window_left` `(` $window_left^ `)`)?
    (`window_right` `(` $window_right^ `)`)?
    (`soft_cap` `(` $soft_cap^ `)`)?
    (`backend` `(` $backend^ `)`)?
    attr-dict `:` type($query) `,` type($kv_cache) `,` type($out_init) `,`
    type($lse_init) (`->` type($results)^)?
  }];
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable();
    /// The window bounds as signed values (-1: unbounded).
    int64_t getWindowLeftValue() { return getWindowLeftAttr().getInt(); }
    int64_t getWindowRightValue() { return getWindowRightAttr().getInt(); }
  }];
}

//===----------------------------------------------------------------------===//
// attn.reshape_and_cache
//===----------------------------------------------------------------------===//

// Slots the batch does not write keep their contents: the cache is updated in
// place, so it is read as well as written.
def Attn_ReshapeAndCacheOp : Attn_DpsOp<"reshape_and_cache",
    [AttrSizedOperandSegments], /*readsInits=*/1> {
  let summary = "Writes new keys and values into a paged KV cache";
  let description = [{
    For every token t whose `slot_mapping[t]` is >= 0, writes key[t] and
    value[t] into block slot / B at offset slot % B of `kv_cache`. A negative
    slot marks a padding token and is skipped. The cache is the destination:
    on tensors the op returns the updated cache, on memrefs it writes in
    place.

    The rank of `kv_cache` selects one of two forms:

    - paged (rank 5): `key`, `value` [T, G, D]; `kv_cache` as for
      `attn.paged_attention`, laid out as `layout` says (required);
    - MLA latent cache (rank 3, vLLM's `concat_and_cache_mla`): `key` is the
      compressed latent kv_c [T, L], `value` the rotary key part k_pe [T, P],
      `kv_cache` [num_blocks, B, L + P] with one head; the row at the slot
      becomes concat(key[t], value[t]). The row has no layout, so `layout`
      must be absent; a backend, if given, must be an MLA backend.

    `slot_mapping` is [T] i64 in both forms.

    An fp8 cache (f8E4M3FN, f8E5M2; key and value stay f32, f16 or bf16)
    stores fp8(f32(x) / scale): the quotient divided in f32, then rounded to
    nearest even and saturated to the largest finite value, as vLLM writes
    it; keys by `k_scale`, values by `v_scale` (f32 [1] or [G]); the MLA
    form has one scale, `k_scale` [1], and no `v_scale`.

    Examples:

    ```mlir
    %new = attn.reshape_and_cache %k, %v, %slots outs(%cache) layout(nhd)
        : tensor<?x8x128xbf16>, tensor<?x8x128xbf16>, tensor<?xi64>,
          tensor<?x2x16x8x128xbf16> -> tensor<?x2x16x8x128xbf16>
    %latent = attn.reshape_and_cache %kv_c, %k_pe, %slots outs(%mla_cache)
        : tensor<?x512xbf16>, tensor<?x64xbf16>, tensor<?xi64>,
          tensor<?x64x576xbf16> -> tensor<?x64x576xbf16>
    ```
  }];
  let arguments = (ins
    Attn_Shaped:$key,
    Attn_Shaped:$value,
    Attn_Shaped:$slot_mapping,
    Attn_Shaped:$kv_cache,
    Optional<Attn_Shaped>:$k_scale,
    Optional<Attn_Shaped>:$v_scale,
    OptionalAttr<Attn_KVLayoutAttr>:$layout,
    OptionalAttr<Attn_BackendAttr>:$backend
  );
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $key `,` $value `,` $slot_mapping
    (`k_scale` `(` $k_scale^ `:` type($k_scale) `)`)?
    (`v_scale` `(` $v_scale^ `:` type($v_scale) `)`)?
    `outs` `(` $kv_cache `)`
    (`layout` `(` custom<Layout>($layout)^ `)`)?
    (`backend` `(` $backend^ `)`)?
    attr-dict `:` type($key) `,` type($value) `,` type($slot_mapping) `,`
    type($kv_cache) (`->` type($results)^)?
  }];
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable() {
      return getKvCacheMutable();
    }
    /// Whether this is the MLA form: a rank-3 latent cache.
    bool isLatentCache() {
      return ::llvm::cast<::mlir::ShapedType>(getKvCache().getType())
                 .getRank() == 3;
    }
  }];
}

//===----------------------------------------------------------------------===//
// attn.mla_decode
//===----------------------------------------------------------------------===//

def Attn_MlaDecodeOp : Attn_DpsOp<"mla_decode"> {
  let summary = "Multi-head latent attention decode over a paged latent cache";
  let description = [{
    One query token per request attends to the request's cached latent rows.
    A cache row holds the compressed kv latent (the first `kv_lora_rank` = L
    values) followed by the rotary part (P values), for a single kv head.
    The score uses all L + P dimensions; the value is the first L dimensions
    of the same row.

    Shapes: `q` [R, H, L + P]; `kv_cache` [num_blocks, B, L + P];
    `block_table` [R, max_blocks_per_req] i32; `seq_lens` [R] i32; `out`
    [R, H, L] of q's element type; `lse` [R, H] f32.

    `num_kv_splits` only schedules the work (split-KV decode followed by a
    merge); the result does not depend on it beyond rounding.

    The cache's element type is q's, or fp8 (f8E4M3FN, f8E5M2) with
    `k_scale` (f32 [1]): a row is then k_scale * the cached row.

    Example (DeepSeek-V3):

    ```mlir
    %out, %lse = attn.mla_decode %q, %cache, %bt, %lens outs(%o, %l)
        kv_lora_rank(512) scale(0.1352337) num_kv_splits(4)
        : tensor<?x128x576xbf16>, tensor<?x64x576xbf16>, tensor<?x?xi32>,
          tensor<?xi32>, tensor<?x128x512xbf16>, tensor<?x128xf32>
        -> tensor<?x128x512xbf16>, tensor<?x128xf32>
    ```
  }];
  let arguments = (ins
    Attn_Shaped:$q,
    Attn_Shaped:$kv_cache,
    Attn_Shaped:$block_table,
    Attn_Shaped:$seq_lens,
    Attn_Shaped:$out_init,
    Attn_Shaped:$lse_init,
    Optional<Attn_Shaped>:$k_scale,
    I64Attr:$kv_lora_rank,
    F32Attr:$scale,
    DefaultValuedAttr<I64Attr, "1">:$num_kv_splits,
    OptionalAttr<Attn_BackendAttr>:$backend
  );
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $q `,` $kv_cache `,` $block_table `,` $seq_lens
    (`k_scale` `(` $k_scale^ `:` type($k_scale) `)`)?
    `outs` `(` $out_init `,` $lse_init `)`
    `kv_lora_rank` `(` $kv_lora_rank `)` `scale` `(` $scale `)`
    (`num_kv_splits` `(` $num_kv_splits^ `)`)?
    (`backend` `(` $backend^ `)`)?
    attr-dict `:` type($q) `,` type($kv_cache) `,` type($block_table) `,`
    type($seq_lens) `,` type($out_init) `,` type($lse_init)
    (`->` type($results)^)?
  }];
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable();
  }];
}

//===----------------------------------------------------------------------===//
// attn.merge_states
//===----------------------------------------------------------------------===//

def Attn_MergeStatesOp : Attn_DpsOp<"merge_states"> {
  let summary = "Merges two partial attention states";
  let description = [{
    Given the attention outputs and log-sum-exps of the same queries over two
    disjoint key sets, computes the attention over their union:
    lse = log(exp(lse_a) + exp(lse_b)) and
    out = out_a * exp(lse_a - lse) + out_b * exp(lse_b - lse), evaluated
    relative to max(lse_a, lse_b). Cascade attention and split-KV decode
    reduce with it. A side whose lse is -inf or +inf is empty and
    contributes nothing; both empty gives out = 0 and lse = -inf.

    Shapes: `out_a`, `out_b`, `out` [T, H, D]; `lse_a`, `lse_b`, `lse`
    [T, H] f32.

    Example:

    ```mlir
    %o, %l = attn.merge_states %oa, %la, %ob, %lb outs(%o0, %l0)
        : tensor<?x32x128xf16>, tensor<?x32xf32>, tensor<?x32x128xf16>,
          tensor<?x32xf32>, tensor<?x32x128xf16>, tensor<?x32xf32>
        -> tensor<?x32x128xf16>, tensor<?x32xf32>
    ```
  }];
  let arguments = (ins
    Attn_Shaped:$out_a,
    Attn_Shaped:$lse_a,
    Attn_Shaped:$out_b,
    Attn_Shaped:$lse_b,
    Attn_Shaped:$out_init,
    Attn_Shaped:$lse_init
  );
  let results = (outs Variadic<AnyRankedTensor>:$results);
  let assemblyFormat = [{
    $out_a `,` $lse_a `,` $out_b `,` $lse_b
    `outs` `(` $out_init `,` $lse_init `)`
    attr-dict `:` type($out_a) `,` type($lse_a) `,` type($out_b) `,`
    type($lse_b) `,` type($out_init) `,` type($lse_init)
    (`->` type($results)^)?
  }];
  let extraClassDeclaration = [{
    ::mlir::MutableOperandRange getDpsInitsMutable();
  }];
}

#endif // ATTN_OPS_TD
