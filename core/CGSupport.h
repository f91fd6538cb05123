//===- CGSupport.h - How far attention metadata replays in a graph --------===//
//
// vLLM's AttentionCGSupport: the cudagraph support level of an attention
// backend's metadata builder. The runtime's builders report it; the attn
// dialect's backend attribute records it (dialect/AttnAttrs.td, whose ODS
// enum has these values and is checked against this one in AttnDialect.cpp).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_CORE_CGSUPPORT_H
#define ATTN_CORE_CGSUPPORT_H

#include <string_view>

namespace attn {

/// How far a builder's metadata can be replayed in a captured (CUDA) graph.
/// Cascade attention is never graph-capturable and is not considered here.
enum class AttentionCGSupport {
  /// Always capturable, mixed prefill-decode batches included.
  ALWAYS = 3,
  /// Capturable for batches whose query lengths are all equal (spec-decode
  /// "decodes" of 1 + num_speculative_tokens).
  UNIFORM_BATCH = 2,
  /// Capturable only for batches of query_len == 1 decodes.
  UNIFORM_SINGLE_TOKEN_DECODE = 1,
  /// Never capturable.
  NEVER = 0,
};

/// vLLM's name: "ALWAYS", "UNIFORM_BATCH", ...
std::string_view toString(AttentionCGSupport support);

} // namespace attn

#endif // ATTN_CORE_CGSUPPORT_H
