"""A bundle manifest's hashes and layout as attn-compile writes them, for
tests that edit a manifest as a deliberate editor would: BLAKE2b-256 of
content (runtime/bundle/BundleSignature.h's contentHash), its URL-safe
base64 spelling in kernel records, and the manifest's own hash over its
text without the manifest_hash and signature lines (runtime/bundle/
Bundle.h), each record on a line of its own, dumped compactly with sorted
keys (nlohmann::json's dump())."""
import base64
import hashlib
import json

TABLES = ("kinds", "bound_shapes", "bounds", "kernels", "plans", "variants")


def content_hash(data):
    return hashlib.blake2b(data, digest_size=32).hexdigest()


def hash_to_base64(hex_hash):
    return base64.urlsafe_b64encode(bytes.fromhex(hex_hash)).decode().rstrip("=")


def hash_from_base64(text):
    return base64.urlsafe_b64decode(text + "=").hex()


def _compact(value):
    return json.dumps(value, separators=(",", ":"), sort_keys=True,
                      ensure_ascii=False)


def _signed_text(manifest):
    text = ('{"format_version": ' + _compact(manifest["format_version"]) +
            ',\n"compiler": ' + _compact(manifest["compiler"]))
    for table in TABLES:
        if table not in manifest:
            continue
        value = manifest[table]
        text += ',\n"%s": ' % table
        if isinstance(value, list):
            text += "[" + "".join(("\n " if i == 0 else ",\n ") + _compact(v)
                                  for i, v in enumerate(value)) + "]"
        else:
            text += _compact(value)
    return text + "}\n"


def digest(manifest):
    return content_hash(_signed_text(manifest).encode())


def manifest_text(manifest):
    """The manifest as attn-compile lays it out, with its true hash."""
    text = _signed_text(manifest)
    lines = '"manifest_hash": "%s",\n' % content_hash(text.encode())
    if "signature" in manifest:
        lines += '"signature": %s,\n' % _compact(manifest["signature"])
    second = text.index("\n", text.index("\n") + 1) + 1
    return text[:second] + lines + text[second:]
