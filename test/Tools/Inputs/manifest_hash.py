"""A bundle manifest's hashes as attn-compile computes them, for tests that
edit a manifest as a deliberate editor would: BLAKE2b-256 of content
(runtime/bundle/BundleSignature.h's contentHash), and the manifest's own
hash over the manifest without that field and its signature, dumped
compactly with sorted keys (nlohmann::json's dump())."""
import hashlib
import json


def content_hash(data):
    return hashlib.blake2b(data, digest_size=32).hexdigest()


def digest(manifest):
    rest = {k: v for k, v in manifest.items()
            if k not in ("manifest_hash", "signature")}
    text = json.dumps(rest, separators=(",", ":"), sort_keys=True,
                      ensure_ascii=False)
    return content_hash(text.encode())
