//===- AttnAttrs.td - attn attributes, enums and types -----*- tablegen -*-===//

#ifndef ATTN_ATTRS_TD
#define ATTN_ATTRS_TD

include "dialect/AttnDialect.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def Attn_KVLayout_NHD : I32EnumAttrCase<"nhd", 0>;
def Attn_KVLayout_HND : I32EnumAttrCase<"hnd", 1>;
def Attn_KVLayout : I32EnumAttr<"KVLayout",
    "KV cache layout: nhd is [num_blocks, 2, block, kv_heads, head], "
    "hnd is [num_blocks, 2, kv_heads, block, head]",
    [Attn_KVLayout_NHD, Attn_KVLayout_HND]> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
}
def Attn_KVLayoutAttr : EnumAttr<Attn_Dialect, Attn_KVLayout, "layout">;

// The cudagraph support levels of vLLM's AttentionCGSupport: the values of
// core/CGSupport.h, whose enum the runtime uses, and its names in lower case.
// ODS generates its own enum for the attribute's parser and printer and cannot
// adopt a C++ enum declared elsewhere, so the two declarations remain;
// AttnDialect.cpp checks that they agree.
def Attn_CGSupport_Never : I32EnumAttrCase<"never", 0>;
def Attn_CGSupport_UniformSingleTokenDecode
    : I32EnumAttrCase<"uniform_single_token_decode", 1>;
def Attn_CGSupport_UniformBatch : I32EnumAttrCase<"uniform_batch", 2>;
def Attn_CGSupport_Always : I32EnumAttrCase<"always", 3>;
def Attn_CGSupport : I32EnumAttr<"CGSupport",
    "cudagraph support level of a backend",
    [Attn_CGSupport_Never, Attn_CGSupport_UniformSingleTokenDecode,
     Attn_CGSupport_UniformBatch, Attn_CGSupport_Always]> {
  let cppNamespace = "::mlir::attn";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// Attributes
//===----------------------------------------------------------------------===//

class Attn_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Attn_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

def Attn_BackendAttr : Attn_Attr<"Backend", "backend"> {
  let summary = "Describes the attention backend a kernel is compiled for";
  let description = [{
    What a runtime needs to register a compiled op as a vLLM-style attention
    backend, and the static rules the backend imposes on the op:

    - `name`: the backend name (`"FLASH_ATTN"`, `"TRITON_MLA"`, ...). The
      names `FLASH_ATTN` and `TRITON_MLA` require block sizes that are a
      multiple of 16, and `TRITON_MLA` is a multi-head latent attention backend
      (one kv head, no sliding window);
    - `cudagraph`: the cudagraph support level;
    - `reorder_batch_threshold`: query length up to which a request counts as
      a decode and is reordered to the front of the batch (absent: the backend
      does not reorder; at most 2^31 - 1, a query length);
    - `layout`: the KV cache layout the backend allocates;
    - `block_size_multiple`: every block size must be a multiple of it;
    - `head_sizes`: the supported head sizes (empty: any).

    Example:

    ```mlir
    #attn.backend<name = "FLASH_ATTN", cudagraph = always,
                  reorder_batch_threshold = 1, layout = nhd,
                  block_size_multiple = 16, head_sizes = [64, 128, 256]>
    ```
  }];
  let parameters = (ins
    StringRefParameter<"backend name">:$name,
    EnumParameter<Attn_CGSupport>:$cudagraph,
    OptionalParameter<"std::optional<int64_t>">:$reorder_batch_threshold,
    EnumParameter<Attn_KVLayout>:$layout,
    "int64_t":$block_size_multiple,
    OptionalArrayRefParameter<"int64_t">:$head_sizes
  );
  let assemblyFormat = [{
    `<` `name` `=` $name `,` `cudagraph` `=` $cudagraph `,`
    (`reorder_batch_threshold` `=` $reorder_batch_threshold^ `,`)?
    `layout` `=` $layout `,` `block_size_multiple` `=` $block_size_multiple
    (`,` `head_sizes` `=` `[` $head_sizes^ `]`)? `>`
  }];
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// True for backends that compute multi-head latent attention.
    bool isMla() const;
    /// True when vLLM requires block sizes of this backend to be a multiple
    /// of 16 (FLASH_ATTN and TRITON_MLA).
    bool requiresBlockMultipleOf16() const;
  }];
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

def Attn_MetadataType : TypeDef<Attn_Dialect, "Metadata"> {
  let mnemonic = "metadata";
  let summary = "Batch metadata of one serving step";
  let description = [{
    The value produced by `attn.metadata`: query_start_loc, seq_lens,
    block_table, an optional slot_mapping, and whether attention is causal.
  }];
}

#endif // ATTN_ATTRS_TD
