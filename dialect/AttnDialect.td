//===- AttnDialect.td - The attn dialect --------------------*- tablegen -*-===//
//
// Attention operations of an LLM serving step, and the batch metadata they
// read (vLLM v1's CommonAttentionMetadata). The CPU reference interpreter in
// reference/ defines what each op computes; lowering/ turns the ops into
// kernels.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_DIALECT_TD
#define ATTN_DIALECT_TD

include "mlir/IR/OpBase.td"

def Attn_Dialect : Dialect {
  let name = "attn";
  let cppNamespace = "::mlir::attn";
  let summary = "Paged attention, KV-cache updates and their batch metadata";
  let description = [{
    The `attn` dialect describes the attention work of one serving step over a
    paged KV cache: varlen prefill, chunked prefill and decode
    (`attn.paged_attention`), cache writes (`attn.reshape_and_cache`),
    multi-head latent attention decode (`attn.mla_decode`) and the merge of
    two partial attention states (`attn.merge_states`). Batch metadata is
    bundled by `attn.metadata`.

    The ops are in destination-passing style: results on tensors are tied to
    `outs` operands, so one-shot bufferization writes into caller buffers.
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
}

class Attn_Op<string mnemonic, list<Trait> traits = []>
    : Op<Attn_Dialect, mnemonic, traits>;

#endif // ATTN_DIALECT_TD
