//===- Passes.td - attn to Tenstorrent kernel passes -------*- tablegen -*-===//
//
// The Tenstorrent path keeps its own pass file so that it builds and
// registers independently of the GPU lowerings in lowering/Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_LOWERING_ATTNTOTT_PASSES_TD
#define ATTN_LOWERING_ATTNTOTT_PASSES_TD

include "mlir/Pass/PassBase.td"

def ConvertAttnToTTKernel : Pass<"convert-attn-to-ttkernel",
                                 "::mlir::ModuleOp"> {
  let summary = "Lowers attn ops to TT-Metalium reader, compute and writer "
                "kernels";
  let description = [{
    Every `attn.paged_attention`, `attn.reshape_and_cache` and
    `attn.mla_decode` becomes one TT-Metalium program: a nested
    `builtin.module` whose `ttk.program` dictionary describes the host side
    (core grid, circular buffers with ids, page counts, page sizes and data
    formats, the kernels with the RISC each runs on and its compile-time
    arguments, the names of the runtime arguments), holding one `func.func`
    per kernel marked `ttk.thread = "reader" | "compute" | "writer"`.

    Kernel bodies use `scf` and `arith` on i32 for control and address
    arithmetic and `emitc.call_opaque` for the TT-Metalium API, named from
    the one table of lowering/AttnToTT/TTApi.h (whose operand and template
    argument counts are checked when attn compiles), so upstream's
    arith/scf/func to EmitC conversions and the C++ emitter turn them into
    kernel sources for the pinned SDK (see `--attn-to-ttmetal` and
    devices/tt/sdk/README.md). The compute kernel emits the format reconfigurations
    and op inits each tile operation needs (ComputeBuilder.h).

    Paged attention: a work unit is up to 32 query rows of one request and
    kv head, a row being (query token, head of the group) so that a decode
    packs a GQA group into one tile. The reader stages query rows, reads the
    block table in aligned chunks, the key and value tiles of each 32-key
    tile (see devices/tt/AttentionOps.h for the tiled cache
    layout), and builds an additive mask tile (causal, window, sequence end)
    and an ALiBi bias tile; the compute kernel runs the online softmax on
    tiles; the writer stores output rows and stages lse values. Every NOC
    transfer pairs addresses congruent modulo the architecture's alignment.
    The host functions that held the ops are removed: the program
    descriptions replace them.

    Static head counts, head sizes (multiples of 32) and block sizes that
    divide 32 or are multiples of 32 are required, in bf16, f16 or f32.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::emitc::EmitCDialect",
    "::mlir::func::FuncDialect",
    "::mlir::scf::SCFDialect",
  ];
  let options = [
    Option<"gridX", "grid-x", "int64_t", /*default=*/"8",
           "Columns of the core grid work units are spread over">,
    Option<"gridY", "grid-y", "int64_t", /*default=*/"8",
           "Rows of the core grid work units are spread over">,
    Option<"arch", "arch", "std::string", /*default=*/"\"wormhole_b0\"",
           "TT architecture the kernels are built for (wormhole_b0 or "
           "blackhole): its NOC alignment shapes the transfers and page "
           "strides">,
  ];
}

#endif // ATTN_LOWERING_ATTNTOTT_PASSES_TD
