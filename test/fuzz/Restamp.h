//===- Restamp.h - A manifest's hash, recomputed as an editor would -*- C++ -*-//
//
// The manifest hash detects accidents, not edits: a fuzz input whose
// "manifest_hash" is "restamp" gets its true hash, so that mutations reach
// the checks behind it (the bundle, plan and signature targets).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TEST_FUZZ_RESTAMP_H
#define ATTN_TEST_FUZZ_RESTAMP_H

#include "runtime/bundle/Bundle.h"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace attn::fuzz {

/// The manifest `text` laid out as the writer does, with its
/// "manifest_hash" recomputed (runtime::restampManifest), or "" when it
/// does not ask for that.
inline std::string restamp(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr,
                                           /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("manifest_hash") ||
      j["manifest_hash"] != "restamp")
    return "";
  return runtime::restampManifest(text);
}

} // namespace attn::fuzz

#endif // ATTN_TEST_FUZZ_RESTAMP_H
