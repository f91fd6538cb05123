//===- CGSupport.cpp - How far attention metadata replays in a graph ------===//

#include "core/CGSupport.h"

namespace attn {

std::string_view toString(AttentionCGSupport support) {
  switch (support) {
  case AttentionCGSupport::ALWAYS:
    return "ALWAYS";
  case AttentionCGSupport::UNIFORM_BATCH:
    return "UNIFORM_BATCH";
  case AttentionCGSupport::UNIFORM_SINGLE_TOKEN_DECODE:
    return "UNIFORM_SINGLE_TOKEN_DECODE";
  case AttentionCGSupport::NEVER:
    return "NEVER";
  }
  return "?";
}

} // namespace attn
