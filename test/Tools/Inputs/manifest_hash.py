"""A bundle manifest's hashes as attn-compile computes them, for tests that
edit a manifest as a deliberate editor would: FNV-1a 64 of content, and
the manifest's own hash over the manifest without that field, dumped
compactly with sorted keys (nlohmann::json's dump())."""
import json


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for byte in data:
        h = ((h ^ byte) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return "%016x" % h


def digest(manifest):
    rest = {k: v for k, v in manifest.items() if k != "manifest_hash"}
    text = json.dumps(rest, separators=(",", ":"), sort_keys=True,
                      ensure_ascii=False)
    return fnv1a64(text.encode())
