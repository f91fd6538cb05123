//===- Restamp.h - A manifest's hash, recomputed as an editor would -*- C++ -*-//
//
// The manifest hash detects accidents, not edits: a fuzz input whose
// "manifest_hash" is "restamp" gets its true hash, so that mutations reach
// the checks behind it (the bundle, plan and signature targets).
//
//===----------------------------------------------------------------------===//
#ifndef ATTN_TEST_FUZZ_RESTAMP_H
#define ATTN_TEST_FUZZ_RESTAMP_H

#include "runtime/bundle/BundleSignature.h"

#include <nlohmann/json.hpp>

#include <string>
#include <string_view>

namespace attn::fuzz {

/// The manifest `text` with its "manifest_hash" recomputed (the
/// contentHash of the manifest without it and "signature", as
/// nlohmann::json dumps it compactly), or "" when it does not ask for that.
inline std::string restamp(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr,
                                           /*allow_exceptions=*/false);
  if (!j.is_object() || !j.contains("manifest_hash") ||
      j["manifest_hash"] != "restamp")
    return "";
  j.erase("manifest_hash");
  nlohmann::json hashed = j;
  hashed.erase("signature");
  j["manifest_hash"] = runtime::contentHash(hashed.dump());
  return j.dump(1);
}

} // namespace attn::fuzz

#endif // ATTN_TEST_FUZZ_RESTAMP_H
